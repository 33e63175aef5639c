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

// AGIO_HD for a rare path kept out of line on the device: inlined, its body would be compiled
// into every kernel that may take it, at the cost of compile time. (The call is not free: its
// caller may keep its arguments' objects in a stack frame.)
#if defined(__CUDACC__)
#define AGIO_HD_OUT_OF_LINE __host__ __device__ __noinline__
#else
#define AGIO_HD_OUT_OF_LINE
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
