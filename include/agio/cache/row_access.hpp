#pragma once
// Rows of any size at any byte address of a device, gathered and scattered through the cache.
// A table of `rows` rows of `row_bytes` bytes starts at byte `offset` of device `dev`: row i is
// bytes [offset + i * row_bytes, offset + (i + 1) * row_bytes). Neither the offset nor the row
// size need be aligned to anything (a .npy file's data starts after its header), so a row may
// start anywhere in a line and span several lines.
//
//   const cache::row_table table{dev, offset, row_bytes, rows};
//   // on the device, every lane of a converged warp with the same arguments:
//   status s = cache::read_row(cache.device(), table, i, dst, limit);
//   // or from the host, as an agio job over a list of row indices in device memory:
//   run_job(rt, cache::row_job_threads(count, gpu),
//           cache::row_gather_job<decltype(cache.device())>{cache.device(), table, indices, count, out, failure});
//   // or rows of several tables in one job: an array of row_segment {table, indices, rows, first}
//   run_job(rt, cache::row_job_threads(total, gpu),
//           cache::row_segments_gather_job<decltype(cache.device())>{cache.device(), segments, n, total, failure});
//
// A warp serves one row: its leader acquires each line the row touches, the warp shares the
// pin, and the lanes copy the row's bytes of the line side by side (16 bytes a lane where both
// ends line up, 4 or 1 otherwise), so their loads and stores coalesce. On the host a warp is one
// thread (detail/warp.hpp), and the same code copies with memcpy. Writes mark the lines
// MODIFIED; storage gets them on eviction, flush() or stop (write-back).
#include <cstddef>
#include <cstdint>

#include "agio/cache/cache.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/warp.hpp"

#if !defined(__CUDA_ARCH__)
#include <cstring>
#endif

namespace agio::cache {

// Where a table's rows live on storage.
struct row_table {
  std::uint32_t dev = 0;
  std::uint64_t offset = 0;     // byte address of row 0
  std::uint64_t row_bytes = 0;  // any size above 0
  std::uint64_t rows = 0;       // rows [0, rows) are the table's

  AGIO_HD std::uint64_t address(std::uint64_t row) const { return offset + row * row_bytes; }
};

// What a row job reports: how many positions of its index list failed, the lowest of them, and
// the first failure's status (status::pack(); an index out of the table is invalid_argument).
// Start it as row_failure::none(count).
struct row_failure {
  std::uint64_t failed = 0;
  std::uint64_t lowest = 0;  // the index list's length while none failed
  std::uint32_t status = 0;  // 0 while none failed

  static row_failure none(std::uint64_t count) { return {0, count, 0}; }

  AGIO_HD void note(std::uint64_t position, agio::status s) {
    using detail::scope;
    detail::fetch_add<scope::device>(failed, std::uint64_t{1}, detail::relaxed);
    std::uint64_t seen = detail::load<scope::device>(lowest, detail::relaxed);
    while (position < seen && !detail::compare_exchange<scope::device>(lowest, seen, position, detail::relaxed)) {
    }
    std::uint32_t unset = 0;
    detail::compare_exchange<scope::device>(status, unset, s.pack(), detail::relaxed);
  }
};

// Copies `bytes` with every lane of the calling (converged) warp, each lane taking every 32nd
// word, so that a warp's loads and stores cover contiguous bytes. Neither end needs any
// alignment: when both sit at the same distance from a 16-byte (else 4-byte) boundary, the
// bytes up to it go one a lane and the rest as whole words. On the host, memcpy.
AGIO_HD inline void warp_copy_bytes(std::byte* dst, const std::byte* src, std::uint64_t bytes) {
#if defined(__CUDA_ARCH__)
  const unsigned lane = detail::warp::lane_id();
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  const std::uint64_t word = ((d ^ s) & 15u) == 0 ? 16 : ((d ^ s) & 3u) == 0 ? 4 : 1;
  std::uint64_t head = (word - (d & (word - 1))) & (word - 1);
  if (head > bytes) head = bytes;
  if (lane < head) dst[lane] = src[lane];
  const std::uint64_t words = (bytes - head) / word;
  std::byte* wd = dst + head;
  const std::byte* ws = src + head;
  if (word == 16) {
    auto* dv = reinterpret_cast<uint4*>(wd);
    const auto* sv = reinterpret_cast<const uint4*>(ws);
    for (std::uint64_t i = lane; i < words; i += detail::warp::size) dv[i] = sv[i];
  } else if (word == 4) {
    auto* dv = reinterpret_cast<std::uint32_t*>(wd);
    const auto* sv = reinterpret_cast<const std::uint32_t*>(ws);
    for (std::uint64_t i = lane; i < words; i += detail::warp::size) dv[i] = sv[i];
  } else {
    for (std::uint64_t i = lane; i < words; i += detail::warp::size) wd[i] = ws[i];
  }
  const std::uint64_t done = head + words * word;
  if (lane < bytes - done) dst[done + lane] = src[done + lane];
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Copies row `row` of `table` between the cache and `user` (row_bytes bytes): into `user` when
// `writes` is false, from it (marking the lines MODIFIED) when true. Every lane of a converged
// warp calls it with the same arguments and gets the same status: the first line that could
// not be had (the lines before it were copied). The row must be in the table.
template <class Cache>
AGIO_HD status copy_row(const Cache& cache, const row_table& table, std::uint64_t row, std::byte* user, bool writes,
                        deadline limit) {
  const detail::warp::lane_group warp = detail::warp::whole_warp();
  const std::uint32_t line_bytes = cache.state.line_bytes;
  std::uint64_t address = table.address(row);
  std::uint64_t left = table.row_bytes;
  while (left != 0) {
    const std::uint64_t block = cache.state.line_bytes.quotient(address);
    const std::uint32_t in_line = static_cast<std::uint32_t>(address - block * line_bytes);
    const std::uint32_t bytes = static_cast<std::uint32_t>(left < line_bytes - in_line ? left : line_bytes - in_line);
    std::uint32_t line = no_line;
    status got{outcome::success, 0};
    cache.led(
        warp,
        [&] {
          if (writes) got = cache.before_cache_write(table.dev, block, in_line, bytes);
          if (got.ok()) {
            got = writes ? cache.acquire_for_write(table.dev, block, line, limit)
                         : cache.acquire_line(table.dev, block, line, limit, warp);
          }
        },
        got);
    if (!got.ok()) return got;
    line = detail::warp::from_leader(warp, line);
    // Only the leader's pin acquired the line's data, and a shuffle orders no memory: the
    // barrier does (the fill's release -> the leader's acquire -> the barrier -> the lanes).
    detail::warp::sync(warp);
    std::byte* data = cache.line_data(line) + in_line;
    if (writes) {
      warp_copy_bytes(data, user, bytes);
#if defined(__CUDA_ARCH__)
      __threadfence();  // the lanes' stores reach the line before the leader marks and unpins it
#endif
    } else {
      warp_copy_bytes(user, data, bytes);
    }
    // Every lane is done with the line before the leader lets go of it.
    detail::warp::sync(warp);
    if (detail::warp::leads(warp)) {
      if (writes) cache.mark_dirty(line);
      cache.unpin(line);
      if (writes) got = cache.after_cache_write(table.dev, block, got);
    }
    got = status::unpack(detail::warp::from_leader(warp, got.pack()));
    if (!got.ok()) return got;
    address += bytes;
    user += bytes;
    left -= bytes;
  }
  return {outcome::success, 0};
}

template <class Cache>
AGIO_HD status read_row(const Cache& cache, const row_table& table, std::uint64_t row, void* dst, deadline limit) {
  return copy_row(cache, table, row, static_cast<std::byte*>(dst), false, limit);
}
template <class Cache>
AGIO_HD status write_row(const Cache& cache, const row_table& table, std::uint64_t row, const void* src,
                         deadline limit) {
  return copy_row(cache, table, row, static_cast<std::byte*>(const_cast<void*>(src)), true, limit);
}

// Starts loading the lines of row `row` (one thread; lanes of a warp asking for the same line
// send one request). A hint: success unless a line could not be asked for at all.
template <class Cache>
AGIO_HD status prefetch_row(const Cache& cache, const row_table& table, std::uint64_t row) {
  const std::uint64_t first = cache.state.line_bytes.quotient(table.address(row));
  const std::uint64_t last = cache.state.line_bytes.quotient(table.address(row) + table.row_bytes - 1);
  status result{outcome::success, 0};
  for (std::uint64_t block = first; block <= last; ++block) {
    const status s = cache.prefetch(table.dev, block);
    if (!s.ok() && result.ok()) result = s;
  }
  return result;
}

// How many threads a row job over `count` rows runs: on the GPU whole warps, one per row up to
// 2048 of them (more warps only wait longer for the same queues); on the host up to 16 threads.
inline std::uint32_t row_job_threads(std::uint64_t count, bool gpu) {
  if (!gpu) return static_cast<std::uint32_t>(count < 16 ? count : 16);
  const std::uint64_t warps = count < 2048 ? count : 2048;
  return static_cast<std::uint32_t>(warps * detail::warp::size);
}

// The calling thread's warp among a job's, and how many there are: on the GPU 32 consecutive
// threads (the lanes of a warp the job's thread count cuts short do nothing: row_job_threads
// gives whole warps), on the host every thread. False for a thread with no warp.
AGIO_HD inline bool job_warp(std::uint32_t t, std::uint32_t threads, std::uint32_t& warp, std::uint32_t& warps) {
#if defined(__CUDA_ARCH__)
  warp = t / detail::warp::size;
  warps = threads / detail::warp::size;
#else
  warp = t;
  warps = threads;
#endif
  return warp < warps;
}

// One table's part of a row job over several tables: its rows indices[0..) copied into (gather)
// or from (scatter) rows + i * table.row_bytes, at job-wide positions first, first + 1, ...
// (up to the next segment's first, or the job's count for the last segment).
struct row_segment {
  row_table table;
  const std::uint64_t* indices;
  std::byte* rows;  // unused by prefetches
  std::uint64_t first;
};

// The segment that job-wide position p belongs to: the last whose first position is p or below
// (an empty segment shares its first with the next one, so it is never picked). segments[0]'s
// first is 0.
AGIO_HD inline const row_segment& segment_at(const row_segment* segments, std::uint32_t count, std::uint64_t p) {
  std::uint32_t low = 0;  // segments[low].first <= p
  std::uint32_t high = count;
  while (high - low > 1) {
    const std::uint32_t middle = low + (high - low) / 2;
    if (segments[middle].first <= p) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return segments[low];
}

// The body of every row copy job: job positions [0, count) of `segments`, one warp each after
// another; an index outside its table and a row that could not be read or written are noted in
// `failure` at their job-wide position, and the other rows go on.
template <bool Writes, class Cache>
AGIO_HD void copy_segment_rows(const Cache& cache, const row_segment* segments, std::uint32_t segment_count,
                               std::uint64_t count, row_failure* failure, std::uint32_t t, std::uint32_t threads) {
  std::uint32_t warp = 0;
  std::uint32_t warps = 0;
  if (!job_warp(t, threads, warp, warps)) return;
  for (std::uint64_t p = warp; p < count; p += warps) {
    const row_segment& segment = segment_at(segments, segment_count, p);
    const std::uint64_t i = p - segment.first;
    const std::uint64_t row = segment.indices[i];
    status s{outcome::invalid_argument, 0};
    if (row < segment.table.rows) {
      s = copy_row(cache, segment.table, row, segment.rows + i * segment.table.row_bytes, Writes,
                   deadline::after_ns(cache.wait_timeout_ns));
    }
    if (!s.ok() && detail::warp::leads(detail::warp::whole_warp())) failure->note(p, s);
  }
}

// The body of every row prefetch job: job positions [0, count) of `segments`, one a thread.
template <class Cache>
AGIO_HD void prefetch_segment_rows(const Cache& cache, const row_segment* segments, std::uint32_t segment_count,
                                   std::uint64_t count, row_failure* failure, std::uint32_t t, std::uint32_t threads) {
  for (std::uint64_t p = t; p < count; p += threads) {
    const row_segment& segment = segment_at(segments, segment_count, p);
    const std::uint64_t row = segment.indices[p - segment.first];
    const status s =
        row < segment.table.rows ? prefetch_row(cache, segment.table, row) : status{outcome::invalid_argument, 0};
    if (!s.ok()) failure->note(p, s);
  }
}

// Row indices[p] of `table` copied into (gather) or from (scatter) `rows + p * row_bytes`, for
// p in [0, count): an agio job (run_job) whose warps take positions one after another. An index
// outside the table and a row that could not be read or written are noted in `failure`; the
// other rows go on. `indices` and `rows` are in memory the job's threads reach (device memory on
// the GPU). Cache is a cache_handle (software_cache::device()).
template <class Cache, bool Writes>
struct row_copy_job {
  Cache cache;
  row_table table;
  const std::uint64_t* indices;
  std::uint64_t count;
  std::byte* rows;
  row_failure* failure;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const row_segment one{table, indices, rows, 0};
    copy_segment_rows<Writes>(cache, &one, 1, count, failure, t, threads);
  }
};
template <class Cache>
using row_gather_job = row_copy_job<Cache, false>;
template <class Cache>
using row_scatter_job = row_copy_job<Cache, true>;

// Rows of several tables in one job (one launch on the GPU): `segments` (in memory the job's
// threads reach, ordered by first position, the first at 0) split positions [0, count) between
// them, and `failure` notes job-wide positions. Otherwise as row_copy_job.
template <class Cache, bool Writes>
struct row_segments_copy_job {
  Cache cache;
  const row_segment* segments;
  std::uint32_t segment_count;
  std::uint64_t count;
  row_failure* failure;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    copy_segment_rows<Writes>(cache, segments, segment_count, count, failure, t, threads);
  }
};
template <class Cache>
using row_segments_gather_job = row_segments_copy_job<Cache, false>;
template <class Cache>
using row_segments_scatter_job = row_segments_copy_job<Cache, true>;

// Prefetches the rows indices[p], p in [0, count), one row a thread.
template <class Cache>
struct row_prefetch_job {
  Cache cache;
  row_table table;
  const std::uint64_t* indices;
  std::uint64_t count;
  row_failure* failure;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const row_segment one{table, indices, nullptr, 0};
    prefetch_segment_rows(cache, &one, 1, count, failure, t, threads);
  }
};

// Prefetches the rows of several tables' segments, positions [0, count), one row a thread.
template <class Cache>
struct row_segments_prefetch_job {
  Cache cache;
  const row_segment* segments;
  std::uint32_t segment_count;
  std::uint64_t count;
  row_failure* failure;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    prefetch_segment_rows(cache, segments, segment_count, count, failure, t, threads);
  }
};

}  // namespace agio::cache
