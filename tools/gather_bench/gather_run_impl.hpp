#pragma once
// gather_with's definition, for the files that instantiate it (one policy each).
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "gather_bench/gather_run.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench {
namespace gather_detail {

// Byte `a` of the store as write_pattern left it.
inline std::byte pattern_byte(std::uint64_t a) {
  const std::uint32_t w = pattern_word(a / 4);
  return static_cast<std::byte>(w >> (8 * (a % 4)));
}

template <class Policy, class IO>
std::vector<repeat_result> run_gathers(runtime& rt, const gather_config& c, const std::uint64_t* indices,
                                       std::byte* out, cache::row_failure* failure, bool& verified,
                                       const std::vector<std::uint64_t>& picks) {
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, c.cache);
  using job = cache::row_gather_job<typename decltype(cache)::handle>;
  const cache::row_table table{0, c.offset, c.row_bytes, c.table_rows};
  const std::uint32_t threads = cache::row_job_threads(c.rows, on_gpu(rt));
  const auto gather = [&] {
    const cache::row_failure none = cache::row_failure::none(c.rows);
    rt.copy_to_device(failure, &none, sizeof none);
    const double seconds = wall_seconds([&] {
      run_job(rt, threads, job{cache.device(), table, indices, c.rows, out, failure});
    });
    cache::row_failure found;
    rt.copy_to_host(&found, failure, sizeof found);
    if (found.failed != 0) {
      rt.check();
      throw std::runtime_error("gather of " + std::to_string(found.failed) + " rows failed, the first at position " +
                               std::to_string(found.lowest) + ": " + to_string(status::unpack(found.status)));
    }
    return seconds;
  };
  gather();  // warm-up: fills the cache
  std::vector<repeat_result> results;
  for (std::uint32_t r = 0; r < c.repeats; ++r) {
    cache.reset_counters();
    const double seconds = gather();
    results.push_back({seconds, cache.counters()});
  }
  // Every gathered byte against the pattern the store holds.
  const std::vector<std::byte> host = to_host(rt, out, c.rows * c.row_bytes);
  verified = true;
  for (std::uint64_t p = 0; p < c.rows && verified; ++p) {
    const std::uint64_t first = c.offset + picks[p] * c.row_bytes;
    for (std::uint64_t b = 0; b < c.row_bytes; ++b) {
      if (host[p * c.row_bytes + b] != pattern_byte(first + b)) {
        std::fprintf(stderr, "row %llu (position %llu) differs from the store at byte %llu\n",
                     static_cast<unsigned long long>(picks[p]), static_cast<unsigned long long>(p),
                     static_cast<unsigned long long>(b));
        verified = false;
        break;
      }
    }
  }
  return results;
}

template <class Policy>
std::vector<repeat_result> run_policy(runtime& rt, const gather_config& c, const std::uint64_t* indices, std::byte* out,
                                      cache::row_failure* failure, bool& verified,
                                      const std::vector<std::uint64_t>& picks) {
  if (rt.completion() == completion_mode::waiters) {
    return run_gathers<Policy, waiting_io_handle>(rt, c, indices, out, failure, verified, picks);
  }
  return run_gathers<Policy, io_handle>(rt, c, indices, out, failure, verified, picks);
}

}  // namespace gather_detail

template <class Policy>
std::vector<repeat_result> gather_with(runtime& rt, const gather_config& c, const gather_buffers& b, bool& verified) {
  return gather_detail::run_policy<Policy>(rt, c, b.indices, b.out, b.failure, verified, b.picks);
}

}  // namespace agio::bench
