// The GPU suite's cache against its shadow model (gpu_shadow.hpp), without a share table.
#include <gtest/gtest.h>

#include "gpu_shadow.hpp"

namespace agio {
namespace {

using test::gpu_cache_shadow;

// 1024 threads × 1024 operations over 2064 blocks through 64 lines.
TEST(GpuCacheShadow, MillionOperations) { gpu_cache_shadow({1024, 1024, 16, 2}, 64, 8, false); }
// The same with faults: 4096 threads × 256 operations × 2 rounds × 4 phases.
TEST(GpuCacheShadowFaults, EveryFaultKind) { gpu_cache_shadow({4096, 256, 16, 2}, 256, 8, true, 4); }
// Short runs of the same, for compute-sanitizer (scripts/gpu-sanitize.sh skips the long ones).
TEST(GpuCacheShadow, ShortRunMatchesTheModel) { gpu_cache_shadow({256, 32, 16, 2}, 16, 4, false); }
TEST(GpuCacheShadowFaults, ShortRunWithFaults) { gpu_cache_shadow({256, 32, 16, 2}, 16, 4, true, 2); }

}  // namespace
}  // namespace agio
