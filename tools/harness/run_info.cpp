// Compiled by nvcc on GPU builds (it asks the CUDA runtime for the driver version), by the host
// compiler otherwise.
#include "harness/run_info.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>
#endif

namespace agio::bench {

std::string source_commit() { return AGIO_SOURCE_COMMIT; }

std::string driver_version() {
#if defined(__CUDACC__)
  int version = 0;
  if (cudaDriverGetVersion(&version) != cudaSuccess || version == 0) return "no NVIDIA driver";
  return "CUDA driver " + std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
#else
  return "none (CPU-only build)";
#endif
}

}  // namespace agio::bench
