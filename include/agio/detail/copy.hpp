#pragma once
// Single-thread copies: 16-byte words when both ends allow, else 4-byte words (NVMe buffers are
// dword aligned), else bytes. (Lanes that copy together use warp::copy_each.)
#include <cstdint>
#include <type_traits>

#include "agio/detail/platform.hpp"

#if !defined(__CUDA_ARCH__)
#include <atomic>
#include <cstring>
#endif

namespace agio::detail {

AGIO_HD inline void thread_copy(void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  const auto d = reinterpret_cast<std::uintptr_t>(dst);
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if (((d | s | bytes) & 15u) == 0) {
    auto* dv = static_cast<uint4*>(dst);
    const auto* sv = static_cast<const uint4*>(src);
    // One load in flight at a time (the compiler cannot tell dst from src), so a 4 KiB copy is
    // 256 round trips to memory. Batching loads ahead of the stores was measured (H100,
    // 2026-11-22): it speeds this copy up but its registers count against every kernel that
    // uses the cache, where this copy is inlined, and the occupancy they lost cost the
    // array-view kernels more (SpMV through the cache 26x native became 73x with a batch of
    // 4, 140x with 16) than the copy gained. A batched copy in a function of its own
    // (__noinline__) does not escape that either: the call cost the cache kernels 4-8
    // registers with a batch of 4 and about 50 with 16 (ptxas, sm_90, 2026-11-22).
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

// Copies into or out of memory that other threads may read or write at the same time, word by
// word (cache lines shared by pinned readers and writers of different elements). On the GPU
// aligned words are single accesses anyway; on the host the words are relaxed atomics, which
// is what the GPU gives and keeps ThreadSanitizer's view of the CPU suite exact.
AGIO_HD inline void shared_copy(void* dst, const void* src, std::uint32_t bytes) {
#if defined(__CUDA_ARCH__)
  thread_copy(dst, src, bytes);
#else
  if (((reinterpret_cast<std::uintptr_t>(dst) | reinterpret_cast<std::uintptr_t>(src) | bytes) & 7u) != 0) {
    std::memcpy(dst, src, bytes);
    return;
  }
  auto* d = static_cast<std::uint64_t*>(dst);
  auto* s = static_cast<std::uint64_t*>(const_cast<void*>(src));
  for (std::uint32_t i = 0; i < bytes / 8; ++i) {
    std::atomic_ref<std::uint64_t>(d[i]).store(std::atomic_ref<std::uint64_t>(s[i]).load(std::memory_order_relaxed),
                                               std::memory_order_relaxed);
  }
#endif
}

// One element of such memory.
template <class T>
AGIO_HD T shared_load(const T& element) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    return std::atomic_ref<T>(const_cast<T&>(element)).load(std::memory_order_relaxed);
  }
#endif
  return element;
}
template <class T>
AGIO_HD void shared_store(T& element, const T& value) {
#if !defined(__CUDA_ARCH__)
  if constexpr (std::is_trivially_copyable_v<T> && (sizeof(T) == 4 || sizeof(T) == 8)) {
    std::atomic_ref<T>(element).store(value, std::memory_order_relaxed);
    return;
  }
#endif
  element = value;
}

}  // namespace agio::detail
