#pragma once
// A device job that moves a buffer to or from a device in fixed-size chunks: thread t handles
// chunks t, t + threads, ..., keeping a few requests in flight. Reads visit the chunks in a
// scrambled order so that data comes back through other threads and queues than it went out.
// Used by the demo and the GPU suite.
#include <cstdint>

#include "agio/io/io_handle.hpp"
#include "agio/portable.hpp"

namespace agio::bench {

// IO is the runtime's controller type; `chunk_job{rt.io(), ...}` deduces it.
template <class IO = io_handle>
struct chunk_job {
  IO io;
  std::uint32_t device;
  std::uint32_t write;
  std::byte* buffer;
  std::uint32_t chunk_bytes;
  std::uint32_t chunks;     // not a multiple of 7919, so the scramble below is a permutation
  std::uint32_t* failures;  // incremented once per request that did not succeed

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const std::uint32_t blocks = chunk_bytes / io.lba_bytes(device);
    constexpr std::uint32_t in_flight = 4;
    transaction tx[in_flight];
    std::uint32_t n = 0;
    for (std::uint32_t i = t; i < chunks; i += threads) {
      // 7919 is prime: multiplying by it modulo `chunks` visits every chunk once.
      const std::uint32_t c = write ? i : static_cast<std::uint32_t>((std::uint64_t{i} * 7919) % chunks);
      std::byte* p = buffer + std::uint64_t{c} * chunk_bytes;
      tx[n++] = write ? io.async_write(device, std::uint64_t{c} * blocks, blocks, p)
                      : io.async_read(device, std::uint64_t{c} * blocks, blocks, p);
      if (n == in_flight || i + threads >= chunks) {
        for (std::uint32_t k = 0; k < n; ++k) {
          if (!io.wait(tx[k]).ok()) portable::fetch_add<portable::scope::device>(*failures, 1u, portable::relaxed);
        }
        n = 0;
      }
    }
  }
};

}  // namespace agio::bench
