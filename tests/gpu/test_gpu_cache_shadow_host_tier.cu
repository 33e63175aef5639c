// The GPU suite's cache against its shadow model (gpu_shadow.hpp) above a host tier in pinned
// host memory (cache/host_tier.hpp): GPU threads copy the tier's lines over PCIe, the GPU
// cache's write-backs go into the tier and the tier's to storage. The runs' kernels are compiled
// apart (harness/shadow_runs.hpp).
#include <gtest/gtest.h>

#include "agio/cache/host_tier.hpp"
#include "gpu_shadow.hpp"

namespace agio {
namespace {

using test::gpu_cache_shadow;

// 1024 threads × 1024 operations over 2064 blocks through 64 lines above 512 in host memory.
TEST(GpuCacheShadowHostTier, MillionOperations) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_always>({1024, 1024, 16, 2}, 64, 8, false, 1, 512);
}
// With faults, admitting blocks on reuse: 4096 threads × 256 operations × 2 rounds × 4 phases.
TEST(GpuCacheShadowHostTierFaults, EveryFaultKind) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_on_reuse>({4096, 256, 16, 2}, 256, 8, true, 4, 1024);
}
// Short runs of the same, for compute-sanitizer.
TEST(GpuCacheShadowHostTier, ShortRunMatchesTheModel) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_always>({256, 32, 16, 2}, 16, 4, false, 1, 64);
}
TEST(GpuCacheShadowHostTierFaults, ShortRunWithFaults) {
  gpu_cache_shadow<cache::no_share_table, cache::admit_on_reuse>({256, 32, 16, 2}, 16, 4, true, 2, 64);
}

}  // namespace
}  // namespace agio
