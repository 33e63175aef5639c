// The array view's vector mean as one kernel, to read what its hit path compiles to (RESULTS.md,
// "Not yet measured or built": counters as reductions). No GPU needed:
//   nvcc -std=c++20 -arch=sm_90 -Iinclude -cubin -Xptxas -v view-probe.cu -o view.cubin
//   nvdisasm -c view.cubin | grep -oE "(QSPC|ATOMS?|REDG?)[A-Z0-9._]*" | sort | uniq -c
#include "agio/cache/array_view.hpp"
#include "agio/cache/policies/clock.hpp"

using view = agio::cache::array_view<float, agio::cache::clock>;

__global__ void mean(view v, unsigned long long n, double* out) {
  double s = 0;
  for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = 0;
    (void)v.get(0, i, x);
    s += x;
  }
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}
