#pragma once
// A cache just large enough to hold a range of consecutive blocks whole, for the benchmarks
// that separate the cost of the cache API (everything preloaded: no misses) and of I/O (a
// fresh cache: every block missed once, none evicted).
#include <cstdint>
#include <memory>

#include "agio/cache/software_cache.hpp"
#include "cache/common.hpp"

namespace agio::bench::cache_bench {

// Consecutive blocks fall in consecutive sets, so with sets * ways >= blocks no set is asked
// for more than `ways` of them.
template <class Policy>
std::unique_ptr<software_cache<Policy>> whole_cache(runtime& rt, std::uint64_t blocks) {
  constexpr std::uint32_t ways = 8;
  const std::uint64_t lines = (blocks + ways - 1) / ways * ways;
  return std::make_unique<software_cache<Policy>>(rt, cache_options{lines * block_bytes, block_bytes, ways});
}

}  // namespace agio::bench::cache_bench
