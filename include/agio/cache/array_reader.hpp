#pragma once
// A thread's reader over one device's elements of an array view, for loops that walk runs of
// neighbouring elements (CSR edge lists, matrix rows). It keeps the line of its last read
// pinned, so a run inside one line costs one cache access instead of one per element: the
// array view pins and unpins for every element (two atomics on the line's state word), which
// made SpMV through it 40-66x slower than plain loads on the H100.
//
//   auto cols = arr.reader(dev);           // device: one per thread
//   std::uint32_t u = 0;
//   for (e = first; e < end; ++e) {
//     if (!cols.get(e, u).ok()) ...;       // the status says why; rt.check() names the cause
//   }                                      // the pin goes when the reader does (or release())
//
// Lanes of a warp that move to the same line together are served by one acquisition made by
// one of them (the array view's warp coalescing), which takes a pin for each lane.
//
// Holding a line: a reader lets go of its line before it asks the cache for another, so one
// reader never holds a line while it waits. A thread with several readers (SpMV's columns and
// values) names its other readers in each get(): if the read must wait for its line (its set
// has none to give, its set's lock is taken, or another access is filling it), they let go of
// theirs first, and pin again on their next read. Threads that wait holding lines can pin
// every line of a set while waiting for room in another, and then nothing moves until their
// waits time out: 32 threads with two readers each stopped an eight-line cache that way
// (tests/host/test_cache.cpp).
// Likewise a lane that waits for its warp's other lanes (kept in step) should release() its
// readers first.
#include <cstdint>

#include "agio/cache/cache.hpp"

namespace agio::cache {

// Elements of T per line of cache `c`: line_bytes / sizeof(T) (a tail too short for one more
// element stays unused).
template <class T>
AGIO_HD std::uint32_t elements_per_line(const cache_state& c) {
  return c.line_bytes / static_cast<std::uint32_t>(sizeof(T));
}

// The block holding element `index` of an array of T laid out from block 0 on. False for an
// index whose byte offset does not fit in 64 bits (past any storage).
template <class T>
AGIO_HD bool block_of_element(const cache_state& c, std::uint64_t index, std::uint64_t& block) {
  if constexpr (512 % sizeof(T) == 0) {
    // Line sizes are multiples of 512 (software_cache checks), so such a T divides them and
    // the element's byte offset over the line size is its block: a multiply and shifts through
    // the cache's own divisor. A divisor of the array's own (elements per line) held in each
    // reader cost the graph kernels 6 registers, BFS's the third block of 256 threads per SM
    // (ptxas, sm_90, 2026-11-23).
    if (index > ~std::uint64_t{0} / sizeof(T)) return false;
    block = c.line_bytes.quotient(index * sizeof(T));
  } else {
    block = index / elements_per_line<T>(c);  // rare element sizes: a 64-bit division
  }
  return true;
}

template <class T, class Policy, class Locks = no_lock_chain, class Shares = no_share_table, class IO = io_handle>
class array_reader {
 public:
  AGIO_HD array_reader(const cache_handle<Policy, Locks, Shares, IO>& cache, std::uint32_t dev)
      : cache_(cache), dev_(dev) {}
  array_reader(const array_reader&) = delete;
  array_reader& operator=(const array_reader&) = delete;
  AGIO_HD ~array_reader() { release(); }

  // Reads element `index` into `out`; on failure `out` is left alone and the reader holds
  // nothing. `holding`: the thread's other readers, which let go of their lines if this read
  // must wait for its own.
  template <class... Holding>
  AGIO_HD status get(std::uint64_t index, T& out, Holding&... holding) {
    // A read inside the held line divides nothing: its offset from the line's first element is
    // checked instead (an index below the line wraps to a large offset). Dividing by the
    // run-time line length on every read made the graph kernels' cache-API overhead 15-22%
    // larger on a uniform graph and 2.3-2.7x on a Kronecker one (H100, 2026-11-22).
    std::uint64_t offset = index - first_;
    if (line_ == no_line || offset >= elements_per_line<T>(cache_.state)) {
      std::uint64_t block = 0;
      if (!block_of_element<T>(cache_.state, index, block)) {
        release();
        return {outcome::invalid_argument, 0};
      }
      const status moved = move_to(block, holding...);
      if (!moved.ok()) return moved;
      offset = index - first_;
    }
    out = detail::shared_load(reinterpret_cast<const T*>(data_)[offset]);
    return {outcome::success, 0};
  }

  // Lets go of the pinned line, if any. Lanes releasing the same line together give their
  // pins back in one atomic.
  AGIO_HD void release() {
    if (line_ == no_line) return;
    const detail::warp::lane_group group = detail::warp::group_by(line_, cache_.cache_id());
    detail::warp::sync(group);  // the group's reads of the line come before its unpin
    if (detail::warp::leads(group)) cache_.unpin(line_, detail::warp::count(group.mask));
    line_ = no_line;
  }

 private:
  using cache_type = cache_handle<Policy, Locks, Shares, IO>;

  template <class... Holding>
  AGIO_HD status move_to(std::uint64_t block, Holding&... holding) {
    release();
    // Before the lanes group by tag: a device past the attached ones would alias another's tags
    // (block_tag keeps 8 bits of the device), and its lanes would share that device's line.
    if (dev_ >= cache_.io.device_count) return {outcome::invalid_argument, 0};
    const deadline limit = deadline::after_ns(cache_.wait_timeout_ns);
    if constexpr (sizeof...(Holding) != 0) {
      // First without waiting; if the line cannot be had at once, every lane of the group lets
      // go of its other readers' lines, then asks again and waits.
      const status tried = acquire(block, limit, cache_type::on_contention::give_up);
      if (tried.result != outcome::pending) return tried;
      (holding.release(), ...);
    }
    return acquire(block, limit, cache_type::on_contention::wait);
  }

  // Pins the line of `block` for this lane: the lanes of the warp asking for the same block
  // together are served by one acquisition, made by one of them.
  AGIO_HD status acquire(std::uint64_t block, deadline limit, typename cache_type::on_contention contention) {
    std::uint32_t line = no_line;
    status result{outcome::pending, 0};
    const detail::warp::lane_group group = cache_.coalesced_until(
        block_tag(dev_, block), limit,
        [&](const detail::warp::lane_group& crew) {
          result = cache_.acquire_line(dev_, block, line, limit, crew, contention);
          // Every lane of the group holds a pin of its own, given back whenever it moves on.
          const std::uint32_t lanes = detail::warp::count(crew.mask);
          if (result.ok() && lanes != 1) cache_.add_pins(line, lanes - 1);
        },
        result);
    // A failed (or given up) group holds nothing, and its lanes may since have gone on in other
    // groups: none of them may join the group's shuffle and barrier below.
    if (!result.ok()) return result;
    line = detail::warp::from_leader(group, line);
    // The leader's pin acquired the line for the group; the barrier orders the other lanes'
    // reads after it (a shuffle orders no memory), at no cost beyond the shuffle's convergence.
    detail::warp::sync(group);
    line_ = line;
    first_ = block * elements_per_line<T>(cache_.state);
    data_ = cache_.line_data(line);
    return result;
  }

  cache_type cache_;
  std::uint32_t dev_;
  std::uint32_t line_ = no_line;
  std::uint64_t first_ = 0;  // the element index of the held line's first element
  const std::byte* data_ = nullptr;
};

}  // namespace agio::cache
