#pragma once
// Single-thread copy for staging write data: 16-byte words when both ends allow, else 4-byte
// words (NVMe buffers are dword aligned), else bytes.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::detail {

AGIO_HD inline void thread_copy(void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if (((d | s | bytes) & 15u) == 0) {
    auto* dv = static_cast<uint4*>(dst);
    const auto* sv = static_cast<const uint4*>(src);
    for (std::uint32_t i = 0; i < bytes / 16; ++i) dv[i] = sv[i];
  } else if (((d | s | bytes) & 3u) == 0) {
    auto* dv = static_cast<std::uint32_t*>(dst);
    const auto* sv = static_cast<const std::uint32_t*>(src);
    for (std::uint32_t i = 0; i < bytes / 4; ++i) dv[i] = sv[i];
  } else {
    auto* dv = static_cast<unsigned char*>(dst);
    const auto* sv = static_cast<const unsigned char*>(src);
    for (std::uint32_t i = 0; i < bytes; ++i) dv[i] = sv[i];
  }
#else
  __builtin_memcpy(dst, src, bytes);
#endif
}

}  // namespace agio::detail
