#pragma once
// The host side of the cache: sizes and allocates it in device memory, hands kernels their
// handle and array views, preloads ranges, writes MODIFIED lines back on flush() and when the
// runtime stops, and reports counters.
//
//   agio::runtime rt; rt.attach("file:/data/emb.bin"); rt.start();
//   agio::software_cache<agio::cache::lfu_da> cache(rt, {.bytes = 1ull << 30});
//   kernel<<<...>>>(cache.device(), cache.array<float>());
//   cache.flush();        // MODIFIED lines reach storage (also done by rt.stop())
//
// The policy, the lock-chain debugger, the share table and the I/O handle type are template
// arguments (compile time); size, line size, associativity and share-table slots are runtime
// options. The handle type must match the runtime's completion mode: `io_handle` (the
// default) takes rt.io(), `waiting_io_handle` takes rt.waiting_io() for a runtime started with
// completion_mode::waiters, whose threads retire fills themselves while they wait. Include
// this header from a .cu file when the runtime uses the GPU: its flush and preload jobs are
// kernels.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/cache/array_view.hpp"
#include "agio/cache/cache.hpp"
#include "agio/cache/host_tier.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/memory_buffer.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"

namespace agio {

// Where a cache's lines live: GPU memory, or pinned host memory the GPU reaches over PCIe (a
// host tier, below a cache in GPU memory: cache/host_tier.hpp). Metadata is in GPU memory
// either way.
enum class cache_memory { device, host };

struct cache_options {
  std::size_t bytes = std::size_t{64} << 20;  // rounded down to whole sets
  std::uint32_t line_bytes = 4096;            // the I/O unit: a multiple of every device's LBA size
  std::uint32_t ways = 8;                     // lines per set, unless the policy fixes it
  std::uint32_t share_slots = 1024;           // share table entries, with Shares = share_table (0: none)
  std::uint32_t write_back_attempts = 2;      // writes flush() issues for a line before it reports failure
  cache_memory memory = cache_memory::device;
  int numa_node = -1;  // with cache_memory::host: the NUMA node its lines are bound to (-1: none)
  // With cache_memory::host: take the lines as a region of this buffer (memory_buffer.hpp), on
  // its node, so that a host tier and the regions kernels and stores share draw on one budget
  // (LMB's memory buffer). It must outlive the cache. nullptr: the runtime's
  // (runtime_options::host_tier_bytes), or where it has none memory of the cache's own.
  memory_buffer* host_memory = nullptr;
};

// How a cache in GPU memory uses the host tier below it.
struct host_tier_options {
  std::uint32_t added_latency_ns = 0;  // added to each access to the tier: emulates CXL memory (LMB: 190 ns)
};

// What software_cache::counters() reports (the device-side counts, read back).
using cache_counters = cache::cache_counters;

// Lines of the cache in each condition that matters at the end of a run (software_cache::audit).
// After every access has finished: live_pins, busy and cleaning are 0; modified is 0 after a
// flush that succeeded; failed counts the lines whose write-back failed (cache.hpp).
struct cache_audit {
  std::uint32_t live_pins = 0;  // lines whose pins are not all orphaned (an access still holds them)
  std::uint32_t busy = 0;
  std::uint32_t cleaning = 0;
  std::uint32_t modified = 0;
  std::uint32_t failed = 0;
};

namespace cache {

// Keeps the first failure of a job (status::pack(), 0 while none).
AGIO_HD inline void record_failure(std::uint32_t* failure, status s) {
  std::uint32_t none = 0;
  detail::compare_exchange<detail::scope::device>(*failure, none, s.pack(), detail::relaxed);
}

// Host jobs over the whole cache, one instance per thread of run_job.
template <class Policy, class Locks, class Shares, class IO>
struct clean_job {
  cache_handle<Policy, Locks, Shares, IO> cache;
  std::uint32_t* failure;      // first status::pack() that was not success
  std::uint32_t* failed_line;  // a line whose write-back failed every attempt (no_line: none)
  std::uint32_t attempts;      // write-backs of a line per flush before its failure is reported
  bool closing;                // the cache was just closed to writes: let writers that got in finish
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const deadline limit = deadline::after_ns(cache.wait_timeout_ns);
    const auto retire = [&] {
      for (std::uint32_t d = 0; d < cache.io.device_count; ++d) cache.io.help_retire(d);
    };
    if (closing) {
      // One line after another: a line seen quiet once stays free of admitted writers.
      for (std::uint32_t line = t; line < cache.state.line_count; line += threads) {
        const bool quiet = detail::poll_until(
            [&] {
              if (cache.quiet(line)) return true;
              retire();
              return false;
            },
            limit, 8'192);
        if (!quiet) return record_failure(failure, {outcome::timeout, 0});
      }
    }
    for (std::uint32_t attempt = 1;; ++attempt) {
      // FAILED lines get one write per attempt; MODIFIED ones whenever no access holds them.
      status started = cache.clean(t, threads, true);
      const bool done = detail::poll_until(
          [&] {
            if (!started.ok() || cache.clean_done(t, threads)) return true;
            started = cache.clean(t, threads, false);
            retire();
            return false;
          },
          limit, 8'192);
      if (!started.ok()) return record_failure(failure, started);
      if (!done) return record_failure(failure, {outcome::timeout, 0});
      status failed{outcome::success, 0};
      const std::uint32_t line = cache.first_failed(t, threads, failed);
      if (line == no_line) return;
      if (attempt >= attempts) {
        std::uint32_t none = no_line;
        detail::compare_exchange<detail::scope::device>(*failed_line, none, line, detail::relaxed);
        return record_failure(failure, failed);
      }
    }
  }
};

// Closes the cache to writes (one thread).
template <class Policy, class Locks, class Shares, class IO>
struct close_job {
  cache_handle<Policy, Locks, Shares, IO> cache;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const { cache.close_to_writes(); }
};

template <class Policy, class Locks, class Shares, class IO>
struct preload_job {
  cache_handle<Policy, Locks, Shares, IO> cache;
  std::uint32_t dev;
  std::uint64_t first;
  std::uint64_t count;
  std::uint32_t* failure;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t b = t; b < count; b += threads) {
      std::uint32_t line = no_line;
      const status s = cache.acquire_line(dev, first + b, line, deadline::after_ns(cache.wait_timeout_ns));
      if (s.ok()) {
        cache.unpin(line);
      } else {
        std::uint32_t none = 0;
        detail::compare_exchange<detail::scope::device>(*failure, none, s.pack(), detail::relaxed);
      }
    }
  }
};

// Makes device `dev`'s acknowledged writes durable (one thread per device).
template <class IO>
struct flush_devices_job {
  IO io;
  std::uint32_t* failure;
  AGIO_HD void operator()(std::uint32_t dev, std::uint32_t) const {
    const status s = io.wait(io.async_flush(dev));
    std::uint32_t none = 0;
    if (!s.ok()) detail::compare_exchange<detail::scope::device>(*failure, none, s.pack(), detail::relaxed);
  }
};

// True for the I/O handle of a cache above a host tier (host_tier.hpp).
template <class IO>
inline constexpr bool is_tiered = requires {
  typename IO::tier_handle;
};

}  // namespace cache

template <class Policy, class Locks = cache::no_lock_chain, class Shares = cache::no_share_table, class IO = io_handle>
class software_cache {
 public:
  using handle = cache::cache_handle<Policy, Locks, Shares, IO>;

  // Needs a started runtime whose completion mode matches IO (else std::logic_error). Every
  // device's LBA size must divide the line size.
  software_cache(runtime& rt, cache_options options = {}) requires(!cache::is_tiered<IO>) : rt_(rt) {
    lay_out(options);
  }

  // A cache above a host tier: IO is cache::tiered_io<TierPolicy, Admission, I> and `tier` a
  // cache of the same runtime, line size and I (made with cache_options::memory = host), which
  // must outlive this one. Fills and write-backs of this cache go through the tier; flush()
  // writes this cache's lines into the tier and then the tier's to storage.
  template <class Tier>
  software_cache(runtime& rt, Tier& tier, cache_options options = {},
                 host_tier_options tier_options = {}) requires(cache::is_tiered<IO>)
      : rt_(rt), flush_below_([&tier] { tier.flush(); }) {
    if (tier.line_bytes() != options.line_bytes) {
      throw std::invalid_argument("agio: a host tier's lines (" + std::to_string(tier.line_bytes()) +
                                  " bytes) must be the size of the cache's above it (" +
                                  std::to_string(options.line_bytes) + ")");
    }
    lay_out(options);
    handle_.io.tier = tier.device();
    handle_.io.added_latency_ns = tier_options.added_latency_ns;
    using admission = typename IO::admission_policy;
    const std::uint64_t words = admission::state_words(tier.line_count());
    if (words != 0) {
      auto* state = static_cast<std::uint64_t*>(take(words * sizeof(std::uint64_t)));
      const std::vector<std::uint64_t> none(words, cache::no_tag);
      rt_.copy_to_device(state, none.data(), words * sizeof(std::uint64_t));
      handle_.io.admission.uses(state, words);
    }
  }

 private:
  void lay_out(const cache_options& options) {
    runtime& rt = rt_;
    const auto devices = rt.devices();
    if (options.line_bytes == 0 || options.line_bytes % 512 != 0) {
      throw std::invalid_argument("agio: cache line size must be a multiple of 512 bytes");
    }
    for (const auto& d : devices) {
      if (options.line_bytes % d.lba_bytes != 0) {
        throw std::invalid_argument("agio: cache line size " + std::to_string(options.line_bytes) +
                                    " is not a multiple of the LBA size of " + d.uri);
      }
    }
    const std::uint32_t ways = Policy::fixed_ways != 0 ? Policy::fixed_ways : std::max<std::uint32_t>(1, options.ways);
    const std::uint64_t sets = options.bytes / options.line_bytes / ways;
    if (sets == 0 || sets * ways > 0x7fffffffu) {
      throw std::invalid_argument("agio: cache of " + std::to_string(options.bytes) + " bytes holds no whole set of " +
                                  std::to_string(ways) + " lines of " + std::to_string(options.line_bytes) +
                                  " bytes (or too many lines)");
    }
    cache::cache_state& c = handle_.state;
    c.line_bytes = options.line_bytes;
    c.ways = ways;
    c.set_count = static_cast<std::uint32_t>(sets);
    c.line_count = static_cast<std::uint32_t>(sets * ways);
    const std::size_t lines = c.line_count;
    c.data = static_cast<std::byte*>(options.memory == cache_memory::host ? take_host(lines * c.line_bytes, options)
                                                                          : take(lines * c.line_bytes));
    c.words = static_cast<std::uint32_t*>(take(lines * sizeof(std::uint32_t)));
    c.tags = static_cast<std::uint64_t*>(take(lines * sizeof(std::uint64_t)));
    c.fill_status = static_cast<std::uint32_t*>(take(lines * sizeof(std::uint32_t)));
    c.orphan_pins = static_cast<std::uint32_t*>(take(lines * sizeof(std::uint32_t)));
    c.set_locks = static_cast<std::uint32_t*>(take(std::size_t{c.set_count} * sizeof(std::uint32_t)));
    c.set_turns = static_cast<std::uint64_t*>(take(std::size_t{c.set_count} * sizeof(std::uint64_t)));
    c.counters = static_cast<cache::cache_counters*>(take(cache::counter_stripes * sizeof(cache::cache_counters)));
    const std::size_t policy_bytes = Policy::state_bytes(c.line_count, c.set_count);
    c.policy_state = policy_bytes != 0 ? take(policy_bytes) : nullptr;
    if constexpr (Shares::enabled) {
      if (options.share_slots != 0) {
        const std::size_t share_bytes = Shares::bytes_for(options.share_slots, c.line_bytes);
        handle_.shares = Shares::laid_out_in(take(share_bytes), options.share_slots, c.line_bytes);
      }
    }
    c.closed = static_cast<std::uint32_t*>(take(sizeof(std::uint32_t)));
    failure_ = static_cast<std::uint32_t*>(take(sizeof(std::uint32_t)));
    failed_line_ = static_cast<std::uint32_t*>(take(sizeof(std::uint32_t)));
    write_back_attempts_ = std::max<std::uint32_t>(1, options.write_back_attempts);
    const std::vector<std::uint64_t> empty(lines, cache::no_tag);
    rt_.copy_to_device(c.tags, empty.data(), lines * sizeof(std::uint64_t));
    const std::vector<std::uint64_t> unserved(c.set_count, cache::no_turn);
    rt_.copy_to_device(c.set_turns, unserved.data(), unserved.size() * sizeof(std::uint64_t));
    if constexpr (IO::waiters_retire) {
      store_io(rt.waiting_io());
    } else {
      store_io(rt.io());
    }
    handle_.wait_timeout_ns = handle_.io.wait_timeout_ns;
    // Writes are refused from the start of stop(): one that got in first is written back by
    // this flush; one after it would reach no storage. Above a host tier, the tier's own hook
    // runs next (hooks run last added first) and writes what this one wrote into it.
    stop_hook_ = rt_.add_stop_hook([this] {
      run_job(rt_, 1, cache::close_job<Policy, Locks, Shares, IO>{handle_});
      write_back(true);
    });
  }
  // The runtime's handle of the stores: all of IO, or the part below a host tier.
  template <class Store>
  void store_io(const Store& io) {
    static_cast<Store&>(handle_.io) = io;
  }

 public:
  ~software_cache() {
    rt_.remove_stop_hook(stop_hook_);
    if (rt_.running()) {
      try {
        flush();
      } catch (const std::exception&) {
        // A destructor cannot report; the failed request is still in rt.check().
      }
    }
    for (void* p : allocations_) rt_.free(p);
    if (host_region_.first != nullptr) host_region_.first->free(host_region_.second);
  }
  software_cache(const software_cache&) = delete;
  software_cache& operator=(const software_cache&) = delete;

  // What kernels take (by value).
  const handle& device() const { return handle_; }
  // Elements of T as arr[dev][i], line_bytes / sizeof(T) of them per line.
  template <class T>
  cache::array_view<T, Policy, Locks, Shares, IO> array() const {
    if (sizeof(T) > handle_.state.line_bytes) {
      throw std::invalid_argument("agio: an array element of " + std::to_string(sizeof(T)) +
                                  " bytes does not fit in a cache line of " + std::to_string(handle_.state.line_bytes) +
                                  " bytes");
    }
    return {handle_};
  }

  std::uint32_t line_count() const { return handle_.state.line_count; }
  std::uint32_t line_bytes() const { return handle_.state.line_bytes; }

  // Writes every MODIFIED line back, and every FAILED one (whose last write-back failed) again,
  // and makes them durable on their devices. Run it while no kernel writes through the cache.
  // A line whose write fails cache_options::write_back_attempts times stays FAILED, its data in
  // the cache for the next flush, and flush() throws io_error naming its device, LBA and cause
  // once the other lines are written. Also throws if a write-back did not finish in time.
  void flush() { write_back(false); }

  // Loads blocks [first, first + count) of `dev` into the cache (as far as it holds them).
  void preload(std::uint32_t dev, std::uint64_t first, std::uint64_t count) {
    const std::uint32_t threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, gpu() ? 8192 : 8));
    if (threads == 0) return;
    run_checked(threads, cache::preload_job<Policy, Locks, Shares, IO>{handle_, dev, first, count, failure_},
                "preloading");
  }

  cache_counters counters() const {
    std::vector<cache_counters> stripes(cache::counter_stripes);
    rt_.copy_to_host(stripes.data(), handle_.state.counters, stripes.size() * sizeof(cache_counters));
    cache_counters sum{};
    for (const cache_counters& s : stripes) sum += s;
    return sum;
  }
  // Reads every line's state from device memory. Run it while no kernel uses the cache.
  cache_audit audit() const {
    const cache::cache_state& c = handle_.state;
    std::vector<std::uint32_t> words(c.line_count);
    std::vector<std::uint32_t> orphans(c.line_count);
    rt_.copy_to_host(words.data(), c.words, words.size() * sizeof(std::uint32_t));
    rt_.copy_to_host(orphans.data(), c.orphan_pins, orphans.size() * sizeof(std::uint32_t));
    cache_audit a;
    for (std::size_t line = 0; line < words.size(); ++line) {
      if (cache::pins_of(words[line]) != orphans[line]) ++a.live_pins;
      switch (cache::state_of(words[line])) {
        case cache::line_busy: ++a.busy; break;
        case cache::line_cleaning: ++a.cleaning; break;
        case cache::line_modified: ++a.modified; break;
        case cache::line_failed: ++a.failed; break;
        default: break;
      }
    }
    return a;
  }

  void reset_counters() {
    const std::vector<cache_counters> zero(cache::counter_stripes);
    rt_.copy_to_device(handle_.state.counters, zero.data(), zero.size() * sizeof(cache_counters));
  }

 private:
  bool gpu() const { return rt_.backend() == backend::gpu; }

  void* take(std::size_t bytes) {
    void* p = rt_.allocate_device(bytes);
    allocations_.push_back(p);
    return p;
  }
  void* take_host(std::size_t bytes, const cache_options& options) {
    memory_buffer* buffer = options.host_memory != nullptr ? options.host_memory : rt_.host_tier_memory();
    if (buffer != nullptr) {
      if (&buffer->owner() != &rt_)
        throw std::invalid_argument("agio: a cache's host_memory is a memory buffer of another runtime");
      if (options.numa_node != -1 && options.numa_node != buffer->numa_node()) {
        throw std::invalid_argument("agio: a host tier on NUMA node " + std::to_string(options.numa_node) +
                                    " from a memory buffer bound to node " + std::to_string(buffer->numa_node()));
      }
      const host_region r = buffer->allocate(bytes);
      host_region_ = {buffer, r.id};
      return r.data;
    }
    void* p = rt_.allocate_host(bytes, options.numa_node);
    allocations_.push_back(p);
    return p;
  }

  void write_back(bool closing) {
    const std::uint32_t threads = std::min<std::uint32_t>(line_count(), gpu() ? 4096 : 4);
    const std::uint32_t none = cache::no_line;
    rt_.copy_to_device(failed_line_, &none, sizeof none);
    // The lines written back are made durable even when another line's write failed.
    std::exception_ptr failed;
    try {
      run_checked(
          threads,
          cache::clean_job<Policy, Locks, Shares, IO>{handle_, failure_, failed_line_, write_back_attempts_, closing},
          "writing back modified lines");
    } catch (const io_error&) {
      failed = std::current_exception();
    }
    if (flush_below_) {
      // At stop the tier's own hook writes it back next; a flush writes it back now.
      if (!closing) flush_below_();
    } else {
      const std::uint32_t devices = static_cast<std::uint32_t>(rt_.devices().size());
      run_checked(devices, cache::flush_devices_job<IO>{handle_.io, failure_}, "flushing devices");
    }
    if (failed) std::rethrow_exception(failed);
  }

  template <class Job>
  void run_checked(std::uint32_t threads, const Job& job, const char* what) {
    const std::uint32_t none = 0;
    rt_.copy_to_device(failure_, &none, sizeof none);
    run_job(rt_, threads, job);
    std::uint32_t failed = 0;
    rt_.copy_to_host(&failed, failure_, sizeof failed);
    if (failed == 0) return;
    std::uint32_t line = cache::no_line;
    if constexpr (requires { job.failed_line; }) rt_.copy_to_host(&line, failed_line_, sizeof line);
    if (line != cache::no_line) throw write_back_failure(line, status::unpack(failed));
    rt_.check();  // names device, LBA and cause when storage failed
    throw io_error(std::string("agio: cache ") + what + " failed: " + describe(status::unpack(failed).result));
  }

  // The error for `line`, whose write-back failed every attempt with `failed`.
  io_error write_back_failure(std::uint32_t line, status failed) const {
    std::uint64_t tag = cache::no_tag;
    rt_.copy_to_host(&tag, handle_.state.tags + line, sizeof tag);
    failed_request request;
    request.device = cache::tag_device(tag);
    const device_description d = rt_.devices().at(request.device);
    request.uri = d.uri;
    request.opcode = spec::opcode::write;
    request.blocks = line_bytes() / d.lba_bytes;
    request.lba = cache::tag_block(tag) * request.blocks;
    request.result = failed;
    std::ostringstream msg;
    msg << "agio: device " << request.device << " (" << d.uri << "): cache write-back of " << request.blocks
        << " blocks at LBA " << request.lba << " failed " << write_back_attempts_ << " times: " << to_string(failed)
        << "; its data stays in the cache for the next flush";
    return io_error(msg.str(), std::move(request));
  }

  runtime& rt_;
  std::function<void()> flush_below_;  // a host tier's flush(), below this cache
  handle handle_{};
  std::uint32_t* failure_ = nullptr;
  std::uint32_t* failed_line_ = nullptr;
  std::uint32_t write_back_attempts_ = 1;
  std::vector<void*> allocations_;
  // The lines' region, where a memory buffer gave them (cache_options::host_memory).
  std::pair<memory_buffer*, std::uint64_t> host_region_{nullptr, 0};
  std::uint64_t stop_hook_ = 0;
};

}  // namespace agio
