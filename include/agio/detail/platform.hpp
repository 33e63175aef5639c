#pragma once
// The one host/device annotation of agio. Every layer from spec to runtime compiles both for
// the GPU (nvcc) and for plain C++ host builds (g++/clang, used by the CPU test suite under
// sanitizers), so the annotation must vanish when no CUDA compiler is involved.

#if defined(__CUDACC__)
#define AGIO_HD __host__ __device__
#define AGIO_DEVICE __device__
#else
#define AGIO_HD
#define AGIO_DEVICE
#endif

namespace agio::detail {

// True while compiling device code; lets one function body pick the GPU or CPU primitive.
AGIO_HD constexpr bool on_device() {
#if defined(__CUDA_ARCH__)
  return true;
#else
  return false;
#endif
}

}  // namespace agio::detail
