// The RAM store: host memory the GPU can reach, optionally slowed down to an SSD's pace.
// Data moves at submit (a memcpy is cheaper than tracking it); only the completion is
// deferred, to the time the SSD profile says the I/O would have finished.
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <system_error>
#include <vector>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/queue/view_sequences.hpp"
#include "proxy/store_impl.hpp"

namespace agio::proxy {

namespace {

// Copies `bytes` (a multiple of 8) of a write into the store, for the seqlock's writer (host
// only), after it made the stripes odd with a locked compare-and-swap. The source may be only
// dword aligned.
//
// On x86-64, non-temporal stores, then a store fence: a write's data goes to memory without
// first reading the lines it overwrites (a third of the memory traffic of an ordinary copy;
// 1.7-2x the rate of the word-by-word copy below in a 4 KiB and 64 KiB micro-benchmark on
// 2026-11-26). The ordering holds without release stores: x86 does not move a store, non-
// temporal ones included, above a locked instruction (the odd sequence's compare-and-swap),
// and the fence makes every non-temporal store visible before the even sequence is stored.
// Under ThreadSanitizer (whose model has no fences) and elsewhere: release stores, so that a
// reader whose acquire load sees one of the words then sees the odd sequence the writer stored
// before it.
void copy_into_stripes(std::byte* stored, const std::byte* src, std::uint64_t bytes) {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  std::uint64_t i = 0;
  if (reinterpret_cast<std::uintptr_t>(stored) % 16 == 0) {
    for (; i + 16 <= bytes; i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
      _mm_stream_si128(reinterpret_cast<__m128i*>(stored + i), v);
    }
  }
  for (; i < bytes; i += 8) {
    long long w;
    std::memcpy(&w, src + i, 8);
    _mm_stream_si64(reinterpret_cast<long long*>(stored + i), w);
  }
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the compiler keeps the stores above the fence
  _mm_sfence();
#else
  auto* words = reinterpret_cast<std::uint64_t*>(stored);
  for (std::uint64_t i = 0; i < bytes / 8; ++i) {
    std::uint64_t w;
    std::memcpy(&w, src + i * 8, 8);
    std::atomic_ref<std::uint64_t>(words[i]).store(w, std::memory_order_release);
  }
#endif
}

// The SSD as one pipe that every channel of the store shares: an I/O occupies it for
// max(bytes / bandwidth, 1 / iops), starting when both it and the pipe are ready, and
// completes a fixed latency after leaving it. Queueing in the pipe is what makes bandwidth
// and IOPS caps hold across all controller threads together.
class pipe_model {
 public:
  explicit pipe_model(const ssd_profile& profile)
      : timed_(profile.any()),
        read_ns_per_byte_(per_unit_ns(profile.read_gbps)),
        write_ns_per_byte_(per_unit_ns(profile.write_gbps)),
        ns_per_io_(profile.max_iops > 0 ? 1e9 / profile.max_iops : 0),
        read_latency_ns_(to_ns(profile.read_latency_us * 1e3)),
        write_latency_ns_(to_ns(profile.write_latency_us * 1e3)) {}

  // When a transfer of `bytes` submitted at `now` completes; 0 for "already".
  std::uint64_t completion_ns(store_op op, std::uint64_t bytes, std::uint64_t now) {
    if (!timed_ || op == store_op::flush) return 0;
    const bool read = op == store_op::read;
    const double transfer_ns = static_cast<double>(bytes) * (read ? read_ns_per_byte_ : write_ns_per_byte_);
    const std::uint64_t occupancy = to_ns(std::max(transfer_ns, ns_per_io_));
    const std::uint64_t left_pipe = occupancy == 0 ? now : occupy(occupancy, now);
    return left_pipe + (read ? read_latency_ns_ : write_latency_ns_);
  }

 private:
  // 1 GB/s is one byte per nanosecond.
  static double per_unit_ns(double gbps) { return gbps > 0 ? 1.0 / gbps : 0; }
  static std::uint64_t to_ns(double ns) { return static_cast<std::uint64_t>(std::llround(ns)); }

  // Lock-free because eight controller threads may each claim the pipe millions of times a
  // second. The retry loop never waits: an exchange fails only when another I/O got in.
  std::uint64_t occupy(std::uint64_t occupancy, std::uint64_t now) {
    std::uint64_t free_at = free_at_ns_.load(std::memory_order_relaxed);
    for (;;) {
      const std::uint64_t end = std::max(now, free_at) + occupancy;
      if (free_at_ns_.compare_exchange_weak(free_at, end, std::memory_order_relaxed)) return end;
    }
  }

  bool timed_;
  double read_ns_per_byte_;
  double write_ns_per_byte_;
  double ns_per_io_;
  std::uint64_t read_latency_ns_;
  std::uint64_t write_latency_ns_;
  alignas(64) std::atomic<std::uint64_t> free_at_ns_{0};
};

class ram_store final : public store {
 public:
  ram_store(std::uint64_t bytes, store_options options, const host_memory& memory)
      : options_(std::move(options)), memory_(memory), capacity_(bytes), pipe_(options_.profile), faults_(options_) {
    check_fault_in_range(options_, capacity_);
    if (!memory_.allocate || !memory_.release) {
      throw std::invalid_argument("open_store(\"" + options_.uri + "\"): host_memory lacks allocate or release");
    }
    bytes_ = static_cast<std::byte*>(memory_.allocate(capacity_));
    if (bytes_ == nullptr) {
      throw std::system_error(ENOMEM, std::generic_category(),
                              "open_store(\"" + options_.uri + "\"): cannot allocate " + std::to_string(capacity_) +
                                  " bytes of host memory");
    }
    std::memset(bytes_, 0, capacity_);
    // In memory the GPU reaches too: the completion service checks them after its copies.
    const std::uint64_t stripes = queue::stripes_of(0, capacity_).end;
    sequences_ = static_cast<std::uint64_t*>(memory_.allocate(stripes * sizeof(std::uint64_t)));
    if (sequences_ == nullptr) {
      memory_.release(bytes_);
      throw std::system_error(ENOMEM, std::generic_category(),
                              "open_store(\"" + options_.uri + "\"): cannot allocate its stripes' sequences");
    }
    std::memset(sequences_, 0, stripes * sizeof(std::uint64_t));
  }
  ram_store(const ram_store&) = delete;
  ram_store& operator=(const ram_store&) = delete;
  ~ram_store() override {
    memory_.release(sequences_);
    memory_.release(bytes_);
  }

  const std::string& uri() const override { return options_.uri; }
  std::uint64_t capacity_bytes() const override { return capacity_; }
  std::uint32_t lba_bytes() const override { return options_.lba_bytes; }
  std::uint32_t buffer_alignment() const override { return 1; }
  std::byte* host_view() override { return bytes_; }
  std::uint64_t* view_sequences() override { return sequences_; }
  std::unique_ptr<store_channel> open_channel(unsigned depth) override;
  void sync() override {}
  const fault_plan& faults() const { return faults_; }

  // Moves the data (as much of it as the injected fault allows) and returns the result.
  std::int64_t execute(const store_io& io) {
    if (io.op == store_op::flush) return 0;
    if (const std::int64_t error = check_io_bounds(io, capacity_, options_.lba_bytes); error != 0) return error;
    const std::int64_t bytes = faults_.bytes_to_move(io);
    if (bytes <= 0) return bytes;
    if (io.op == store_op::write) {
      if (io.buffer == nullptr) return -EFAULT;
      if (!write_in_place(io.offset, io.buffer, static_cast<std::uint64_t>(bytes))) return -EBUSY;
    } else if (io.buffer != nullptr) {
      if (!read_whole(io.buffer, io.offset, static_cast<std::uint64_t>(bytes))) return -EBUSY;
    }
    return bytes;
  }

  // A failed I/O moved nothing, so the device model has nothing to time and it ends at once.
  std::uint64_t completion_ns(store_op op, std::int64_t result) {
    if (result < 0) return 0;
    return pipe_.completion_ns(op, static_cast<std::uint64_t>(result), now_ns());
  }

 private:
  store_options options_;
  host_memory memory_;  // a copy: the caller's may be gone by the time the store is
  std::uint64_t capacity_;
  // Seqlock writer (view_sequences.hpp): makes the stripes odd, copies, makes them even. It
  // takes its stripes one at a time, lowest first, so that writers of overlapping ranges never
  // wait for each other in a cycle.
  bool write_in_place(std::uint64_t offset, const std::byte* src, std::uint64_t bytes) {
    const queue::stripe_range range = queue::stripes_of(offset, bytes);
    const deadline limit = deadline::after_ns(queue::stripe_wait_ns);
    for (std::uint64_t s = range.first; s < range.end; ++s) {
      std::atomic_ref<std::uint64_t> sequence(sequences_[s]);
      // Acquire pairs with the previous writer's release of the even sequence: its data is
      // written before ours.
      const bool taken = detail::poll_until(
          [&] {
            std::uint64_t even = sequence.load(std::memory_order_relaxed) & ~std::uint64_t{1};
            return sequence.compare_exchange_weak(even, even + 1, std::memory_order_acquire, std::memory_order_relaxed);
          },
          limit);
      if (!taken) {
        // Give back the stripes taken so far, as if empty writes had been made to them.
        for (std::uint64_t t = range.first; t < s; ++t) end_write(t);
        return false;
      }
    }
    copy_into_stripes(bytes_ + offset, src, bytes);
    for (std::uint64_t s = range.first; s < range.end; ++s) end_write(s);
    return true;
  }
  void end_write(std::uint64_t stripe) {
    std::atomic_ref<std::uint64_t> sequence(sequences_[stripe]);
    // Release pairs with the readers' acquire of the even sequence: the data precedes it.
    sequence.store(sequence.load(std::memory_order_relaxed) + 1, std::memory_order_release);
  }

  // Seqlock reader: copies until the stripes held the same even sequences around the copy.
  bool read_whole(std::byte* dst, std::uint64_t offset, std::uint64_t bytes) {
    const queue::stripe_range range = queue::stripes_of(offset, bytes);
    return detail::poll_until(
        [&] {
          const queue::sequence_reading before = queue::read_sequences(sequences_, range, detail::acquire);
          if (before.writing) return false;
          queue::copy_from_stripes(dst, bytes_ + offset, bytes);
          const queue::sequence_reading after = queue::read_sequences(sequences_, range, detail::relaxed);
          return !after.writing && after.sum == before.sum;
        },
        deadline::after_ns(queue::stripe_wait_ns));
  }

  std::byte* bytes_ = nullptr;
  std::uint64_t* sequences_ = nullptr;  // one per 4 KiB stripe
  pipe_model pipe_;
  fault_plan faults_;
};

class ram_channel final : public store_channel {
 public:
  ram_channel(ram_store& owner, unsigned depth) : store_(owner), depth_(depth) { pending_.reserve(depth); }

  bool submit(const store_io& io) override {
    if (in_flight() >= depth_) return false;
    if (store_.faults().hangs(io)) {
      ++hung_;
      return true;
    }
    const std::int64_t result = store_.execute(io);
    pending_.push_back({store_.completion_ns(io.op, result), next_sequence_++, {io.tag, result}});
    std::push_heap(pending_.begin(), pending_.end(), completes_later);
    return true;
  }

  void push() override {}

  std::size_t reap(std::span<store_result> out) override {
    if (pending_.empty()) return 0;
    const std::uint64_t now = now_ns();
    std::size_t reaped = 0;
    while (reaped < out.size() && !pending_.empty() && pending_.front().done_ns <= now) {
      std::pop_heap(pending_.begin(), pending_.end(), completes_later);
      out[reaped++] = pending_.back().result;
      pending_.pop_back();
    }
    return reaped;
  }

  std::size_t in_flight() const override { return pending_.size() + hung_; }

 private:
  struct pending_io {
    std::uint64_t done_ns;
    std::uint64_t sequence;  // breaks ties so that equal times reap in submission order
    store_result result;
  };

  // Min-heap order: reads and writes have different latencies, so completions can overtake
  // one another and a plain FIFO would hold a finished write behind a pending read.
  static bool completes_later(const pending_io& a, const pending_io& b) {
    return a.done_ns != b.done_ns ? a.done_ns > b.done_ns : a.sequence > b.sequence;
  }

  ram_store& store_;
  unsigned depth_;
  std::uint64_t next_sequence_ = 0;
  std::vector<pending_io> pending_;
  std::size_t hung_ = 0;  // I/Os held by an injected hang: never reaped
};

std::unique_ptr<store_channel> ram_store::open_channel(unsigned depth) {
  if (depth == 0) throw std::invalid_argument("open_channel on \"" + options_.uri + "\": depth must be at least 1");
  return std::make_unique<ram_channel>(*this, depth);
}

}  // namespace

std::unique_ptr<store> make_ram_store(std::uint64_t bytes, store_options options, const host_memory& memory) {
  return std::make_unique<ram_store>(bytes, std::move(options), memory);
}

}  // namespace agio::proxy
