#pragma once
// A 32-bit divisor fixed at run time (a cache's set count and line size, a queue's depth) that
// divides 64-bit numbers by a multiply and shifts instead of a division.
//
// Why: GPUs have no 64-bit integer division. nvcc calls a subroutine of some 70 instructions
// for each `n / d` or `n % d` on 64-bit operands, and every call site keeps the caller's live
// values in registers of their own. In the cache kernels those calls (set lookup, queue slots,
// the array reader's line index) set the register high-water mark: the graph benchmark's
// connected-components kernel needed 98 registers with them and 78 with this class, which
// is 2 or 3 blocks of 256 threads per SM (ptxas, sm_90, 2026-11-23).
//
// The method is Granlund and Montgomery's for unsigned division by invariant integers ("Division
// by Invariant Integers using Multiplication", PLDI 1994, Figure 4.1), exact for every 64-bit
// numerator and every divisor from 1 to 2^32 - 1: with l = ceil(log2 d) and
// m = floor(2^64 (2^l - d) / d) + 1 (which fits in 64 bits),
//   t = high 64 bits of m * n,   n / d = (t + ((n - t) >> min(l, 1))) >> max(l - 1, 0).
//
// A divisor converts to and from the number it divides by, so a field of this type is set and
// read like the std::uint32_t it replaces; only the divisions themselves change.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::detail {

class divisor {
 public:
  constexpr divisor() = default;  // 0: sets nothing up; divides by nothing

  // Implicit, like the number it is (`qp.depth = depth`).
  AGIO_HD constexpr divisor(std::uint32_t d) : value_(d) {
    if (d == 0) return;
    std::uint32_t l = 0;
    while ((std::uint64_t{1} << l) < d) ++l;
    // floor(2^64 * excess / d) by long division in two 32-bit digits: excess < d < 2^32, so
    // every partial dividend fits in 64 bits. These divisions run once, where the divisor is set.
    const std::uint64_t excess = (std::uint64_t{1} << l) - d;
    const std::uint64_t high = (excess << 32) / d;
    const std::uint64_t low = (((excess << 32) % d) << 32) / d;
    multiplier_ = (high << 32 | low) + 1;
    first_shift_ = l < 1 ? l : 1;
    second_shift_ = l < 1 ? 0 : l - 1;
  }

  AGIO_HD constexpr operator std::uint32_t() const { return value_; }

  AGIO_HD std::uint64_t quotient(std::uint64_t n) const {
    const std::uint64_t t = multiply_high(multiplier_, n);
    return (t + ((n - t) >> first_shift_)) >> second_shift_;
  }
  AGIO_HD std::uint32_t remainder(std::uint64_t n) const {
    return static_cast<std::uint32_t>(n - quotient(n) * value_);
  }

 private:
  AGIO_HD static std::uint64_t multiply_high(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
    return __umul64hi(a, b);
#else
    __extension__ using wide = unsigned __int128;  // a GCC/Clang extension, as -Wpedantic asks to say
    return static_cast<std::uint64_t>((static_cast<wide>(a) * b) >> 64);
#endif
  }

  std::uint64_t multiplier_ = 0;
  std::uint32_t value_ = 0;
  std::uint32_t first_shift_ = 0;
  std::uint32_t second_shift_ = 0;
};

}  // namespace agio::detail
