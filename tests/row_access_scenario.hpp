#pragma once
// Rows through the cache (cache/row_access.hpp), the scenario the CPU suite
// (host/test_row_access.cpp) and the GPU suite (gpu/test_gpu_row_access.cu) share: a job's
// threads (warps on the GPU) gather random rows of a table 16 times a tiny cache, scatter every
// row once in a shuffled order (neighbouring rows of a line written at once) and gather them all
// again; every byte is checked, storage holds exactly the new rows after a flush and the bytes
// around the table are untouched. And the same for three tables at once, each job covering all
// three (row_segments_*_job). Memory moves by rt.copy_to_device / copy_to_host and storage
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

// Runs `body(cache)` with a cache of 8 lines of `line_bytes` on `rt`, above a host tier of
// `host_tier_lines` (none if 0).
template <class Body>
void with_tiny_cache(runtime& rt, std::uint32_t line_bytes, std::uint32_t host_tier_lines, Body&& body) {
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    const cache_options options{8 * line_bytes, line_bytes, 2};
    if (host_tier_lines == 0) {
      software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, options);
      body(cache);
      return;
    }
    cache_options in_host{std::size_t{host_tier_lines} * line_bytes, line_bytes, 4};
    in_host.memory = cache_memory::host;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> tier(rt, in_host);
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table,
                   cache::tiered_io<cache::clock, cache::admit_always, IO>>
        cache(rt, tier, options);
    body(cache);
    EXPECT_GT(tier.counters().hits, 0u) << "the tier served none of the cache's misses";
  });
}

// The scenario on a started runtime whose device 0 has room for 512 KiB of rows after
// `offset`, with `threads` job threads (whole warps on the GPU), through a tiny cache above a
// host tier of `host_tier_lines` (none if 0; the suites give 32, a quarter of the table's
// lines): a warp's gather of a line the tier holds is copied up by all its lanes.
inline void rows_through_a_tiny_cache(runtime& rt, std::uint64_t row_bytes, std::uint64_t offset, std::uint32_t threads,
                                      std::uint32_t host_tier_lines = 0) {
  constexpr std::uint32_t line_bytes = 4096;
  const std::uint64_t rows = (16 * 8 * line_bytes) / row_bytes;
  const cache::row_table table{0, offset, row_bytes, rows};
  const std::vector<std::byte> old_rows = random_bytes(rows * row_bytes, 1);
  ASSERT_TRUE(write_storage(rt, offset, old_rows).ok());
  with_tiny_cache(rt, line_bytes, host_tier_lines, [&](auto& cache) {
    using handle = typename std::decay_t<decltype(cache)>::handle;
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

// Runs a `Job` (a row_segments_*_job) on cache handle `cache` over `segments` (copied to device
// memory, positions in all `count`) with `threads` job threads and returns what its failure
// record holds.
template <class Job, class Cache>
cache::row_failure run_segments_job(runtime& rt, const Cache& cache, const std::vector<cache::row_segment>& segments,
                                    std::uint64_t count, std::uint32_t threads) {
  auto* at = static_cast<cache::row_segment*>(rt.allocate_device(segments.size() * sizeof(cache::row_segment)));
  auto* failure = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
  rt.copy_to_device(at, segments.data(), segments.size() * sizeof(cache::row_segment));
  const cache::row_failure none = cache::row_failure::none(count);
  rt.copy_to_device(failure, &none, sizeof none);
  run_job(rt, threads, Job{cache, at, static_cast<std::uint32_t>(segments.size()), count, failure});
  cache::row_failure found;
  rt.copy_to_host(&found, failure, sizeof found);
  rt.free(at);
  rt.free(failure);
  return found;
}

// Rows of three tables of different row sizes, at unaligned offsets one after another on device
// 0 (a few bytes apart), through one cache of 8 lines in single jobs, `threads` job threads:
// random rows of all three gathered in one job, every row of every table scattered once in one
// job (shuffled), then all gathered again in one job; every byte checked, storage holds exactly
// the new rows after a flush, the bytes between the tables untouched. Device 0 needs 512 KiB.
inline void three_tables_in_one_job(runtime& rt, std::uint32_t threads) {
  struct table_rows {
    cache::row_table table;
    std::vector<std::byte> old_rows;
    std::vector<std::byte> new_rows;
    std::uint64_t* indices = nullptr;
    std::byte* rows = nullptr;
  };
  constexpr std::uint32_t line_bytes = 4096;
  std::vector<table_rows> tables(3);
  tables[0].table = {0, 37, 100, 600};      // 60 KB of rows straddling line ends
  tables[1].table = {0, 60050, 5000, 30};   // rows spanning lines
  tables[2].table = {0, 210051, 13, 4000};  // tiny rows
  std::uint64_t seed = 10;
  for (auto& t : tables) {
    const std::uint64_t bytes = t.table.rows * t.table.row_bytes;
    t.old_rows = random_bytes(bytes, seed++);
    t.new_rows = random_bytes(bytes, seed++);
    ASSERT_TRUE(write_storage(rt, t.table.offset, t.old_rows).ok());
    const std::uint64_t most = std::max<std::uint64_t>(t.table.rows, 1000);
    t.indices = static_cast<std::uint64_t*>(rt.allocate_device(most * sizeof(std::uint64_t)));
    t.rows = static_cast<std::byte*>(rt.allocate_device(most * t.table.row_bytes));
  }
  // The segments for indices picks[k] of table k (copied to its device memory), rows in its buffer.
  const auto segments_for = [&](const std::vector<std::vector<std::uint64_t>>& picks, std::uint64_t& count) {
    std::vector<cache::row_segment> segments;
    count = 0;
    for (std::size_t k = 0; k < tables.size(); ++k) {
      rt.copy_to_device(tables[k].indices, picks[k].data(), picks[k].size() * sizeof(std::uint64_t));
      segments.push_back({tables[k].table, tables[k].indices, tables[k].rows, count});
      count += picks[k].size();
    }
    return segments;
  };
  // Every byte of table k's buffer equals `expected` rows picks[k].
  const auto expect_rows = [&](const std::vector<std::vector<std::uint64_t>>& picks, bool renewed) {
    for (std::size_t k = 0; k < tables.size(); ++k) {
      const std::uint64_t row_bytes = tables[k].table.row_bytes;
      std::vector<std::byte> host(picks[k].size() * row_bytes);
      rt.copy_to_host(host.data(), tables[k].rows, host.size());
      const std::vector<std::byte>& expected = renewed ? tables[k].new_rows : tables[k].old_rows;
      for (std::size_t p = 0; p < picks[k].size(); ++p) {
        ASSERT_TRUE(std::equal(host.begin() + p * row_bytes, host.begin() + (p + 1) * row_bytes,
                               expected.begin() + picks[k][p] * row_bytes))
            << "table " << k << ", row " << picks[k][p] << " at position " << p;
      }
    }
  };
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(
        rt, {8 * line_bytes, line_bytes, 2});
    using handle = typename decltype(cache)::handle;
    std::mt19937_64 random(4);
    std::vector<std::vector<std::uint64_t>> picks(tables.size());
    for (std::size_t k = 0; k < tables.size(); ++k) {
      picks[k].resize(1000);
      for (auto& p : picks[k]) p = random() % tables[k].table.rows;
    }
    std::uint64_t count = 0;
    std::vector<cache::row_segment> segments = segments_for(picks, count);
    cache::row_failure found =
        run_segments_job<cache::row_segments_gather_job<handle>>(rt, cache.device(), segments, count, threads);
    EXPECT_EQ(found.failed, 0u) << "first at " << found.lowest << ": " << to_string(status::unpack(found.status));
    expect_rows(picks, false);

    // Every row once, shuffled, its new bytes at its position.
    for (std::size_t k = 0; k < tables.size(); ++k) {
      const std::uint64_t row_bytes = tables[k].table.row_bytes;
      picks[k].resize(tables[k].table.rows);
      std::iota(picks[k].begin(), picks[k].end(), 0);
      std::shuffle(picks[k].begin(), picks[k].end(), random);
      std::vector<std::byte> host(picks[k].size() * row_bytes);
      for (std::size_t p = 0; p < picks[k].size(); ++p) {
        std::copy_n(tables[k].new_rows.begin() + picks[k][p] * row_bytes, row_bytes, host.begin() + p * row_bytes);
      }
      rt.copy_to_device(tables[k].rows, host.data(), host.size());
    }
    segments = segments_for(picks, count);
    found = run_segments_job<cache::row_segments_scatter_job<handle>>(rt, cache.device(), segments, count, threads);
    EXPECT_EQ(found.failed, 0u) << "first at " << found.lowest << ": " << to_string(status::unpack(found.status));

    for (auto& p : picks) std::sort(p.begin(), p.end());
    segments = segments_for(picks, count);
    found = run_segments_job<cache::row_segments_gather_job<handle>>(rt, cache.device(), segments, count, threads);
    EXPECT_EQ(found.failed, 0u) << "first at " << found.lowest << ": " << to_string(status::unpack(found.status));
    expect_rows(picks, true);
    cache.flush();
    expect_nothing_held(cache);
    EXPECT_GT(cache.counters().evictions, 0u);
  });
  std::uint64_t end = 0;
  for (auto& t : tables) {
    EXPECT_EQ(storage_bytes(rt, t.table.offset, t.new_rows.size()), t.new_rows);
    EXPECT_EQ(storage_bytes(rt, end, t.table.offset - end), std::vector<std::byte>(t.table.offset - end));
    end = t.table.offset + t.new_rows.size();
    rt.free(t.indices);
    rt.free(t.rows);
  }
  EXPECT_EQ(storage_bytes(rt, end, 700), std::vector<std::byte>(700));
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
