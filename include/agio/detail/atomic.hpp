#pragma once
// Atomic access to plain memory with an explicit scope at every use.
//
// Device builds use cuda::atomic_ref; host-only builds use std::atomic_ref so that the CPU
// suite runs under ThreadSanitizer with the compiler's own atomics. Scope matters only on the
// device: `system` for words shared with the host (queues, doorbells in pinned memory),
// `device` for words only GPU threads touch (transaction records, queue states).
#include <cstdint>

#include "agio/detail/platform.hpp"

#if defined(__CUDACC__)
#include <cuda/atomic>
#else
#include <atomic>
#endif

namespace agio::detail {

enum class scope { device, system };

#if defined(__CUDACC__)
using memory_order = cuda::std::memory_order;
inline constexpr memory_order relaxed = cuda::std::memory_order_relaxed;
inline constexpr memory_order acquire = cuda::std::memory_order_acquire;
inline constexpr memory_order release = cuda::std::memory_order_release;
inline constexpr memory_order acq_rel = cuda::std::memory_order_acq_rel;
inline constexpr memory_order seq_cst = cuda::std::memory_order_seq_cst;

template <scope S>
inline constexpr cuda::thread_scope cuda_scope =
    S == scope::system ? cuda::thread_scope_system : cuda::thread_scope_device;

template <scope S, class T>
AGIO_HD inline auto atomic_on(T& word) {
  return cuda::atomic_ref<T, cuda_scope<S>>(word);
}
#else
using memory_order = std::memory_order;
inline constexpr memory_order relaxed = std::memory_order_relaxed;
inline constexpr memory_order acquire = std::memory_order_acquire;
inline constexpr memory_order release = std::memory_order_release;
inline constexpr memory_order acq_rel = std::memory_order_acq_rel;
inline constexpr memory_order seq_cst = std::memory_order_seq_cst;

template <scope S, class T>
inline auto atomic_on(T& word) {
  return std::atomic_ref<T>(word);
}
#endif

template <scope S, class T>
AGIO_HD inline T load(T& word, memory_order order) {
  return atomic_on<S>(word).load(order);
}

template <scope S, class T>
AGIO_HD inline void store(T& word, T value, memory_order order) {
  atomic_on<S>(word).store(value, order);
}

template <scope S, class T>
AGIO_HD inline T fetch_add(T& word, T value, memory_order order) {
  return atomic_on<S>(word).fetch_add(value, order);
}

template <scope S, class T>
AGIO_HD inline T fetch_or(T& word, T value, memory_order order) {
  return atomic_on<S>(word).fetch_or(value, order);
}

template <scope S, class T>
AGIO_HD inline T fetch_and(T& word, T value, memory_order order) {
  return atomic_on<S>(word).fetch_and(value, order);
}

template <scope S, class T>
AGIO_HD inline T exchange(T& word, T value, memory_order order) {
  return atomic_on<S>(word).exchange(value, order);
}

template <scope S, class T>
AGIO_HD inline bool compare_exchange(T& word, T& expected, T desired, memory_order order) {
  return atomic_on<S>(word).compare_exchange_strong(expected, desired, order,
                                                    order == release   ? relaxed
                                                    : order == acq_rel ? acquire
                                                                       : order);
}

// Several loads that must each acquire, issued together: on the device relaxed loads and one
// fence after them (acquire loads one after another would each wait for the last); on the host
// acquire loads, which ThreadSanitizer understands (it does not model fences).
#if defined(__CUDA_ARCH__)
inline constexpr memory_order batch_load = relaxed;
template <scope S>
AGIO_HD inline void batch_load_fence() {
  cuda::atomic_thread_fence(acquire, cuda_scope<S>);
}
#else
inline constexpr memory_order batch_load = acquire;
template <scope S>
AGIO_HD inline void batch_load_fence() {}
#endif

}  // namespace agio::detail
