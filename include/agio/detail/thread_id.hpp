#pragma once
// A number that spreads submitters over queue pairs: warps on the GPU (so that a warp's
// commands meet at one doorbell and go out in one batch), threads on the host.
#include <cstdint>

#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"

#include <atomic>

namespace agio::detail {

AGIO_HD inline std::uint32_t submitter_index() {
#if defined(__CUDA_ARCH__)
  const std::uint64_t block =
      blockIdx.x + std::uint64_t{gridDim.x} * (blockIdx.y + std::uint64_t{gridDim.y} * blockIdx.z);
  const std::uint32_t thread = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
  return static_cast<std::uint32_t>((block * (blockDim.x * blockDim.y * blockDim.z) + thread) / 32);
#else
  static std::atomic<std::uint32_t> next{0};
  thread_local const std::uint32_t mine = next.fetch_add(1, std::memory_order_relaxed);
  return mine;
#endif
}

// A number unique to the calling thread among those running: the global thread index on the
// GPU, a per-thread counter on the host. The lock-chain debugger keys its records on it.
AGIO_HD inline std::uint32_t thread_index() {
#if defined(__CUDA_ARCH__)
  return submitter_index() * warp::size + warp::lane_id();
#else
  return submitter_index();
#endif
}

// Which processor the caller runs on: the SM on the GPU, the thread on the host. Counters that
// every thread bumps are striped by it, so concurrent increments land on different addresses
// instead of queueing at one (same-address atomics serialize in the GPU's L2).
AGIO_HD inline std::uint32_t processor_index() {
#if defined(__CUDA_ARCH__)
  std::uint32_t sm = 0;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  return sm;
#else
  return submitter_index();
#endif
}

}  // namespace agio::detail
