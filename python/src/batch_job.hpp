#pragma once
// The jobs behind Device.read/write and pread/pwrite: rows of data at byte offsets of one
// device. Offsets come either from the caller's integer array, read where it lies (host or GPU
// memory, any integer width), or as a contiguous range (first + i * row_bytes, for pread). An
// array in GPU memory is checked by check_job on the device, so that it never travels to the
// host; batch_job then issues nothing if any row was refused.
#include <cstddef>
#include <cstdint>

#include "agio/io/io_handle.hpp"
#include "agio/portable.hpp"
#include "integers.hpp"

namespace agio::python {

// Row i's byte offset: the caller's integers, or first + i * stride when there are none.
struct row_offsets {
  integers given;
  std::uint64_t first = 0;
  std::uint64_t stride = 0;

  // Row i's offset as the caller gave it (negative values stay negative).
  AGIO_HD std::int64_t raw(std::uint64_t i) const {
    return given.values == nullptr ? static_cast<std::int64_t>(first + i * stride) : given[i];
  }
};

// Why a row was refused before anything was issued.
enum class row_refusal : std::uint32_t { none = 0, negative = 1, misaligned = 2, past_end = 3 };

// The first refused row and why, packed so that one atomic minimum keeps the lowest row:
// (row << 2) | refusal. no_refusal while every row was fine.
inline constexpr std::uint64_t no_refusal = ~std::uint64_t{0};

struct row_bounds {
  std::uint64_t rows = 0;
  std::uint64_t row_bytes = 0;       // every row but the last
  std::uint64_t last_row_bytes = 0;  // the last row (shorter for a pread whose size is not a multiple)
  std::uint32_t lba_bytes = 0;
  std::uint64_t capacity = 0;  // the device's bytes

  AGIO_HD std::uint64_t bytes_of(std::uint64_t i) const { return i + 1 == rows ? last_row_bytes : row_bytes; }

  AGIO_HD row_refusal check(std::int64_t offset, std::uint64_t i) const {
    if (offset < 0) return row_refusal::negative;
    const auto at = static_cast<std::uint64_t>(offset);
    if (at % lba_bytes != 0) return row_refusal::misaligned;
    if (at > capacity || capacity - at < bytes_of(i)) return row_refusal::past_end;
    return row_refusal::none;
  }
};

// Checks every row's offset and keeps the lowest refused one in *refused.
struct check_job {
  row_offsets offsets;
  row_bounds bounds;
  std::uint64_t* refused;

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    using portable::scope;
    for (std::uint64_t i = t; i < bounds.rows; i += threads) {
      const row_refusal why = bounds.check(offsets.raw(i), i);
      if (why == row_refusal::none) continue;
      const std::uint64_t packed = i << 2 | static_cast<std::uint64_t>(why);
      std::uint64_t lowest = portable::load<scope::device>(*refused, portable::relaxed);
      while (packed < lowest &&
             !portable::compare_exchange<scope::device>(*refused, lowest, packed, portable::relaxed)) {
      }
      return;  // later rows of this thread are higher
    }
  }
};

// Each of the job's threads claims the next row not yet taken (next_row) until none is left, so
// `threads` requests stay in flight until the batch's last rows (a thread whose requests were
// fast takes more of them, and none sits idle while others still have a queue of their own).
// A thread claims its next row and loads that row's offset while its request is in flight: the
// claim (an atomic) and the load (from host memory, for offsets the caller gave there) each cost
// a round trip that would otherwise sit between one completion and the next submission. Rows
// larger than one request are transferred piece by piece (read_bytes/write_bytes), waited on
// there. Failed rows are counted in failures[0], the lowest in failures[1] (the request itself
// reaches runtime::check()).
template <class IO>
struct batch_job {
  IO io;
  std::uint32_t dev;
  bool write;
  row_offsets offsets;
  row_bounds bounds;
  std::byte* data;
  const std::uint64_t* refused;  // check_job's verdict, or nullptr when the host checked
  std::uint64_t* failures;       // [0]: how many rows failed, [1]: the lowest failing row
  std::uint64_t* next_row;       // 0 at the start

  AGIO_HD void note_failure(std::uint64_t row) const {
    using portable::scope;
    portable::fetch_add<scope::device>(failures[0], std::uint64_t{1}, portable::relaxed);
    std::uint64_t lowest = portable::load<scope::device>(failures[1], portable::relaxed);
    while (row < lowest && !portable::compare_exchange<scope::device>(failures[1], lowest, row, portable::relaxed)) {
    }
  }

  // The next row not yet taken, and its byte offset (0 past the last row).
  struct claimed {
    std::uint64_t row;
    std::uint64_t at;
  };
  AGIO_HD claimed claim() const {
    const std::uint64_t row =
        portable::fetch_add<portable::scope::device>(*next_row, std::uint64_t{1}, portable::relaxed);
    return {row, row < bounds.rows ? static_cast<std::uint64_t>(offsets.raw(row)) : 0};
  }

  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    if (refused != nullptr && portable::load<portable::scope::device>(*refused, portable::relaxed) != no_refusal)
      return;
    const std::uint64_t one_request = std::uint64_t{io.max_blocks(dev)} * io.lba_bytes(dev);
    claimed c = claim();
    while (c.row < bounds.rows) {
      std::byte* row = data + c.row * bounds.row_bytes;
      const std::uint64_t bytes = bounds.bytes_of(c.row);
      if (bytes > one_request) {
        const status s = write ? io.write_bytes(dev, c.at, bytes, row) : io.read_bytes(dev, c.at, bytes, row);
        if (!s.ok()) note_failure(c.row);
        c = claim();
        continue;
      }
      const auto size = static_cast<std::uint32_t>(bytes);
      const transaction t =
          write ? io.async_write_bytes(dev, c.at, size, row) : io.async_read_bytes(dev, c.at, size, row);
      const claimed next = claim();
      if (!io.wait(t).ok()) note_failure(c.row);
      c = next;
    }
  }
};

}  // namespace agio::python
