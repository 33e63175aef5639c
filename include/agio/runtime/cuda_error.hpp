#pragma once
// Turns a failed CUDA runtime call into an exception that says what agio was doing. Only for
// files compiled by nvcc.
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace agio {

inline void throw_on_cuda_error(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("agio: ") + what + ": " + cudaGetErrorString(e));
}

}  // namespace agio
