#pragma once
// A 64-bit finalizer (MurmurHash3's fmix64): spreads consecutive integers over all 64 bits, for
// the benchmarks' random offsets and their checkable data patterns, on the device and the host.
#include <cstdint>

#include "agio/portable.hpp"

namespace agio::bench {

AGIO_HD inline std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ull;
  return x ^ (x >> 33);
}

}  // namespace agio::bench
