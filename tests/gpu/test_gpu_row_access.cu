// Rows through the cache (cache/row_access.hpp) on the GPU: the CPU suite's scenario
// (row_access_scenario.hpp) with 64 warps, one row a warp, whose lanes copy a row's bytes side
// by side: rows dividing the line, straddling line ends, longer than a line, and tiny ones at odd
// offsets, which take the copy's byte and word paths; the same above a host tier; and three
// such tables in one job.
#include <gtest/gtest.h>

#include "agio/runtime/runtime.hpp"
#include "row_access_scenario.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

class GpuRowAccess : public ::testing::TestWithParam<test::row_case> {};

TEST_P(GpuRowAccess, WarpsGatherAndScatterThroughATinyCache) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::rows_through_a_tiny_cache(rt, GetParam().row_bytes, GetParam().offset, 64 * 32);
  rt.stop();
}
// The same above a host tier of 32 lines in pinned host memory: a warp's gather of a line the
// tier holds is copied up over PCIe by all its lanes (a crew, warp.hpp).
TEST_P(GpuRowAccess, WarpsGatherAndScatterThroughATinyCacheAboveAHostTier) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::rows_through_a_tiny_cache(rt, GetParam().row_bytes, GetParam().offset, 64 * 32, 32);
  rt.stop();
}

// Three tables of different row sizes, each job over all three (row_segments_*_job).
TEST(GpuRowAccessSegments, WarpsGatherAndScatterThreeTablesInOneJob) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::three_tables_in_one_job(rt, 64 * 32);
  rt.stop();
}

INSTANTIATE_TEST_SUITE_P(Sizes, GpuRowAccess, ::testing::ValuesIn(test::row_cases()), test::row_case_name);

}  // namespace
}  // namespace agio
