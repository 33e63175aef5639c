#pragma once
// A cache just large enough to hold a range of consecutive blocks whole, for the benchmarks
// that separate the cost of the cache API (everything preloaded: no misses) and of I/O (a
// fresh cache: every block missed once, none evicted).
#include <cstdint>
#include <memory>

#include "agio/runtime/software_cache.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench {

// Consecutive blocks fall in consecutive sets, so with sets * ways >= blocks no set is asked
// for more than `ways` of them.
template <class Policy, class IO = io_handle>
auto whole_cache(runtime& rt, std::uint64_t blocks) {
  using cache_type = software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO>;
  constexpr std::uint32_t ways = 8;
  const std::uint64_t lines = (blocks + ways - 1) / ways * ways;
  return std::make_unique<cache_type>(rt, cache_options{lines * block_bytes, block_bytes, ways});
}

}  // namespace agio::bench
