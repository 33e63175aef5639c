// Does a kernel launched beside a running persistent kernel start, when it (never) calls
// printf / malloc / assert? argv[1]: which kernel; argv[2]: what is primed before the
// persistent kernel starts (none, printf-kernel, printf-limit, malloc-limit, all).
#include <cassert>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cuda_runtime.h>
#include <thread>

__global__ void persistent(volatile int* stop) {
  while (*stop == 0) __nanosleep(1000);
}
__global__ void plain(int* out, int never) { out[threadIdx.x] = never == 12345 ? 1 : 2; }
__global__ void with_printf(int* out, int never) {
  if (never == 12345) printf("never %d\n", never);
  out[threadIdx.x] = 2;
}
__global__ void with_printf2(int* out, int never) {
  if (never == 54321) printf("never again %d\n", never);
  out[threadIdx.x] = 2;
}
__global__ void with_malloc(int* out, int never) {
  if (never == 12345) {
    int* p = (int*)malloc(16);
    out[0] = p ? 1 : 0;
    free(p);
  }
  out[threadIdx.x] = 2;
}
__global__ void with_assert(int* out, int never) {
  assert(never != 12345);
  out[threadIdx.x] = 2;
}

int main(int argc, char** argv) {
  const char* which = argv[1];
  const char* prime = argv[2];
  int* out;
  cudaMalloc(&out, 4096);
  int* stop;
  cudaHostAlloc(&stop, 4, cudaHostAllocMapped);
  *stop = 0;
  int* stop_dev;
  cudaHostGetDevicePointer(&stop_dev, stop, 0);
  if (!strcmp(prime, "printf-kernel") || !strcmp(prime, "all")) {
    with_printf2<<<1, 32>>>(out, 0);
    cudaDeviceSynchronize();
  }
  if (!strcmp(prime, "printf-limit") || !strcmp(prime, "all")) {
    size_t v = 0;
    cudaDeviceGetLimit(&v, cudaLimitPrintfFifoSize);
    printf("printf fifo %zu\n", v);
    printf("set rc %d\n", (int)cudaDeviceSetLimit(cudaLimitPrintfFifoSize, v));
  }
  if (!strcmp(prime, "malloc-limit") || !strcmp(prime, "all")) {
    size_t v = 0;
    cudaDeviceGetLimit(&v, cudaLimitMallocHeapSize);
    printf("heap %zu\n", v);
    printf("set rc %d\n", (int)cudaDeviceSetLimit(cudaLimitMallocHeapSize, v));
  }
  if (!strcmp(prime, "malloc-kernel")) {
    with_malloc<<<1, 32>>>(out, 0);
    cudaDeviceSynchronize();
  }
  if (!strcmp(prime, "assert-kernel")) {
    with_assert<<<1, 32>>>(out, 0);
    cudaDeviceSynchronize();
  }
  cudaStream_t ps, js;
  cudaStreamCreateWithFlags(&ps, cudaStreamNonBlocking);
  cudaStreamCreateWithFlags(&js, cudaStreamNonBlocking);
  persistent<<<1, 32, 0, ps>>>(stop_dev);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const auto t0 = std::chrono::steady_clock::now();
  if (!strcmp(which, "plain")) plain<<<1, 32, 0, js>>>(out, 0);
  if (!strcmp(which, "printf")) with_printf<<<1, 32, 0, js>>>(out, 0);
  if (!strcmp(which, "malloc")) with_malloc<<<1, 32, 0, js>>>(out, 0);
  if (!strcmp(which, "assert")) with_assert<<<1, 32, 0, js>>>(out, 0);
  const double launched = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  bool done = false;
  while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3))
    if (cudaStreamQuery(js) == cudaSuccess) {
      done = true;
      break;
    }
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  *stop = 1;
  cudaDeviceSynchronize();
  printf("RESULT kernel %-7s primed %-14s launch %.4f s, %s beside the persistent kernel (%.3f s); err %s\n", which,
         prime, launched, done ? "FINISHED" : "NOT FINISHED", took, cudaGetErrorString(cudaGetLastError()));
}
