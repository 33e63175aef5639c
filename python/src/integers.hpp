#pragma once
// A one-dimensional array of integers of any width, signed or not, read where it lies (host
// memory, or GPU memory by GPU threads) as 64-bit values: offsets and indices as Python hands
// them in (NumPy, PyTorch and CuPy integer arrays of 8 to 64 bits).
#include <cstdint>

#include "agio/portable.hpp"

namespace agio::python {

struct integers {
  const void* values = nullptr;
  std::uint32_t width = 8;  // bytes per integer: 1, 2, 4 or 8
  bool is_signed = false;

  // Element i as the caller gave it (negative values stay negative).
  AGIO_HD std::int64_t operator[](std::uint64_t i) const {
    switch (width) {
      case 1:
        return is_signed ? std::int64_t{static_cast<const std::int8_t*>(values)[i]}
                         : std::int64_t{static_cast<const std::uint8_t*>(values)[i]};
      case 2:
        return is_signed ? std::int64_t{static_cast<const std::int16_t*>(values)[i]}
                         : std::int64_t{static_cast<const std::uint16_t*>(values)[i]};
      case 4:
        return is_signed ? std::int64_t{static_cast<const std::int32_t*>(values)[i]}
                         : std::int64_t{static_cast<const std::uint32_t*>(values)[i]};
      default: return static_cast<const std::int64_t*>(values)[i];
    }
  }
};

}  // namespace agio::python
