// LMB's zero-copy path on the GPU: the controller reads a store's blocks straight into a region
// of pinned host memory, and GPU threads read them there, through the allocating runtime's
// mapping and through a second mapping of the region (the CPU suite runs the same scenario).
#include <gtest/gtest.h>

#include "memory_buffer_scenario.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

TEST(GpuMemoryBuffer, AStoreReadsIntoARegionAndGpuThreadsReadItThere) {
  test::check_a_store_reads_into_a_region(test::gpu_options());
}

}  // namespace
}  // namespace agio
