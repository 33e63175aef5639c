#pragma once
// The shadow-model scenarios of the CPU suite (tests/cache_shadow.hpp) on GPU threads, whose
// warps diverge over the operation kinds: without faults, then with every fault kind, short
// deadlines and stop/restart phases through small and large caches. Shared by the GPU suite's
// shadow files (without and with a share table, above a host tier), which compile apart. With
// `Admission` not void, the cache is above a host tier of `host_tier_lines` that admits so.
#include <cstdint>

#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/share_table.hpp"
#include "cache_shadow.hpp"
#include "harness/shadow_runs.hpp"
#include "test_support.hpp"

namespace agio::test {

template <class Shares = cache::no_share_table, class Admission = void>
void gpu_cache_shadow(const bench::shadow_shape& shape, std::uint32_t lines, std::uint32_t ways, bool faults,
                      std::uint32_t phases = 1, std::uint32_t host_tier_lines = 0) {
  const temp_file file("gpu-shadow", true);
  bench::shadow_config c;
  c.options = gpu_options();
  c.path = file.path();
  c.shape = shape;
  c.cache_lines = {lines, static_cast<std::uint32_t>((shape.blocks() + ways - 1) / ways * ways)};
  c.ways = ways;
  c.share_slots = 256;
  c.queue_pairs = 4;
  c.queue_depth = 64;
  c.verify_threads = 256;
  c.phases = phases;
  c.rounds = faults ? 2 : 1;
  c.host_tier_lines = host_tier_lines;
  if (faults) c = faulty_config(c, 2'000);
  expect_clean(bench::run_shadow<cache::lfu_da, Shares, Admission>(c), faults);
}

}  // namespace agio::test
