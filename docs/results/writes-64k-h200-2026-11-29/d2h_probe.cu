// Throwaway probe: how fast the GPU's own warps write pinned host memory (whole warps, 16-byte
// stores, coalesced) against a cudaMemcpy device-to-host of the same size.
#include <cstdio>
#include <cuda_runtime.h>
__global__ void store_to_host(uint4* dst, const uint4* src, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
    dst[i] = src[i];
}
int main() {
  const size_t bytes = size_t(1) << 30, n = bytes / 16;
  uint4 *host, *hostd, *dev;
  cudaHostAlloc(&host, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
  cudaHostGetDevicePointer(&hostd, host, 0);
  cudaMalloc(&dev, bytes);
  cudaMemset(dev, 1, bytes);
  cudaEvent_t a, b;
  cudaEventCreate(&a);
  cudaEventCreate(&b);
  for (int grid : {132 * 2, 132 * 8, 132 * 32}) {
    for (int rep = 0; rep < 3; ++rep) {
      cudaEventRecord(a);
      store_to_host<<<grid, 256>>>(hostd, dev, n);
      cudaEventRecord(b);
      cudaEventSynchronize(b);
      float ms;
      cudaEventElapsedTime(&ms, a, b);
      printf("warps storing to host, %d blocks: %.1f GB/s\n", grid, bytes / ms / 1e6);
    }
  }
  for (int rep = 0; rep < 3; ++rep) {
    cudaEventRecord(a);
    cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost);
    cudaEventRecord(b);
    cudaEventSynchronize(b);
    float ms;
    cudaEventElapsedTime(&ms, a, b);
    printf("cudaMemcpy device to host: %.1f GB/s\n", bytes / ms / 1e6);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
