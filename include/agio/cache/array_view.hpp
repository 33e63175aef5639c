#pragma once
// The array view (AGILE §3.1, Listing 1 method 3): storage seen as arr[dev][i], elements of
// type T, read and written synchronously through the cache. Two-level coalescing: lanes of a
// warp that touch the same line are served by one cache access made by one of them (warp
// first, with match/shuffle), and the cache then merges what different warps ask for.
//
//   auto arr = cache.array<float>();     // host: software_cache::array
//   float x = arr[dev][i];                // device: read (T{} on failure; rt.check() says why)
//   arr.store(dev, i, x + 1);             // device: write (the line becomes MODIFIED)
//   auto r = arr.reader(dev);             // device: a reader for runs of elements, pinning
//                                         // once per line (array_reader.hpp)
#include <cstdint>

#include "agio/cache/array_reader.hpp"
#include "agio/cache/cache.hpp"

namespace agio::cache {

template <class T, class Policy, class Locks = no_lock_chain, class Shares = no_share_table, class IO = io_handle>
class array_view {
 public:
  cache_handle<Policy, Locks, Shares, IO> cache;

  AGIO_HD std::uint64_t size(std::uint32_t dev) const { return cache.blocks(dev) * elements_per_line<T>(cache.state); }

  // Reads element `index` of device `dev` into `out`.
  AGIO_HD status get(std::uint32_t dev, std::uint64_t index, T& out) const {
    return access(
        dev, index, [&](T* element) { out = detail::shared_load(*element); }, false);
  }
  // Writes element `index` of device `dev`.
  AGIO_HD status put(std::uint32_t dev, std::uint64_t index, const T& value) const {
    return access(
        dev, index, [&](T* element) { detail::shared_store(*element, value); }, true);
  }

  // A thread's reader of device `dev`'s elements, cheaper than get() for runs of neighbouring
  // elements: it keeps its last line pinned (array_reader.hpp).
  AGIO_HD array_reader<T, Policy, Locks, Shares, IO> reader(std::uint32_t dev) const { return {cache, dev}; }

  class row {
   public:
    // A failed read yields T{}, and its status reaches nobody: use get() where reads may fail.
    AGIO_HD T operator[](std::uint64_t index) const {
      T value{};
      (void)view_.get(dev_, index, value);
      return value;
    }

   private:
    friend class array_view;
    AGIO_HD row(const array_view& view, std::uint32_t dev) : view_(view), dev_(dev) {}
    const array_view& view_;
    std::uint32_t dev_;
  };
  AGIO_HD row operator[](std::uint32_t dev) const { return row(*this, dev); }

 private:
  using handle_type = cache_handle<Policy, Locks, Shares, IO>;

  // A read of a block whose line holds its data: the group's leader pins the line
  // (acquire_present), its lanes read, the leader unpins. False, holding nothing and having read
  // nothing, when no line holds the block's data now (absent, being filled, failed): the full
  // access follows. A hit thus runs none of the miss path's code (the deadline, the retry loop,
  // the crew's status, the warp's gathered counts): the vector mean through a preloaded view
  // took 2.10 ms this way against 2.59, native loads 0.23 (H200; RESULTS.md, where a view's
  // hit goes).
  template <class Touch>
  AGIO_HD bool read_present(std::uint32_t dev, std::uint64_t block, std::uint64_t offset, Touch& touch) const {
    const detail::warp::lane_group group = detail::warp::group_by(block_tag(dev, block), cache.cache_id());
    std::uint32_t line = no_line;
    if (detail::warp::leads(group) && cache.acquire_present(dev, block, line) != handle_type::presence::pinned) {
      line = no_line;
    }
    line = detail::warp::from_leader(group, line);
    if (line == no_line) return false;
    // The leader's pin acquired the line's data; the barrier orders the lanes' reads after it and
    // the second one orders them before the unpin (as in access below).
    detail::warp::sync(group);
    touch(reinterpret_cast<T*>(cache.line_data(line)) + offset);
    detail::warp::sync(group);
    if (detail::warp::leads(group)) {
      cache.unpin(line);
      const std::uint32_t lanes = detail::warp::count(group.mask);
      if (lanes != 1) count_event_alone(cache.state, &cache_counters::coalesced_in_warp, lanes - 1);
    }
    return true;
  }

  template <class Touch>
  AGIO_HD status access(std::uint32_t dev, std::uint64_t index, Touch&& touch, bool writes) const {
    // Before the lanes group by tag: a device past the attached ones would alias another's tags
    // (block_tag keeps 8 bits of the device), and its lanes would share that device's line.
    if (dev >= cache.io.device_count) return {outcome::invalid_argument, 0};
    std::uint64_t block = 0;
    if (!block_of_element<T>(cache.state, index, block)) return {outcome::invalid_argument, 0};
    const std::uint64_t offset = index - block * elements_per_line<T>(cache.state);
    if (!writes && read_present(dev, block, offset, touch)) return {outcome::success, 0};
    const deadline limit = deadline::after_ns(cache.wait_timeout_ns);
    const status cleared =
        writes ? cache.before_cache_write(dev, block, static_cast<std::uint32_t>(offset * sizeof(T)), sizeof(T))
               : status{outcome::success, 0};
    std::uint32_t line = no_line;
    status result{outcome::pending, 0};
    // The group's leader pins the line for all its lanes and lets it go once all are done.
    const detail::warp::lane_group group = cache.coalesced_until(
        block_tag(dev, block), limit,
        [&](const detail::warp::lane_group& crew) {
          result = writes ? cache.acquire_for_write(dev, block, line, limit)
                          : cache.acquire_line(dev, block, line, limit, crew);
        },
        result);
    // A failed group holds nothing, and its lanes may since have gone on in other groups (those
    // that tried again): none of them may join the group's barriers below.
    if (!result.ok()) return cleared.ok() ? result : cleared;
    line = detail::warp::from_leader(group, line);
    // Only the leader's pin acquired the line's data, and a shuffle orders no memory: the
    // barrier does (the fill's release -> the leader's acquire -> the barrier -> the other lanes'
    // accesses). It costs nothing the shuffle has not already paid: the lanes are converged.
    detail::warp::sync(group);
    if (cleared.ok()) touch(reinterpret_cast<T*>(cache.line_data(line)) + offset);
#if defined(__CUDA_ARCH__)
    if (writes) __threadfence();
#endif
    detail::warp::sync(group);
    if (detail::warp::leads(group)) {
      if (writes) cache.mark_dirty(line);
      cache.unpin(line);
      if (writes) result = cache.after_cache_write(dev, block, result);
    }
    // The leader ended the group's writes (after_cache_write keeps share-table readers from
    // older copies of the block): each lane's write succeeded only if that did.
    if (writes) result = status::unpack(detail::warp::from_leader(group, result.pack()));
    return cleared.ok() ? result : cleared;
  }
};

}  // namespace agio::cache
