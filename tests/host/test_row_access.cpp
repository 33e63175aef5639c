// Rows gathered and scattered through the cache (cache/row_access.hpp) on CPU threads: rows of
// sizes that do not divide the line, at an unaligned offset, through a cache much smaller than
// the table, by many threads at once, every byte checked against storage (the scenario is
// row_access_scenario.hpp, shared with the GPU suite), also for several tables in one job; and
// how failures are reported.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <algorithm>
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
// The same above a host tier of 32 lines.
TEST_P(RowAccess, ManyThreadsGatherAndScatterThroughATinyCacheAboveAHostTier) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::rows_through_a_tiny_cache(rt, GetParam().row_bytes, GetParam().offset, 24, 32);
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

// Rows of three tables of different row sizes at unaligned offsets, each job over all three,
// 24 threads through one cache of 8 lines (row_access_scenario.hpp).
TEST(RowAccess, ThreeTablesGatherAndScatterInOneJob) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  test::three_tables_in_one_job(rt, 24);
  rt.stop();
}

// An index past the second segment's table is noted at its job-wide position (the first
// segment's length plus its own); every other row of both tables still arrives.
TEST(RowAccess, BadIndexInTheSecondSegmentIsNotedAtItsJobPosition) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=512", 1, 8});
  rt.start();
  const cache::row_table first{0, 3, 100, 50};
  const cache::row_table second{0, 5011, 24, 40};
  const std::vector<std::byte> first_rows = test::random_bytes(50 * 100, 1);
  const std::vector<std::byte> second_rows = test::random_bytes(40 * 24, 2);
  ASSERT_TRUE(test::write_storage(rt, first.offset, first_rows).ok());
  ASSERT_TRUE(test::write_storage(rt, second.offset, second_rows).ok());
  software_cache<cache::clock> cache(rt, {4 * line_bytes, line_bytes, 2});
  std::vector<std::uint64_t> first_picks = {7, 0, 49};
  std::vector<std::uint64_t> second_picks = {39, 1, 40, 5, 1000};  // 40 and 1000 are past 40 rows
  std::vector<std::byte> first_out(first_picks.size() * 100);
  std::vector<std::byte> second_out(second_picks.size() * 24);
  const std::vector<cache::row_segment> segments = {
      {first, first_picks.data(), first_out.data(), 0},
      {second, second_picks.data(), second_out.data(), first_picks.size()},
  };
  const cache::row_failure found = test::run_segments_job<cache::row_segments_gather_job<decltype(cache.device())>>(
      rt, cache.device(), segments, first_picks.size() + second_picks.size(), 4);
  EXPECT_EQ(found.failed, 2u);
  EXPECT_EQ(found.lowest, 3u + 2u);
  EXPECT_EQ(status::unpack(found.status).result, outcome::invalid_argument);
  for (std::size_t p = 0; p < first_picks.size(); ++p) {
    EXPECT_TRUE(std::equal(first_out.begin() + p * 100, first_out.begin() + (p + 1) * 100,
                           first_rows.begin() + first_picks[p] * 100))
        << "first table, position " << p;
  }
  for (std::size_t p : {0, 1, 3}) {
    EXPECT_TRUE(std::equal(second_out.begin() + p * 24, second_out.begin() + (p + 1) * 24,
                           second_rows.begin() + second_picks[p] * 24))
        << "second table, position " << p;
  }
  rt.stop();
}

}  // namespace
}  // namespace agio
