#pragma once
// Rows through the cache (cache/row_access.hpp), the scenario the CPU suite
// (host/test_row_access.cpp) and the GPU suite (gpu/test_gpu_row_access.cu) share: a job's
// threads (warps on the GPU) gather random rows of a table 16 times a tiny cache, scatter every
// row once in a shuffled order (neighbouring rows of a line written at once) and gather them all
// again; every byte is checked, storage holds exactly the new rows after a flush and the bytes
// around the table are untouched. Memory moves by rt.copy_to_device / copy_to_host and storage
// by one-thread jobs, so the same code serves both backends.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <type_traits>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio::test {

// Reads or writes bytes [offset, offset + bytes) of device 0 (whole LBAs) with one thread.
template <class IO>
struct storage_bytes_job {
  IO io;
  bool write;
  std::uint64_t offset;
  std::uint64_t bytes;
  std::byte* buffer;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    *result = (write ? io.write_bytes(0, offset, bytes, buffer) : io.read_bytes(0, offset, bytes, buffer)).pack();
  }
};

// Runs `body(whole LBAs in host memory)` on the 512-byte LBAs around [offset, offset + bytes)
// of device 0, read first and written back after when `write`; returns the I/O's status.
template <class Body>
status around_bytes(runtime& rt, std::uint64_t offset, std::uint64_t bytes, bool write, Body&& body) {
  const std::uint64_t first = offset / 512 * 512;
  const std::uint64_t span = (offset + bytes + 511) / 512 * 512 - first;
  auto* buffer = static_cast<std::byte*>(rt.allocate_device(span));
  auto* result = static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t)));
  std::vector<std::byte> host(span);
  std::uint32_t packed = 0;
  const auto run = [&](bool writes) {
    with_io(rt, [&](const auto& io) {
      run_job(rt, 1, storage_bytes_job<std::decay_t<decltype(io)>>{io, writes, first, span, buffer, result});
    });
    rt.copy_to_host(&packed, result, sizeof packed);
  };
  run(false);
  if (status::unpack(packed).ok()) {
    rt.copy_to_host(host.data(), buffer, span);
    body(host.data() + (offset - first));
    if (write) {
      rt.copy_to_device(buffer, host.data(), span);
      run(true);
    }
  }
  rt.free(buffer);
  rt.free(result);
  return status::unpack(packed);
}

inline std::vector<std::byte> storage_bytes(runtime& rt, std::uint64_t offset, std::uint64_t bytes) {
  std::vector<std::byte> out(bytes);
  if (bytes == 0) return out;
  const status s =
      around_bytes(rt, offset, bytes, false, [&](const std::byte* p) { std::copy_n(p, bytes, out.data()); });
  EXPECT_TRUE(s.ok()) << describe(s.result);
  return out;
}

inline status write_storage(runtime& rt, std::uint64_t offset, const std::vector<std::byte>& data) {
  return around_bytes(rt, offset, data.size(), true, [&](std::byte* p) { std::copy(data.begin(), data.end(), p); });
}

// The scenario on a started runtime whose device 0 has room for 512 KiB of rows after
// `offset`, with `threads` job threads (whole warps on the GPU).
inline void rows_through_a_tiny_cache(runtime& rt, std::uint64_t row_bytes, std::uint64_t offset,
                                      std::uint32_t threads) {
  constexpr std::uint32_t line_bytes = 4096;
  const std::uint64_t rows = (16 * 8 * line_bytes) / row_bytes;
  const cache::row_table table{0, offset, row_bytes, rows};
  const std::vector<std::byte> old_rows = random_bytes(rows * row_bytes, 1);
  ASSERT_TRUE(write_storage(rt, offset, old_rows).ok());
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(
        rt, {8 * line_bytes, line_bytes, 2});
    using handle = typename decltype(cache)::handle;
    const std::uint64_t count = 3000;
    std::vector<std::uint64_t> picks(count);
    std::mt19937_64 random(2);
    for (auto& p : picks) p = random() % rows;
    const std::uint64_t most = std::max(rows, count);
    auto* indices = static_cast<std::uint64_t*>(rt.allocate_device(most * sizeof(std::uint64_t)));
    auto* out = static_cast<std::byte*>(rt.allocate_device(most * row_bytes));
    auto* failure = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
    std::vector<std::byte> host(most * row_bytes);
    // Runs `Job` over indices[0, n) (copied in from `at`) and checks that no row failed.
    const auto run = [&](auto job, const std::vector<std::uint64_t>& at) {
      rt.copy_to_device(indices, at.data(), at.size() * sizeof(std::uint64_t));
      const cache::row_failure none = cache::row_failure::none(at.size());
      rt.copy_to_device(failure, &none, sizeof none);
      job.cache = cache.device();
      job.table = table;
      job.indices = indices;
      job.count = at.size();
      job.rows = out;
      job.failure = failure;
      run_job(rt, threads, job);
      cache::row_failure found;
      rt.copy_to_host(&found, failure, sizeof found);
      EXPECT_EQ(found.failed, 0u) << "first at position " << found.lowest << ": "
                                  << to_string(status::unpack(found.status));
    };

    run(cache::row_gather_job<handle>{}, picks);
    rt.copy_to_host(host.data(), out, count * row_bytes);
    for (std::uint64_t p = 0; p < count; ++p) {
      ASSERT_TRUE(std::equal(host.begin() + p * row_bytes, host.begin() + (p + 1) * row_bytes,
                             old_rows.begin() + picks[p] * row_bytes))
          << "row " << picks[p] << " at position " << p;
    }

    std::vector<std::uint64_t> all(rows);
    std::iota(all.begin(), all.end(), 0);
    std::shuffle(all.begin(), all.end(), random);
    const std::vector<std::byte> new_rows = random_bytes(rows * row_bytes, 3);
    for (std::uint64_t p = 0; p < rows; ++p) {
      std::copy_n(new_rows.begin() + all[p] * row_bytes, row_bytes, host.begin() + p * row_bytes);
    }
    rt.copy_to_device(out, host.data(), rows * row_bytes);
    run(cache::row_scatter_job<handle>{}, all);

    std::iota(all.begin(), all.end(), 0);
    std::fill(host.begin(), host.end(), std::byte{0});
    rt.copy_to_device(out, host.data(), rows * row_bytes);
    run(cache::row_gather_job<handle>{}, all);
    rt.copy_to_host(host.data(), out, rows * row_bytes);
    ASSERT_TRUE(std::equal(new_rows.begin(), new_rows.end(), host.begin()));
    cache.flush();
    expect_nothing_held(cache);
    EXPECT_GT(cache.counters().evictions, 0u);
    EXPECT_EQ(storage_bytes(rt, offset, rows * row_bytes), new_rows);
    rt.free(indices);
    rt.free(out);
    rt.free(failure);
  });
  EXPECT_EQ(storage_bytes(rt, 0, offset), std::vector<std::byte>(offset));
  EXPECT_EQ(storage_bytes(rt, offset + rows * row_bytes, 700), std::vector<std::byte>(700));
}

// Row sizes and offsets: rows dividing the line, straddling line ends, longer than a line,
// exactly a line from the last byte of one, and tiny ones at an odd offset.
struct row_case {
  std::uint64_t row_bytes;
  std::uint64_t offset;
};
inline std::vector<row_case> row_cases() { return {{512, 0}, {100, 0}, {5000, 0}, {100, 37}, {4096, 4095}, {13, 1}}; }
inline std::string row_case_name(const ::testing::TestParamInfo<row_case>& test) {
  return std::to_string(test.param.row_bytes) + "B_at_" + std::to_string(test.param.offset);
}

}  // namespace agio::test
