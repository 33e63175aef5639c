#pragma once
// The gathers of agio bench gather, one cache policy at a time: gather_with<Policy> is
// instantiated in a file of its own per policy (gather_<policy>.cpp), so that nvcc compiles the
// policies side by side (all of them in one file took four minutes).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "agio/cache/row_access.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/runtime/software_cache.hpp"

namespace agio::bench {

// What one run gathers, from where, through which cache.
struct gather_config {
  std::uint64_t rows = 0;  // rows gathered per repeat
  std::uint64_t row_bytes = 0;
  std::uint64_t offset = 0;  // byte address of the table's first row
  std::uint64_t table_rows = 0;
  cache_options cache;
  std::string policy;
  std::uint32_t repeats = 0;
  std::uint64_t seed = 0;
};

// One timed gather: wall-clock seconds around the job, and the cache's counts during it.
struct repeat_result {
  double seconds = 0;
  cache_counters counters{};
};

// Memory the gathers use, prepared by the caller: `picks` in host memory and `indices` (the
// same) in device memory, `out` for every gathered row, `failure` for the job's report.
struct gather_buffers {
  const std::vector<std::uint64_t>& picks;
  const std::uint64_t* indices;
  std::byte* out;
  cache::row_failure* failure;
};

// Makes a cache of `Policy` (for the runtime's completion mode), gathers once to warm it, then
// c.repeats times, timed, and checks the last gather's every byte against the store's pattern
// (`verified`).
template <class Policy>
std::vector<repeat_result> gather_with(runtime& rt, const gather_config& c, const gather_buffers& b, bool& verified);

}  // namespace agio::bench
