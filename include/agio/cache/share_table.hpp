#pragma once
// The share table (AGILE §3.4.1): user buffers filled by async_read, registered by source, so
// that a second request for the same source gets the first buffer by reference instead of a
// copy of its own, with a coherence protocol inspired by MOESI that keeps such buffers
// consistent with every other access through the cache.
//
// Chosen at compile time as the cache's third template argument (`share_table`, or the
// default `no_share_table`, with which nothing of this is compiled in); its size is a runtime
// option (cache_options::share_slots). Metadata is a few words per slot, never per block.
//
// An entry is one slot: the source (block_tag(dev, block)), the owner's buffer, a dirty mark per
// 4-byte word of the buffer, and one 64-bit word that holds everything deciding who may use it:
//
//   fill     FREE, UNFILLED (registered, buffer not filled yet), FILLING (a holder is copying
//            the line in), FILLED, FAILED (the fill failed; its status is kept for every holder)
//   shareable  new requests for the source may take a reference
//   modified   a holder wrote to the buffer
//   references the owner and every sharer that has not released yet
//   generation bumped when the slot is freed, so a stale view of the slot never matches it
//
// Read as MOESI (the copies are one buffer shared by pointer, not copies per thread):
//   I  no entry, or FAILED        E  FILLED, clean, the owner alone
//   S  FILLED, clean, sharers     M  FILLED, modified, the owner alone
//   O  FILLED, modified, sharers: the owner is responsible for putting the writes in the cache
// Transitions:
//   miss                I -> UNFILLED (E once filled): the requester is the owner, its buffer
//                       is registered; the cache fill starts, the copy happens at the first
//                       holder's wait()
//   hit                 E/S/M/O (or UNFILLED) -> one more reference (S or O); share_hits counted
//   write_shared        E/S -> M/O: the words written are marked dirty
//   cache-path write    the source's entries stop being shareable ("detached"): new requests
//                       register a fresh buffer filled from the cache; holders keep their snapshot
//   sharer's release    one reference less
//   owner's release     detaches the entry, waits (deadline) until every sharer released, writes
//                       the dirty words into the cache line if modified, frees the slot: the
//                       owner's buffer is its own again when this returns success; once the
//                       runtime is stopping the cache refuses the writes and the release
//                       returns `stopped` (the slot is freed all the same)
// Order of writes to the same words: the latest write wins, whichever path made it. A cache-path
// write (array view put, write_bytes, async_write) or a write_shared clears the dirty marks of
// the words it writes in the source's other buffers, so an older write to a buffer never
// overwrites a newer one when that buffer is propagated. A write to a shared buffer is seen at
// once by the buffer's holders and by the cache path once the owner's release returned.
//
// Locks: one per set of slots, held only to register, detach, clear marks and copy dirty words
// into a line already pinned: never while anyone waits for I/O or for another thread. Every
// wait (fill by another holder, sharers' releases) has a deadline and returns a status. A full
// set, or a set lock not taken by the deadline, makes the read private: the caller's own buffer,
// filled from the cache, written through at once by write_shared.
#include <cstddef>
#include <cstdint>

#include "agio/cache/cache_state.hpp"
#include "agio/cache/line.hpp"
#include "agio/cache/locks.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/copy.hpp"
#include "agio/queue/status.hpp"

namespace agio::cache {

// The default: no table. The cache compiles every hook of the protocol away.
struct no_share_table {
  static constexpr bool enabled = false;
};

enum class share_role : std::uint32_t {
  owner,         // registered its buffer; must release, and may reuse the buffer once that succeeds
  sharer,        // uses the owner's buffer (data()); must release, then stops using it
  private_read,  // the table had no room: its own buffer, as without a table
  released,      // released: the transaction is spent
};

// What async_read returns with a share table. Use data(), which is the owner's buffer for a
// sharer, not the buffer the sharer passed.
struct share_transaction {
  std::uint64_t block = 0;
  std::byte* buffer = nullptr;
  std::uint32_t device = 0;
  std::uint32_t slot = 0;
  std::uint32_t generation = 0;
  std::uint32_t immediate = 0;  // status::pack() when decided at issue
  share_role role = share_role::private_read;
  bool holds_reference = false;  // the owner's is dropped by its first release, even on timeout

  AGIO_HD void* data() const { return buffer; }
};

class share_table {
 public:
  static constexpr bool enabled = true;
  static constexpr std::uint32_t ways = 8;  // slots per set (fewer when the table is smaller)

  // Device memory, laid out by laid_out_in(); zeroed means every slot FREE.
  std::uint64_t* words = nullptr;
  std::uint64_t* tags = nullptr;
  std::uint64_t* buffers = nullptr;      // the owner's buffer, as an address
  std::uint32_t* fill_status = nullptr;  // status::pack() of a failed fill
  std::uint32_t* set_locks = nullptr;
  std::uint32_t* dirty = nullptr;  // marks_per_slot words per slot, one bit per 4 bytes
  std::uint32_t slot_count = 0;
  std::uint32_t set_ways = 0;
  std::uint32_t set_count = 0;
  std::uint32_t marks_per_slot = 0;

  // Device memory for `slots` entries of lines of `line_bytes` (slots rounded down to whole
  // sets), and the table laid out in such memory.
  static std::size_t bytes_for(std::uint32_t slots, std::uint32_t line_bytes) {
    const share_table t = shape(slots, line_bytes);
    return std::size_t{t.slot_count} * (3 * sizeof(std::uint64_t) + (1 + t.marks_per_slot) * sizeof(std::uint32_t)) +
           std::size_t{t.set_count} * sizeof(std::uint32_t);
  }
  static share_table laid_out_in(void* memory, std::uint32_t slots, std::uint32_t line_bytes) {
    share_table t = shape(slots, line_bytes);
    const std::size_t n = t.slot_count;
    t.words = static_cast<std::uint64_t*>(memory);
    t.tags = t.words + n;
    t.buffers = t.tags + n;
    t.fill_status = reinterpret_cast<std::uint32_t*>(t.buffers + n);
    t.set_locks = t.fill_status + n;
    t.dirty = t.set_locks + t.set_count;
    return t;
  }

  // --- Called by cache_handle (cache.hpp) -----------------------------------------------------

  template <class Cache>
  AGIO_HD share_transaction async_read(const Cache& cache, std::uint32_t dev, std::uint64_t block, void* dst) const {
    share_transaction t{block, static_cast<std::byte*>(dst), dev};
    if (dev >= cache.io.device_count) {
      t.immediate = status{outcome::invalid_argument, 0}.pack();
      return t;
    }
    const std::uint64_t tag = block_tag(dev, block);
    if (slot_count != 0 && !take_reference(cache, tag, t)) register_buffer(cache, tag, t);
    // A head start for the copy at wait(), which reports whatever the fill does.
    if (t.role != share_role::sharer) (void)cache.prefetch(dev, block);
    return t;
  }

  template <class Cache>
  AGIO_HD status wait_for(const Cache& cache, const share_transaction& t, deadline limit) const {
    if (t.immediate != 0) return status::unpack(t.immediate);
    if (t.role == share_role::released) return {outcome::invalid_argument, 0};
    if (t.role == share_role::private_read) return fill_buffer(cache, t, limit);
    detail::backoff wait(detail::io_wait_max_sleep_ns);
    for (;;) {
      // Acquire pairs with the filler's release of FILLED / FAILED: the buffer (or status) is in.
      std::uint64_t word = detail::load<scope_t>(words[t.slot], detail::acquire);
      const std::uint64_t fill = word & fill_mask;
      if (fill == share_filled) return {outcome::success, 0};
      if (fill == share_failed) return status::unpack(detail::load<scope_t>(fill_status[t.slot], detail::relaxed));
      if (fill == share_unfilled && detail::compare_exchange<scope_t>(
                                        words[t.slot], word, (word & ~fill_mask) | share_filling, detail::acquire)) {
        return fill_entry(cache, t, limit);
      }
      if (limit.passed()) return {outcome::timeout, 0};
      wait.pause();
    }
  }

  // Records that the holder wrote [offset, offset + bytes) of data() (after a successful wait).
  // Tracked per 4-byte word: a partly written word is propagated whole.
  template <class Cache>
  AGIO_HD status mark_modified(const Cache& cache, const share_transaction& t, std::uint32_t offset,
                               std::uint32_t bytes) const {
    if (!writable(cache, t, offset, bytes)) return {outcome::invalid_argument, 0};
    if (t.role == share_role::private_read) {
      return cache.write_bytes(t.device, t.block, offset, bytes, t.buffer + offset,
                               deadline::after_ns(cache.wait_timeout_ns));
    }
    if (bytes == 0) return {outcome::success, 0};
    // Relaxed: the owner reads marks and data after the holder's release of its reference.
    for_each_mark_word(offset, bytes, [&](std::uint32_t w, std::uint32_t bits) {
      detail::fetch_or<scope_t>(marks(t.slot)[w], bits, detail::relaxed);
    });
    detail::fetch_or<scope_t>(words[t.slot], modified_bit, detail::relaxed);
    return clear_marks(cache, block_tag(t.device, t.block), offset, bytes, t.slot);
  }

  template <class Cache>
  AGIO_HD status write_shared(const Cache& cache, const share_transaction& t, std::uint32_t offset, std::uint32_t bytes,
                              const void* src) const {
    if (!writable(cache, t, offset, bytes)) return {outcome::invalid_argument, 0};
    detail::shared_copy(t.buffer + offset, src, bytes);
    return mark_modified(cache, t, offset, bytes);
  }

  // Drops the caller's reference. A sharer is done at once. The owner then waits until every
  // sharer has released, puts the buffer's dirty words into the cache and frees the slot; on
  // success (or an error other than timeout) the buffer is the owner's again. On timeout the
  // owner calls release_for again with the same transaction to go on waiting.
  template <class Cache>
  AGIO_HD status release_for(const Cache& cache, share_transaction& t, deadline limit) const {
    if (t.role == share_role::private_read || t.role == share_role::released) {
      t.role = share_role::released;
      return {outcome::success, 0};
    }
    std::uint64_t& word_ref = words[t.slot];
    if (t.role == share_role::sharer) {
      // Release pairs with the owner's acquire when it sees no references: our writes come first.
      detail::fetch_add<scope_t>(word_ref, ~(reference_unit - 1), detail::release);
      t.role = share_role::released;
      return {outcome::success, 0};
    }
    if (t.holds_reference) {
      std::uint64_t word = detail::load<scope_t>(word_ref, detail::relaxed);
      while (!detail::compare_exchange<scope_t>(word_ref, word, (word & ~shareable_bit) - reference_unit,
                                                detail::relaxed)) {
      }
      t.holds_reference = false;
    }
    std::uint64_t word = 0;
    const bool alone = detail::poll_until(
        [&] {
          // Acquire pairs with the sharers' release of their references: their writes are in.
          word = detail::load<scope_t>(word_ref, detail::acquire);
          return references_of(word) == 0;
        },
        limit, detail::io_wait_max_sleep_ns);
    if (!alone) return {outcome::timeout, 0};
    status result{outcome::success, 0};
    if ((word & modified_bit) != 0 && (word & fill_mask) == share_filled) {
      result = propagate(cache, t, limit);
      // The writes are still only in the buffer: keep the entry for the owner's next try.
      if (result.result == outcome::timeout || result.result == outcome::deadlock) return result;
    }
    // Release pairs with the acquire of the next registration in this slot: we are done with it.
    detail::store<scope_t>(word_ref, (word & ~std::uint64_t{0xffffffffu}) + generation_unit, detail::release);
    t.role = share_role::released;
    return result;
  }

  // References the transaction's entry has now (0 for a private or spent transaction).
  AGIO_HD std::uint32_t references(const share_transaction& t) const {
    if (t.role != share_role::owner && t.role != share_role::sharer) return 0;
    const std::uint64_t word = detail::load<scope_t>(words[t.slot], detail::relaxed);
    return word >> 32 == t.generation ? references_of(word) : 0;
  }

  // Hooks around a cache-path write of [offset, offset + bytes) of a block: before the data
  // goes in, this write makes older unpropagated writes of the same words void; after it, new
  // requests must not share snapshots taken before it.
  template <class Cache>
  AGIO_HD status before_cache_write(const Cache& cache, std::uint64_t tag, std::uint32_t offset,
                                    std::uint32_t bytes) const {
    if (slot_count == 0 || bytes == 0) return {outcome::success, 0};
    return clear_marks(cache, tag, offset, bytes, no_slot);
  }
  template <class Cache>
  AGIO_HD status after_cache_write(const Cache& cache, std::uint64_t tag) const {
    if (slot_count == 0) return {outcome::success, 0};
    // Under the lock even when no entry is seen: a registration racing with this write either
    // comes first (and is detached here) or fills after it (and sees the write).
    // The write is already in the cache: giving up here would report a write that happened as
    // failed (and leave a shared copy without it). So wait for the lock at least a minute even
    // under a caller's shorter deadline: its critical sections are short, but the lock is not
    // fair, and under 8192 GPU threads on a few hot blocks a waiter was seen to wait more than
    // a second. Only a lock held that long (a deadlock) still fails the write.
    const std::uint32_t set = set_of(tag);
    const lock_name name{lock_kind::share_set, set};
    const status locked = cache.locks.acquire(
        set_locks[set], name,
        deadline::after_ns(cache.wait_timeout_ns > detach_patience_ns ? cache.wait_timeout_ns : detach_patience_ns));
    if (!locked.ok()) return locked;
    detach(tag, set);
    cache.locks.release(set_locks[set], name);
    return locked;
  }

 private:
  static constexpr detail::scope scope_t = detail::scope::device;
  static constexpr std::uint32_t no_slot = ~std::uint32_t{0};
  static constexpr std::uint64_t detach_patience_ns = 60'000'000'000;
  // The entry word (see the top of this file).
  static constexpr std::uint64_t fill_mask = 7;
  static constexpr std::uint64_t share_free = 0, share_unfilled = 1, share_filling = 2, share_filled = 3,
                                 share_failed = 4;
  static constexpr std::uint64_t shareable_bit = 8;
  static constexpr std::uint64_t modified_bit = 16;
  static constexpr std::uint64_t reference_unit = 32;
  static constexpr std::uint32_t max_references = (1u << 27) - 1;
  static constexpr std::uint64_t generation_unit = std::uint64_t{1} << 32;
  static constexpr std::uint32_t bytes_per_mark = 4;

  AGIO_HD static std::uint32_t references_of(std::uint64_t word) {
    return static_cast<std::uint32_t>(word / reference_unit) & max_references;
  }

  static share_table shape(std::uint32_t slots, std::uint32_t line_bytes) {
    share_table t;
    t.set_ways = slots < ways ? slots : ways;
    t.set_count = t.set_ways == 0 ? 0 : slots / t.set_ways;
    t.slot_count = t.set_count * t.set_ways;
    t.marks_per_slot = line_bytes / bytes_per_mark / 32;
    return t;
  }

  AGIO_HD std::uint32_t set_of(std::uint64_t tag) const {
    // Fibonacci hashing spreads consecutive blocks over the sets.
    return static_cast<std::uint32_t>((tag * 0x9e3779b97f4a7c15ull) >> 32) % set_count;
  }
  AGIO_HD std::uint32_t* marks(std::uint32_t slot) const { return dirty + std::size_t{slot} * marks_per_slot; }

  // Calls `mark(word index, bits)` for the mark words covering [offset, offset + bytes), bytes > 0.
  template <class Mark>
  AGIO_HD static void for_each_mark_word(std::uint32_t offset, std::uint32_t bytes, Mark&& mark) {
    const std::uint32_t first = offset / bytes_per_mark;
    const std::uint32_t end = (offset + bytes + bytes_per_mark - 1) / bytes_per_mark;
    for (std::uint32_t w = first / 32; w * 32 < end; ++w) {
      const std::uint32_t lo = first > w * 32 ? first - w * 32 : 0;
      const std::uint32_t hi = end < (w + 1) * 32 ? end - w * 32 : 32;
      mark(w, (hi == 32 ? ~0u : (1u << hi) - 1) & ~((1u << lo) - 1));
    }
  }

  // Whether t may write [offset, offset + bytes) of its buffer: a live transaction whose buffer
  // is filled (a private one must have been waited for: it is the caller's own buffer).
  template <class Cache>
  AGIO_HD bool writable(const Cache& cache, const share_transaction& t, std::uint32_t offset,
                        std::uint32_t bytes) const {
    if (offset > cache.state.line_bytes || bytes > cache.state.line_bytes - offset) return false;
    if (t.immediate != 0 || t.role == share_role::released) return false;
    return t.role == share_role::private_read ||
           (detail::load<scope_t>(words[t.slot], detail::relaxed) & fill_mask) == share_filled;
  }

  AGIO_HD bool matches(std::uint32_t slot, std::uint64_t tag) const {
    return detail::load<scope_t>(tags[slot], detail::relaxed) == tag;
  }

  // Takes a reference to a shareable entry of `tag`, without the lock: the CAS requires the
  // entry still shareable and of the generation whose tag was read.
  template <class Cache>
  AGIO_HD bool take_reference(const Cache& cache, std::uint64_t tag, share_transaction& t) const {
    const std::uint32_t first = set_of(tag) * set_ways;
    for (std::uint32_t slot = first; slot < first + set_ways; ++slot) {
      // Acquire pairs with the registration's release: the tag and buffer read below are its own.
      std::uint64_t word = detail::load<scope_t>(words[slot], detail::acquire);
      while ((word & shareable_bit) != 0 && references_of(word) < max_references && matches(slot, tag)) {
        if (detail::compare_exchange<scope_t>(words[slot], word, word + reference_unit, detail::acquire)) {
          t.role = share_role::sharer;
          t.slot = slot;
          t.generation = static_cast<std::uint32_t>(word >> 32);
          t.buffer = reinterpret_cast<std::byte*>(detail::load<scope_t>(buffers[slot], detail::relaxed));
          t.holds_reference = true;
          count_event(cache.state, &cache_counters::share_hits);
          return true;
        }
      }
    }
    return false;
  }

  // Under the set's lock: shares an entry registered meanwhile, or registers t's buffer in a
  // free slot (t becomes the owner). Leaves t private when the set is full or stays locked.
  template <class Cache>
  AGIO_HD void register_buffer(const Cache& cache, std::uint64_t tag, share_transaction& t) const {
    const std::uint32_t set = set_of(tag);
    const lock_name name{lock_kind::share_set, set};
    if (!cache.locks.acquire(set_locks[set], name, deadline::after_ns(cache.wait_timeout_ns)).ok()) return;
    if (!take_reference(cache, tag, t)) {
      for (std::uint32_t slot = set * set_ways; slot < (set + 1) * set_ways; ++slot) {
        // Acquire pairs with the release that freed the slot: its last owner is done with it.
        const std::uint64_t word = detail::load<scope_t>(words[slot], detail::acquire);
        if ((word & fill_mask) != share_free) continue;
        detail::store<scope_t>(tags[slot], tag, detail::relaxed);
        detail::store<scope_t>(buffers[slot], reinterpret_cast<std::uint64_t>(t.buffer), detail::relaxed);
        for (std::uint32_t w = 0; w < marks_per_slot; ++w) detail::store<scope_t>(marks(slot)[w], 0u, detail::relaxed);
        // Release pairs with the acquire of those who find the entry: tag, buffer, marks first.
        detail::store<scope_t>(words[slot],
                               (word & ~std::uint64_t{0xffffffffu}) | share_unfilled | shareable_bit | reference_unit,
                               detail::release);
        t.role = share_role::owner;
        t.slot = slot;
        t.generation = static_cast<std::uint32_t>(word >> 32);
        t.holds_reference = true;
        break;
      }
    }
    cache.locks.release(set_locks[set], name);
  }

  template <class Cache>
  AGIO_HD status fill_buffer(const Cache& cache, const share_transaction& t, deadline limit) const {
    return cache.read_bytes(t.device, t.block, 0, cache.state.line_bytes, t.buffer, limit);
  }

  // Copies the line into the entry's buffer (the caller moved it to FILLING) and publishes the
  // outcome. A deadline or deadlock is the caller's own: the entry goes back to UNFILLED for the
  // next holder's wait. Any other failure is every holder's, and the entry stops being shared.
  template <class Cache>
  AGIO_HD status fill_entry(const Cache& cache, const share_transaction& t, deadline limit) const {
    const status s = fill_buffer(cache, t, limit);
    const bool retry = s.result == outcome::timeout || s.result == outcome::deadlock;
    if (!s.ok() && !retry) detail::store<scope_t>(fill_status[t.slot], s.pack(), detail::relaxed);
    std::uint64_t word = detail::load<scope_t>(words[t.slot], detail::relaxed);
    for (;;) {
      const std::uint64_t next = s.ok()  ? (word & ~fill_mask) | share_filled
                                 : retry ? (word & ~fill_mask) | share_unfilled
                                         : (word & ~(fill_mask | shareable_bit)) | share_failed;
      // Release pairs with the waiters' acquire: the buffer (or the status) precedes the state.
      if (detail::compare_exchange<scope_t>(words[t.slot], word, next, detail::release)) return s;
    }
  }

  // Stops new requests sharing the entries of `tag` in `set` (its lock held).
  AGIO_HD void detach(std::uint64_t tag, std::uint32_t set) const {
    for (std::uint32_t slot = set * set_ways; slot < (set + 1) * set_ways; ++slot) {
      std::uint64_t word = detail::load<scope_t>(words[slot], detail::relaxed);
      while ((word & shareable_bit) != 0 && matches(slot, tag) &&
             !detail::compare_exchange<scope_t>(words[slot], word, word & ~shareable_bit, detail::relaxed)) {
      }
    }
  }

  // Clears the marks of [offset, offset + bytes) in the entries of `tag` other than `except`.
  // The lock orders this against propagate()'s copy of marked words.
  template <class Cache>
  AGIO_HD status clear_marks(const Cache& cache, std::uint64_t tag, std::uint32_t offset, std::uint32_t bytes,
                             std::uint32_t except) const {
    const std::uint32_t set = set_of(tag);
    const auto holds_marks = [&](std::uint32_t slot) {
      const std::uint64_t word = detail::load<scope_t>(words[slot], detail::relaxed);
      return slot != except && (word & modified_bit) != 0 && (word & fill_mask) != share_free && matches(slot, tag);
    };
    bool any = false;
    for (std::uint32_t slot = set * set_ways; slot < (set + 1) * set_ways; ++slot) any = any || holds_marks(slot);
    if (!any) return {outcome::success, 0};
    const lock_name name{lock_kind::share_set, set};
    const status locked = cache.locks.acquire(set_locks[set], name, deadline::after_ns(cache.wait_timeout_ns));
    if (!locked.ok()) return locked;
    for (std::uint32_t slot = set * set_ways; slot < (set + 1) * set_ways; ++slot) {
      if (!holds_marks(slot)) continue;
      for_each_mark_word(offset, bytes, [&](std::uint32_t w, std::uint32_t bits) {
        detail::fetch_and<scope_t>(marks(slot)[w], ~bits, detail::relaxed);
      });
    }
    cache.locks.release(set_locks[set], name);
    return locked;
  }

  // Writes the buffer's marked words into the block's line (the owner alone holds the entry).
  // The line is pinned first (that may wait for I/O), the set lock taken only for the copy, so
  // a newer write clearing marks either comes before the copy or finds it done.
  template <class Cache>
  AGIO_HD status propagate(const Cache& cache, const share_transaction& t, deadline limit) const {
    std::uint32_t line = 0;
    const status pinned = cache.acquire_for_write(t.device, t.block, line, limit);
    if (!pinned.ok()) return pinned;
    const std::uint64_t tag = block_tag(t.device, t.block);
    const std::uint32_t set = set_of(tag);
    const lock_name name{lock_kind::share_set, set};
    const status locked = cache.locks.acquire(set_locks[set], name, limit);
    if (locked.ok()) {
      auto* to = reinterpret_cast<std::uint32_t*>(cache.line_data(line));
      const auto* from = reinterpret_cast<const std::uint32_t*>(t.buffer);
      for (std::uint32_t w = 0; w < marks_per_slot; ++w) {
        const std::uint32_t bits = detail::load<scope_t>(marks(t.slot)[w], detail::relaxed);
        if (bits == ~0u) {
          detail::shared_copy(to + w * 32, from + w * 32, 32 * bytes_per_mark);
          continue;
        }
        for (std::uint32_t b = 0; b < 32; ++b) {
          if ((bits >> b & 1u) != 0) detail::shared_store(to[w * 32 + b], detail::shared_load(from[w * 32 + b]));
        }
      }
      cache.mark_dirty(line);
      detach(tag, set);
      cache.locks.release(set_locks[set], name);
    }
    cache.unpin(line);
    return locked;
  }
};

}  // namespace agio::cache
