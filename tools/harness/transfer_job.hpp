#pragma once
// A device job that moves a run of blocks between a device and a buffer with synchronous
// requests of `chunk_lbas` blocks: thread t takes chunks t, t + threads, ... Used by agio stage
// and by the harness's write_store, which stage the bytes of a store.
#include <cstddef>
#include <cstdint>

#include "agio/portable.hpp"

namespace agio::bench {

template <class IO>
struct range_transfer_job {
  IO io;
  std::uint32_t dev;
  std::uint32_t write;
  std::byte* buffer;
  std::uint64_t first_lba;
  std::uint64_t lbas;
  std::uint32_t chunk_lbas;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const std::uint32_t lba_bytes = io.lba_bytes(dev);
    for (std::uint64_t first = std::uint64_t{t} * chunk_lbas; first < lbas;
         first += std::uint64_t{threads} * chunk_lbas) {
      const auto n = static_cast<std::uint32_t>(lbas - first < chunk_lbas ? lbas - first : chunk_lbas);
      std::byte* p = buffer + first * lba_bytes;
      const bool ok = write ? io.write(dev, first_lba + first, n, p).ok() : io.read(dev, first_lba + first, n, p).ok();
      if (!ok) portable::fetch_add<portable::scope::device>(*failures, 1u, portable::relaxed);
    }
  }
};

}  // namespace agio::bench
