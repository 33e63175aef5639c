// The GPU suite's cache against its shadow model (gpu_shadow.hpp) above a host tier that takes
// the clean lines the GPU cache evicts (cache::admit_on_eviction: a victim cache): the evicting
// GPU threads copy them down over PCIe. The runs' kernels are compiled apart
// (harness/shadow_runs.hpp).
#include <gtest/gtest.h>

#include "agio/cache/host_tier.hpp"
#include "gpu_shadow.hpp"

namespace agio {
namespace {

using test::gpu_cache_shadow;

// 1024 threads × 1024 operations over 2064 blocks through 64 lines above 512 in host memory.
TEST(GpuCacheShadowHostTierDemotion, MillionOperations) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_on_eviction>({1024, 1024, 16, 2}, 64, 8, false, 1, 512);
}
// With faults: 4096 threads × 256 operations × 2 rounds × 4 phases.
TEST(GpuCacheShadowHostTierDemotionFaults, EveryFaultKind) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_on_eviction>({4096, 256, 16, 2}, 256, 8, true, 4, 1024);
}
// A short run of the same, for compute-sanitizer.
TEST(GpuCacheShadowHostTierDemotionFaults, ShortRunWithFaults) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_on_eviction>({256, 32, 16, 2}, 16, 4, true, 2, 64);
}

}  // namespace
}  // namespace agio
