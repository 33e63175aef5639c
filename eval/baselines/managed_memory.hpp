#pragma once
// CUDA managed (unified) memory, the baseline the host tier is measured against (graph-tiers,
// DLRM): an allocation advised to live in host memory and be read by the GPU over PCIe where it
// lies (preferred location host, accessed by the GPU), moved to the GPU and back on request
// (cudaMemPrefetchAsync); and a hold on the GPU's free memory, so that managed memory has no
// more of the GPU than a cache of a given size. GPU only (nvcc). cudaFree waits for every
// running kernel, so these are used on runtimes without a completion service.
#if defined(__CUDACC__)
#include <cstddef>

#include "agio/runtime/launch.hpp"

namespace agio::bench {

// Holds the GPU's free memory to `bytes` while it lives, by allocating the rest (0: nothing).
class gpu_memory_cap {
 public:
  explicit gpu_memory_cap(std::size_t bytes) {
    if (bytes == 0) return;
    std::size_t free_bytes = 0, total_bytes = 0;
    throw_on_cuda_error(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (free_bytes <= bytes) return;
    throw_on_cuda_error(cudaMalloc(&held_, free_bytes - bytes), "holding GPU memory back from managed memory");
  }
  ~gpu_memory_cap() {
    if (held_ != nullptr) cudaFree(held_);
  }
  gpu_memory_cap(const gpu_memory_cap&) = delete;
  gpu_memory_cap& operator=(const gpu_memory_cap&) = delete;

 private:
  void* held_ = nullptr;
};

// `bytes` of managed memory (none for 0). With `in_host`, advised to live in host memory and be
// accessed by the current GPU; without, no advice (pages migrate to whoever touches them).
class managed_memory {
 public:
  managed_memory(std::size_t bytes, bool in_host) : bytes_(bytes) {
    if (bytes == 0) return;
    throw_on_cuda_error(cudaMallocManaged(&memory_, bytes), "cudaMallocManaged");
    int gpu = 0;
    throw_on_cuda_error(cudaGetDevice(&gpu), "cudaGetDevice");
    to_device_ = cudaMemLocation{cudaMemLocationTypeDevice, gpu};
    if (!in_host) return;
    throw_on_cuda_error(cudaMemAdvise(memory_, bytes, cudaMemAdviseSetPreferredLocation, host()),
                        "cudaMemAdvise (preferred location: host)");
    throw_on_cuda_error(cudaMemAdvise(memory_, bytes, cudaMemAdviseSetAccessedBy, to_device_),
                        "cudaMemAdvise (accessed by the GPU)");
  }
  ~managed_memory() {
    if (memory_ != nullptr) cudaFree(memory_);
  }
  managed_memory(const managed_memory&) = delete;
  managed_memory& operator=(const managed_memory&) = delete;

  template <class T>
  T* data() const {
    return static_cast<T*>(memory_);
  }
  std::size_t bytes() const { return bytes_; }
  // Queues a move of every page to the GPU, or to host memory, on `stream`.
  void move_to_gpu(cudaStream_t stream) const { move(to_device_, stream); }
  void move_to_host(cudaStream_t stream) const { move(host(), stream); }

 private:
  static cudaMemLocation host() { return cudaMemLocation{cudaMemLocationTypeHost, 0}; }
  void move(cudaMemLocation to, cudaStream_t stream) const {
    if (memory_ != nullptr) {
      throw_on_cuda_error(cudaMemPrefetchAsync(memory_, bytes_, to, 0, stream), "cudaMemPrefetchAsync");
    }
  }

  std::size_t bytes_;
  void* memory_ = nullptr;
  cudaMemLocation to_device_{};
};

}  // namespace agio::bench
#endif
