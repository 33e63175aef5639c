// Rows gathered and scattered through the cache (cache/row_access.hpp) on CPU threads: rows of
// sizes that do not divide the line, at an unaligned offset, through a cache much smaller than
// the table, by many threads at once; every byte checked against storage.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::cpu_options;

constexpr std::uint32_t line_bytes = 4096;

// Storage bytes [offset, offset + bytes) of device 0, read around the cache (whole LBAs).
std::vector<std::byte> storage_bytes(runtime& rt, std::uint64_t offset, std::uint64_t bytes) {
  if (bytes == 0) return {};
  const std::uint64_t first = offset / 512 * 512;
  const std::uint64_t span = (offset + bytes + 511) / 512 * 512 - first;
  auto* buf = static_cast<std::byte*>(rt.allocate_device(span));
  const status s = rt.io().read_bytes(0, first, span, buf);
  EXPECT_TRUE(s.ok()) << describe(s.result);
  std::vector<std::byte> out(buf + (offset - first), buf + (offset - first) + bytes);
  rt.free(buf);
  return out;
}

// Writes `data` at byte `offset` of device 0, keeping the bytes around it (whole LBAs).
status write_storage(runtime& rt, std::uint64_t offset, const std::vector<std::byte>& data) {
  const std::uint64_t first = offset / 512 * 512;
  const std::uint64_t span = (offset + data.size() + 511) / 512 * 512 - first;
  auto* buf = static_cast<std::byte*>(rt.allocate_device(span));
  status s = rt.io().read_bytes(0, first, span, buf);
  if (s.ok()) {
    std::memcpy(buf + (offset - first), data.data(), data.size());
    s = rt.io().write_bytes(0, first, span, buf);
  }
  rt.free(buf);
  return s;
}

struct row_case {
  std::uint64_t row_bytes;
  std::uint64_t offset;
};

class RowAccess : public ::testing::TestWithParam<row_case> {};

// 24 threads gather random rows of a table 16x the cache (rows spanning lines), then scatter new
// values to distinct rows (neighbours in a line written at once), then gather them all again;
// storage holds exactly the new rows after a flush, and the bytes around the table are untouched.
TEST_P(RowAccess, ManyThreadsGatherAndScatterThroughATinyCache) {
  const auto [row_bytes, offset] = GetParam();
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:2M?lba=512", 2, 32});
  rt.start();
  const std::uint64_t rows = (16 * 8 * line_bytes) / row_bytes;
  const cache::row_table table{0, offset, row_bytes, rows};
  const std::vector<std::byte> old_rows = test::random_bytes(rows * row_bytes, 1);
  ASSERT_TRUE(write_storage(rt, offset, old_rows).ok());
  {
    software_cache<cache::clock> cache(rt, {8 * line_bytes, line_bytes, 2});
    const std::uint64_t count = 3000;
    std::vector<std::uint64_t> picks(count);
    std::mt19937_64 random(2);
    for (auto& p : picks) p = random() % rows;
    const std::uint64_t most = std::max(rows, count);
    auto* indices = static_cast<std::uint64_t*>(rt.allocate_device(most * sizeof(std::uint64_t)));
    auto* out = static_cast<std::byte*>(rt.allocate_device(most * row_bytes));
    auto* failure = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
    std::memcpy(indices, picks.data(), count * sizeof(std::uint64_t));
    *failure = cache::row_failure::none(count);
    run_job(rt, 24,
            cache::row_gather_job<decltype(cache.device())>{cache.device(), table, indices, count, out, failure});
    ASSERT_EQ(failure->failed, 0u) << to_string(status::unpack(failure->status));
    for (std::uint64_t p = 0; p < count; ++p) {
      ASSERT_EQ(std::memcmp(out + p * row_bytes, old_rows.data() + picks[p] * row_bytes, row_bytes), 0)
          << "row " << picks[p];
    }

    // Every row once, in a shuffled order, so threads write neighbouring rows at the same time.
    std::vector<std::uint64_t> all(rows);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), random);
    const std::vector<std::byte> new_rows = test::random_bytes(rows * row_bytes, 3);
    for (std::uint64_t p = 0; p < rows; ++p) {
      std::memcpy(out + p * row_bytes, new_rows.data() + all[p] * row_bytes, row_bytes);
    }
    std::memcpy(indices, all.data(), rows * sizeof(std::uint64_t));
    *failure = cache::row_failure::none(rows);
    run_job(rt, 24,
            cache::row_scatter_job<decltype(cache.device())>{cache.device(), table, indices, rows, out, failure});
    ASSERT_EQ(failure->failed, 0u) << to_string(status::unpack(failure->status));

    std::iota(all.begin(), all.end(), 0);
    std::memcpy(indices, all.data(), rows * sizeof(std::uint64_t));
    std::memset(out, 0, rows * row_bytes);
    *failure = cache::row_failure::none(rows);
    run_job(rt, 24,
            cache::row_gather_job<decltype(cache.device())>{cache.device(), table, indices, rows, out, failure});
    ASSERT_EQ(failure->failed, 0u);
    ASSERT_EQ(std::memcmp(out, new_rows.data(), rows * row_bytes), 0);
    cache.flush();
    test::expect_nothing_held(cache);
    EXPECT_GT(cache.counters().evictions, 0u);
    EXPECT_EQ(storage_bytes(rt, offset, rows * row_bytes), new_rows);
    rt.free(indices);
    rt.free(out);
    rt.free(failure);
  }
  const std::vector<std::byte> before = storage_bytes(rt, 0, offset);
  EXPECT_EQ(before, std::vector<std::byte>(offset));
  const std::vector<std::byte> after = storage_bytes(rt, offset + rows * row_bytes, 700);
  EXPECT_EQ(after, std::vector<std::byte>(700));
  rt.stop();
}

INSTANTIATE_TEST_SUITE_P(Sizes, RowAccess,
                         ::testing::Values(row_case{512, 0}, row_case{100, 0}, row_case{5000, 0}, row_case{100, 37},
                                           row_case{4096, 4095}, row_case{13, 1}),
                         [](const auto& test) {
                           return std::to_string(test.param.row_bytes) + "B_at_" + std::to_string(test.param.offset);
                         });

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
