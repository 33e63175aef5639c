// Throwaway: pins by compare-and-swap (guessing READY, unpinned) against pins by atomic add, with
// `share` consecutive warps pinning the same word, as the view's warps pin a line's word.
#include <cstdio>
#include <cstdint>
__device__ __forceinline__ unsigned cas_acquire(unsigned* p, unsigned e, unsigned d) {
  unsigned v;
  asm volatile("atom.acquire.gpu.global.cas.b32 %0, [%1], %2, %3;" : "=r"(v) : "l"(p), "r"(e), "r"(d) : "memory");
  return v;
}
__device__ __forceinline__ unsigned add_acquire(unsigned* p, unsigned d) {
  unsigned v;
  asm volatile("atom.acquire.gpu.global.add.u32 %0, [%1], %2;" : "=r"(v) : "l"(p), "r"(d) : "memory");
  return v;
}
__device__ __forceinline__ void red_release(unsigned* p, unsigned d) {
  asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(p), "r"(d) : "memory");
}
template <int Op>
__global__ void probe(unsigned* words, const float* data, float* out, int iters, int share, long long* cycles,
                      unsigned long long* tries) {
  const unsigned warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32, lane = threadIdx.x % 32;
  const unsigned nwarps = gridDim.x * blockDim.x / 32;
  float s = 0;
  unsigned long long attempts = 0;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    unsigned* w = words + ((warp + i * 7919u) % nwarps / share) * 32;
    unsigned v = 0;
    if (lane == 0) {
      if (Op == 0) {
        unsigned guess = 2;
        for (;;) {
          ++attempts;
          const unsigned old = cas_acquire(w, guess, guess + 8);
          if (old == guess) break;
          guess = old;
        }
        v = guess;
      }
      if (Op == 1) {
        ++attempts;
        v = add_acquire(w, 8);
      }
    }
    v = __shfl_sync(~0u, v, 0);
    __syncwarp();
    s += data[(size_t(i) * nwarps + warp) * 32 % (size_t(1) << 27) + lane + (v & 1)];
    __syncwarp();
    if (lane == 0) red_release(w, 0u - 8u);
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) cycles[blockIdx.x] = t1 - t0;
  if (lane == 0) atomicAdd(tries, attempts);
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
int main() {
  unsigned* words;
  float *data, *out;
  long long* cycles;
  unsigned long long* tries;
  const int blocks = 132 * 4, iters = 256, nwarps = blocks * 8;
  cudaMalloc(&words, nwarps * 128);
  cudaMalloc(&data, (size_t(1) << 27) * 4 + 4096);
  cudaMemset(data, 0, (size_t(1) << 27) * 4 + 4096);
  cudaMalloc(&out, 1 << 26);
  cudaMalloc(&cycles, 1 << 20);
  cudaMalloc(&tries, 8);
  unsigned* h = new unsigned[nwarps * 32];
  for (int i = 0; i < nwarps * 32; ++i) h[i] = 2;
  const char* names[] = {"pin by CAS (guess READY)", "pin by atomic add"};
  for (int share : {1, 8, 16, 32})
    for (int op = 0; op < 2; ++op) {
      cudaMemcpy(words, h, nwarps * 128, cudaMemcpyHostToDevice);
      cudaMemset(tries, 0, 8);
      cudaEvent_t a, b;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      cudaEventRecord(a);
      if (op == 0) probe<0><<<blocks, 256>>>(words, data, out, iters, share, cycles, tries);
      else probe<1><<<blocks, 256>>>(words, data, out, iters, share, cycles, tries);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      long long c;
      unsigned long long t;
      cudaMemcpy(&c, cycles, 8, cudaMemcpyDeviceToHost);
      cudaMemcpy(&t, tries, 8, cudaMemcpyDeviceToHost);
      printf("%-26s share %2d: %.3f ms, %.0f cycles per iteration (block 0), %.2f atomics per pin\n", names[op], share,
             ms, double(c) / iters, double(t) / (double(nwarps) * iters));
    }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
