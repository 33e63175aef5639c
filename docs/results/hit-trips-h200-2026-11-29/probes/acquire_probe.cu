// Throwaway: what an acquire costs a busy SM. Each warp's lane 0 runs a loop of one memory
// operation on an address of its own (or one shared by `share` consecutive warps), while all
// lanes load 128 B of data per iteration (as the view's hit does).
#include <cstdio>
#include <cstdint>
__device__ __forceinline__ unsigned ld_relaxed(const unsigned* p) {
  unsigned v;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
  unsigned v;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
  return v;
}
__device__ __forceinline__ unsigned cas_acquire(unsigned* p, unsigned e, unsigned d) {
  unsigned v;
  asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;" : "=r"(v) : "l"(p), "r"(e), "r"(d) : "memory");
  return v;
}
__device__ __forceinline__ unsigned add_relaxed(unsigned* p, unsigned d) {
  unsigned v;
  asm volatile("atom.relaxed.gpu.global.add.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "r"(d) : "memory");
  return v;
}
__device__ __forceinline__ void red_release(unsigned* p, unsigned d) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(d) : "memory");
}
__device__ __forceinline__ void red_relaxed(unsigned* p, unsigned d) {
  asm volatile("red.relaxed.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(d) : "memory");
}
__device__ __forceinline__ void fence_acqrel() { asm volatile("fence.acq_rel.gpu;" ::: "memory"); }
template <int Op>
__global__ void probe(unsigned* words, const float* data, float* out, int iters, int share, long long* cycles) {
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const unsigned nwarps = gridDim.x * blockDim.x / 32;
  unsigned* w = words + (warp / share) * 32;
  float s = 0;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    unsigned v = 0;
    if (lane == 0) {
      if (Op == 0) v = ld_relaxed(w);
      if (Op == 1) v = ld_acquire(w);
      if (Op == 2) {
        v = cas_acquire(w, 0, 0);
      }
      if (Op == 3) {
        v = add_relaxed(w, 1);
      }
      if (Op == 4) {
        v = ld_relaxed(w);
        fence_acqrel();
      }
      if (Op == 5) {
        v = cas_acquire(w, 0, 0);
      }
      if (Op == 6) {
        v = add_relaxed(w, 1);
      }
    }
    v = __shfl_sync(~0u, v, 0);
    __syncwarp();
    s += data[(size_t(i) * nwarps + warp) * 32 % (size_t(1) << 27) + lane + (v & 1)];
    __syncwarp();
    if (lane == 0) {
      if (Op == 5) red_release(w, 0);
      if (Op == 6) red_relaxed(w, 0xffffffffu);
    }
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  unsigned* words;
  float *data, *out;
  long long* cycles;
  cudaMalloc(&words, (1 << 20) * 4 * 32);
  cudaMemset(words, 0, (1 << 20) * 4 * 32);
  cudaMalloc(&data, (size_t(1) << 27) * 4 + 4096);
  cudaMemset(data, 0, (size_t(1) << 27) * 4 + 4096);
  cudaMalloc(&out, 1 << 26);
  cudaMalloc(&cycles, 1 << 20);
  const char* names[] = {"ld.relaxed.gpu",         "ld.acquire.gpu",           "cas.acquire",
                         "atom.add.relaxed",       "ld.relaxed+fence.acq_rel", "cas.acquire+red.release",
                         "add.relaxed+red.relaxed"};
  const int blocks = 132 * 4, iters = 256;
  for (int share : {1, 32})
    for (int op = 0; op < 7; ++op) {
      cudaEvent_t a, b;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      auto launch = [&] {
        switch (op) {
          case 0: probe<0><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 1: probe<1><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 2: probe<2><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 3: probe<3><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 4: probe<4><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 5: probe<5><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
          case 6: probe<6><<<blocks, 256>>>(words, data, out, iters, share, cycles); break;
        }
      };
      launch();
      cudaEventRecord(a);
      launch();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      long long c;
      cudaMemcpy(&c, cycles, 8, cudaMemcpyDeviceToHost);
      printf("%-26s share %2d: %.3f ms, %.0f cycles per iteration (block 0)\n", names[op], share, ms,
             double(c) / iters);
    }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
