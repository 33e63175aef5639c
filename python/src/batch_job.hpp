#pragma once
// The job behind Device.read and Device.write: rows of `row_bytes` bytes at the byte offsets
// `offsets[i]` of device `dev`, read into or written from row i of `rows`. Each of the job's
// threads takes rows t, t + threads, ... (on the GPU backend one GPU thread per stride, so
// `threads` requests are in flight at once), and the failures are counted in `failures[0]`,
// the lowest failing row in `failures[1]` (the request itself reaches runtime::check()).
#include <cstddef>
#include <cstdint>

#include "agio/io/io_handle.hpp"
#include "agio/portable.hpp"

namespace agio::python {

template <class IO>
struct batch_job {
  IO io;
  std::uint32_t dev;
  bool write;
  const std::uint64_t* offsets;
  std::uint64_t rows;
  std::uint64_t row_bytes;
  std::byte* data;
  std::uint64_t* failures;  // [0]: how many rows failed, [1]: the lowest failing row

  AGIO_HD void note_failure(std::uint64_t row) const {
    using portable::scope;
    portable::fetch_add<scope::device>(failures[0], std::uint64_t{1}, portable::relaxed);
    std::uint64_t lowest = portable::load<scope::device>(failures[1], portable::relaxed);
    while (row < lowest && !portable::compare_exchange<scope::device>(failures[1], lowest, row, portable::relaxed)) {
    }
  }

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t i = t; i < rows; i += threads) {
      std::byte* row = data + i * row_bytes;
      const status s =
          write ? io.write_bytes(dev, offsets[i], row_bytes, row) : io.read_bytes(dev, offsets[i], row_bytes, row);
      if (!s.ok()) note_failure(i);
    }
  }
};

}  // namespace agio::python
