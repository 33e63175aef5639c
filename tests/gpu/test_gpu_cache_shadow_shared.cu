// The GPU suite's cache against its shadow model (gpu_shadow.hpp), with a share table: user
// buffers shared by reference beside the cached lines.
#include <gtest/gtest.h>

#include "agio/cache/share_table.hpp"
#include "gpu_shadow.hpp"

namespace agio {
namespace {

using test::gpu_cache_shadow;

TEST(GpuCacheShadow, MillionOperationsWithAShareTable) {
  gpu_cache_shadow<cache::share_table>({1024, 1024, 16, 2}, 64, 8, false);
}
TEST(GpuCacheShadowFaults, EveryFaultKindWithAShareTable) {
  gpu_cache_shadow<cache::share_table>({4096, 256, 16, 2}, 256, 8, true, 4);
}
TEST(GpuCacheShadow, ShortRunWithAShareTable) { gpu_cache_shadow<cache::share_table>({256, 32, 16, 2}, 16, 4, false); }

}  // namespace
}  // namespace agio
