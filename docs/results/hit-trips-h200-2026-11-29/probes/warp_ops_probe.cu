// Throwaway: the cost of the warp operations and clock reads on a cache hit's path.
#include <cstdio>
#include <cstdint>
__device__ __forceinline__ uint64_t gtimer() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
template <int Op>
__global__ void probe(const uint64_t* keys, uint64_t* out, int iters) {
  uint64_t k = keys[threadIdx.x & 31];
  uint64_t acc = 0;
  long long t0 = clock64();
  for (int i = 0; i < iters; ++i) {
    if (Op == 0) {
      unsigned a = __activemask();
      unsigned m = __match_any_sync(a, k) & __match_any_sync(a, k ^ 0x1234);
      acc += m;
      k += m & 1;
    }
    if (Op == 1) {
      unsigned a = __activemask();
      unsigned f = __ffs(a) - 1;
      uint64_t l = __shfl_sync(a, k, f);
      uint64_t o = __shfl_sync(a, k ^ 0x1234, f);
      unsigned b = __ballot_sync(a, l == k && o == (k ^ 0x1234));
      acc += b;
      k += b & 1;
    }
    if (Op == 2) {
      uint64_t t = gtimer();
      acc += t;
      k += t & 1;
    }
    if (Op == 3) {
      unsigned a = __activemask();
      unsigned m = __match_any_sync(a, k);
      acc += m;
      k += m & 1;
    }
  }
  long long t1 = clock64();
  if (threadIdx.x == 0) out[blockIdx.x] = (t1 - t0);
  if (acc == 42) out[1000] = acc;
}
int main() {
  uint64_t *keys, *out;
  cudaMalloc(&keys, 32 * 8);
  cudaMalloc(&out, 8192 * 8);
  uint64_t h[32];
  for (int i = 0; i < 32; ++i) h[i] = 77;
  cudaMemcpy(keys, h, sizeof h, cudaMemcpyHostToDevice);
  const char* names[] = {"2x match_any u64", "2x shfl u64 + ballot", "globaltimer read", "1x match_any u64"};
  for (int blocks : {1, 132 * 8})
    for (int op = 0; op < 4; ++op) {
      const int iters = 4096;
      cudaEvent_t a, b;
      cudaEventCreate(&a);
      cudaEventCreate(&b);
      auto launch = [&] {
        if (op == 0) probe<0><<<blocks, 256>>>(keys, out, iters);
        if (op == 1) probe<1><<<blocks, 256>>>(keys, out, iters);
        if (op == 2) probe<2><<<blocks, 256>>>(keys, out, iters);
        if (op == 3) probe<3><<<blocks, 256>>>(keys, out, iters);
      };
      launch();
      cudaEventRecord(a);
      launch();
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      uint64_t c;
      cudaMemcpy(&c, out, 8, cudaMemcpyDeviceToHost);
      printf("%-22s blocks %5d: %.1f cycles/iter per warp (block 0), %.3f ms, %.2f ns per warp-op GPU-wide\n",
             names[op], blocks, double(c) / iters, ms, ms * 1e6 / (double(blocks) * 8 * iters));
    }
}
