// Rows gathered and scattered through the cache (cache/row_access.hpp) on CPU threads: rows of
// sizes that do not divide the line, at an unaligned offset, through a cache much smaller than
// the table, by many threads at once, every byte checked against storage (the scenario is
// row_access_scenario.hpp, shared with the GPU suite); and how failures are reported.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "row_access_scenario.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::cpu_options;

constexpr std::uint32_t line_bytes = 4096;

class RowAccess : public ::testing::TestWithParam<test::row_case> {};

// 24 threads through a cache of 8 lines (row_access_scenario.hpp).
TEST_P(RowAccess, ManyThreadsGatherAndScatterThroughATinyCache) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::rows_through_a_tiny_cache(rt, GetParam().row_bytes, GetParam().offset, 24);
  rt.stop();
}

INSTANTIATE_TEST_SUITE_P(Sizes, RowAccess, ::testing::ValuesIn(test::row_cases()), test::row_case_name);

// An index past the table is noted at its position, and the other rows are still copied; a
// failing line's status names the lowest failing position, and the rows after it still read.
TEST(RowAccess, BadIndexAndFailedLineAreNotedAtTheirPositions) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=4096&fault=eio@2", 1, 8});
  rt.start();
  software_cache<cache::clock> cache(rt, {4 * line_bytes, line_bytes, 2});
  const cache::row_table table{0, 0, 1000, 200};
  const std::vector<std::uint64_t> picks = {0, 250, 9, 1, 200, 30};  // 9 touches LBA 2 (bytes 8192..)
  auto* indices = static_cast<std::uint64_t*>(rt.allocate_device(picks.size() * sizeof(std::uint64_t)));
  auto* out = static_cast<std::byte*>(rt.allocate_device(picks.size() * 1000));
  auto* failure = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
  std::memcpy(indices, picks.data(), picks.size() * sizeof(std::uint64_t));
  *failure = cache::row_failure::none(picks.size());
  run_job(rt, 1,
          cache::row_gather_job<decltype(cache.device())>{cache.device(), table, indices, picks.size(), out, failure});
  EXPECT_EQ(failure->failed, 3u);
  EXPECT_EQ(failure->lowest, 1u);
  EXPECT_EQ(status::unpack(failure->status).result, outcome::invalid_argument);
  EXPECT_THROW(rt.check(), io_error);
  rt.free(indices);
  rt.free(out);
  rt.free(failure);
}

}  // namespace
}  // namespace agio
