#pragma once
// Single-LBA atomicity for a store whose bytes readers copy without a lock: the RAM store
// writes in place, and its reads are copied out of its bytes by the controller, or later by
// the completion service (zero copy), which can take no lock in host memory. Every stripe of
// the store has a sequence word (a seqlock): a writer makes it odd, writes, and makes it even
// again; a reader's copy is whole if the stripes it copied from held the same even sequences
// before and after it. A stripe holds whole LBAs of every supported size, so a whole stripe is
// a whole LBA.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/copy.hpp"
#include "agio/detail/platform.hpp"

#if !defined(__CUDA_ARCH__)
#include <atomic>
#include <cstring>
#endif

namespace agio::queue {

inline constexpr std::uint32_t stripe_shift = 12;  // 4 KiB stripes

// How long a reader or another writer waits for a stripe's writer, which holds it for one
// copy: a wait this long means the writer died in the middle of it.
inline constexpr std::uint64_t stripe_wait_ns = 1'000'000'000;

// The stripes [first, end) that bytes [offset, offset + bytes) of the store touch.
struct stripe_range {
  std::uint64_t first;
  std::uint64_t end;
};
AGIO_HD inline stripe_range stripes_of(std::uint64_t offset, std::uint64_t bytes) {
  return {offset >> stripe_shift, (offset + bytes + (std::uint64_t{1} << stripe_shift) - 1) >> stripe_shift};
}

// The sum of a range's sequences and whether a write was in one of them. Sequences only grow,
// so an unchanged sum means every sequence is unchanged.
struct sequence_reading {
  std::uint64_t sum = 0;
  bool writing = false;
};

// Loads the range's sequences. Before a copy, with acquire, which pairs with the writers'
// release of the even sequence (their data precedes it). After a copy, relaxed, ordered behind
// the copy by copy_from_stripes or copy_fence: a copy that saw any of a write's data then sees
// that write's odd sequence, or a later one, here.
AGIO_HD inline sequence_reading read_sequences(std::uint64_t* words, stripe_range range, detail::memory_order order) {
  sequence_reading r;
  for (std::uint64_t s = range.first; s < range.end; ++s) {
    const std::uint64_t word = detail::load<detail::scope::system>(words[s], order);
    r.sum += word;
    r.writing |= (word & 1u) != 0;
  }
  return r;
}

// Copies `bytes` (a multiple of 8) out of the store by one thread, for the seqlock's reader; a
// look at the sequences after it is ordered after the copy. On the host each word is an acquire
// load, pairing with the writer's release store of it (ThreadSanitizer models no fences; on
// x86-64 the RAM store writes with non-temporal stores, which x86 keeps behind the locked
// instruction that made the sequence odd: store_ram.cpp); on the device, plain loads and
// copy_fence().
AGIO_HD inline void copy_from_stripes(void* dst, const std::byte* stored, std::uint64_t bytes) {
#if defined(__CUDA_ARCH__)
  detail::thread_copy(dst, stored, static_cast<std::uint32_t>(bytes));
#else
  auto* words = reinterpret_cast<std::uint64_t*>(const_cast<std::byte*>(stored));
  for (std::uint64_t i = 0; i < bytes / 8; ++i) {
    const std::uint64_t w = std::atomic_ref<std::uint64_t>(words[i]).load(std::memory_order_acquire);
    std::memcpy(static_cast<std::byte*>(dst) + i * 8, &w, 8);
  }
#endif
}

// Orders a device copy's loads before the following look at the sequences: a system-scope
// acquire fence, pairing with the host writer's release of the odd sequence (the writer's
// release fence behind it, or on the host the release stores of its data).
AGIO_HD inline void copy_fence() {
#if defined(__CUDA_ARCH__)
  cuda::atomic_thread_fence(cuda::std::memory_order_acquire, cuda::thread_scope_system);
#endif
}

// What the controller publishes for a zero-copy read, so that the retirer needs one look at
// the sequences after its copy instead of one before and one after: 0 when the data needs no
// check, else 1 + the sum of the sequences, all even, that the controller saw after the read's
// data was in the store. Odd, so a check is never 0.
AGIO_HD constexpr std::uint64_t check_word(std::uint64_t even_sum) { return even_sum + 1; }
AGIO_HD constexpr bool copy_is_whole(std::uint64_t check, const sequence_reading& after) {
  return !after.writing && after.sum + 1 == check;
}

}  // namespace agio::queue
