#pragma once
// Whole-line access for code that reads every element of a line: the warp pins the line once
// (one lane calls acquire_line), all lanes read it coalesced, and it is unpinned after every
// lane is done. This pays the cache's per-access cost once per 4 KiB instead of once per
// element, which is what a streaming kernel (vector mean) needs to stay near native speed.
#include <cstdint>

#include "agio/cache/cache.hpp"

namespace agio::bench::cache_bench {

// Runs body(line bytes) on every lane of the calling warp for the line holding `block` of
// `dev`. On the GPU all 32 lanes must call it together with the same block; on CPU threads
// each thread is a warp of one. Returns the acquire status (body does not run on failure).
template <class Handle, class Body>
AGIO_HD status with_line(const Handle& cache, std::uint32_t dev, std::uint64_t block, Body&& body) {
  const deadline limit = deadline::after_ns(cache.wait_timeout_ns);
  std::uint32_t line = cache::no_line;
#if defined(__CUDA_ARCH__)
  constexpr unsigned all = 0xffffffffu;
  const bool leader = threadIdx.x % 32 == 0;
  std::uint32_t word = 0;
  if (leader) word = cache.acquire_line(dev, block, line, limit).pack();
  line = __shfl_sync(all, line, 0);
  const status s = status::unpack(__shfl_sync(all, word, 0));
  if (s.ok()) body(static_cast<const std::byte*>(cache.line_data(line)));
  __syncwarp(all);  // every lane has read the line before it may be evicted
  if (leader && s.ok()) cache.unpin(line);
  return s;
#else
  const status s = cache.acquire_line(dev, block, line, limit);
  if (!s.ok()) return s;
  body(static_cast<const std::byte*>(cache.line_data(line)));
  cache.unpin(line);
  return s;
#endif
}

}  // namespace agio::bench::cache_bench
