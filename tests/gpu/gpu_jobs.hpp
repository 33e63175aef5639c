#pragma once
// Pieces the GPU suite's cache tests share: the value each element is written with, a counter
// device threads bump, and a job that writes that value into every element of some blocks
// through a cache.
#include <cstdint>

#include "agio/cache/array_view.hpp"
#include "agio/cache/policies/clock.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/platform.hpp"

namespace agio::test {

// The value of element `element` of a device written by pattern_job.
AGIO_HD constexpr std::uint32_t pattern(std::uint64_t element) { return static_cast<std::uint32_t>(element * 7 + 3); }

AGIO_HD inline void bump(std::uint32_t& counter) {
  detail::fetch_add<detail::scope::device>(counter, 1u, detail::relaxed);
}

template <class IO>
using clock_view = cache::array_view<std::uint32_t, cache::clock, cache::no_lock_chain, cache::no_share_table, IO>;

// Writes pattern(i) as element i of blocks [0, blocks) (4 KiB lines of 1024 elements) through
// the cache, counting failed writes.
template <class IO>
struct pattern_job {
  clock_view<IO> arr;
  std::uint64_t blocks;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t i = t; i < blocks * 1024; i += threads) {
      if (!arr.put(0, i, pattern(i)).ok()) bump(*failures);
    }
  }
};

}  // namespace agio::test
