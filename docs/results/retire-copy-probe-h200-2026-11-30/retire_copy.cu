// Probe: how fast one warp can move a window of N 4 KiB entries from mapped pinned host memory
// into GPU memory, as the completion service's retirer does (copy_range<8> per entry, a fence
// after each), against one fence per window and against bulk asynchronous copies (TMA,
// cp.async.bulk) through shared memory, which hold no registers while in flight.
#include <cuda/ptx>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace ptx = cuda::ptx;

#define CK(x)                                             \
  do {                                                    \
    cudaError_t e = (x);                                  \
    if (e != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e)); \
      std::exit(1);                                       \
    }                                                     \
  } while (0)

constexpr unsigned entry_bytes = 4096;
constexpr unsigned max_entries = 32;

__device__ inline void copy8(std::uint64_t dst, std::uint64_t src, unsigned bytes, unsigned me) {
  auto* dv = reinterpret_cast<uint4*>(dst);
  const auto* sv = reinterpret_cast<const uint4*>(src);
  const unsigned n = bytes / 16, lanes = 32;
  unsigned i = me;
  for (; i + 7 * lanes < n; i += 8 * lanes) {
    uint4 v[8];
#pragma unroll
    for (unsigned k = 0; k < 8; ++k) v[k] = sv[i + k * lanes];
#pragma unroll
    for (unsigned k = 0; k < 8; ++k) dv[i + k * lanes] = v[k];
  }
  for (; i < n; i += lanes) dv[i] = sv[i];
}

// mode 0: a fence after each entry (as the retirer); 1: one fence per window.
__global__ void warp_copy(const char* host, char* dev, const unsigned* offsets, unsigned entries, unsigned reps,
                          int mode, unsigned long long* ns) {
  const unsigned lane = threadIdx.x;
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (unsigned r = 0; r < reps; ++r) {
    for (unsigned e = 0; e < entries; ++e) {
      const unsigned o = offsets[(r * entries + e) % 65536];
      copy8(reinterpret_cast<std::uint64_t>(dev + std::uint64_t{e} * entry_bytes),
            reinterpret_cast<std::uint64_t>(host + std::uint64_t{o} * entry_bytes), entry_bytes, lane);
      if (mode == 0) {
        __threadfence();
        __syncwarp();
      }
    }
    __threadfence();
    __syncwarp();
  }
  unsigned long long t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (lane == 0) *ns = t1 - t0;
}

__global__ void bulk_copy(const char* host, char* dev, const unsigned* offsets, unsigned entries, unsigned reps,
                          unsigned long long* ns) {
  extern __shared__ __align__(128) char smem[];
  __shared__ __align__(8) std::uint64_t bar;
  const unsigned lane = threadIdx.x;
  const std::uint32_t size = entry_bytes;
  const std::uint32_t window = entries * entry_bytes;
  if (lane == 0) {
    ptx::mbarrier_init(&bar, 1);
    ptx::fence_mbarrier_init(ptx::sem_release, ptx::scope_cluster);
  }
  __syncwarp();
  unsigned long long t0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  for (unsigned r = 0; r < reps; ++r) {
    if (lane == 0) ptx::mbarrier_arrive_expect_tx(ptx::sem_release, ptx::scope_cta, ptx::space_shared, &bar, window);
    __syncwarp();
    if (lane < entries) {
      const unsigned o = offsets[(r * entries + lane) % 65536];
      ptx::cp_async_bulk(ptx::space_cluster, ptx::space_global, smem + lane * entry_bytes,
                         host + std::uint64_t{o} * entry_bytes, size, &bar);
    }
    while (!ptx::mbarrier_try_wait_parity(&bar, r & 1u)) {
    }
    ptx::fence_proxy_async(ptx::space_shared);
    if (lane < entries) {
      ptx::cp_async_bulk(ptx::space_global, ptx::space_shared, dev + std::uint64_t{lane} * entry_bytes,
                         smem + lane * entry_bytes, size);
      ptx::cp_async_bulk_commit_group();
      ptx::cp_async_bulk_wait_group(ptx::n32_t<0>{});
    }
    __threadfence();
    __syncwarp();
  }
  unsigned long long t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  if (lane == 0) *ns = t1 - t0;
}

int main() {
  const std::size_t host_bytes = std::size_t{256} << 20;
  const unsigned slots = host_bytes / entry_bytes;
  char* host = nullptr;
  CK(cudaHostAlloc(&host, host_bytes, cudaHostAllocMapped));
  for (std::size_t i = 0; i < host_bytes; i += 4)
    *reinterpret_cast<unsigned*>(host + i) = static_cast<unsigned>(i * 2654435761u);
  char* host_dev = nullptr;
  CK(cudaHostGetDevicePointer(&host_dev, host, 0));
  char* dev = nullptr;
  CK(cudaMalloc(&dev, max_entries * entry_bytes));
  std::vector<unsigned> off(65536);
  srand(7);
  for (auto& o : off) o = static_cast<unsigned>(rand()) % slots;
  unsigned* doff = nullptr;
  CK(cudaMalloc(&doff, off.size() * 4));
  CK(cudaMemcpy(doff, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
  unsigned long long* dns = nullptr;
  CK(cudaMalloc(&dns, 8));
  CK(cudaFuncSetAttribute(bulk_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, max_entries * entry_bytes));
  const unsigned reps = 4000;
  const unsigned counts[] = {1, 4, 8, 16, 32};
  std::printf("entries  mode             us/window  us/entry  GB/s  check\n");
  for (int round = 0; round < 3; ++round) {
    for (unsigned n : counts) {
      for (int mode = 0; mode < 3; ++mode) {
        CK(cudaMemset(dev, 0, max_entries * entry_bytes));
        if (mode < 2) {
          warp_copy<<<1, 32>>>(host_dev, dev, doff, n, reps, mode, dns);
        } else {
          bulk_copy<<<1, 32, n * entry_bytes>>>(host_dev, dev, doff, n, reps, dns);
        }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        unsigned long long ns = 0;
        CK(cudaMemcpy(&ns, dns, 8, cudaMemcpyDeviceToHost));
        std::vector<char> got(n * entry_bytes);
        CK(cudaMemcpy(got.data(), dev, got.size(), cudaMemcpyDeviceToHost));
        bool ok = true;
        for (unsigned e = 0; e < n; ++e) {
          const unsigned o = off[((reps - 1) * n + e) % 65536];
          ok = ok && std::memcmp(got.data() + e * entry_bytes, host + std::size_t{o} * entry_bytes, entry_bytes) == 0;
        }
        const double us = ns / 1e3 / reps;
        const char* names[] = {"fence each", "fence a window", "bulk via smem"};
        std::printf("%7u  %-15s %9.2f %9.2f %5.2f  %s\n", n, names[mode], us, us / n, n * entry_bytes / (us * 1e3),
                    ok ? "ok" : "WRONG");
      }
    }
  }
  return 0;
}
