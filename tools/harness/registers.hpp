#pragma once
// Registers per thread of a benchmark's kernels, as the compiler allotted them (the evaluation's
// AGILE Figure 12). Each workload reports its own kernels; agio-eval evaluation gathers them.
#include <string>
#include <vector>

#if defined(__CUDACC__)
#include "agio/runtime/launch.hpp"
#endif

namespace agio::bench {

struct register_row {
  std::string workload, kernel, model;  // model: async, sync or bam_style (eval/baselines/io_model.hpp)
  int registers = -1;
};

// Registers per thread of the kernel that runs `Job` (launch_job_kernel<Job>); -1 without a GPU.
template <class Job>
int job_registers() {
#if defined(__CUDACC__)
  cudaFuncAttributes attr{};
  if (cudaFuncGetAttributes(&attr, launch_job_kernel<Job>) == cudaSuccess) return attr.numRegs;
  cudaGetLastError();  // no GPU: clear the error, report none
#endif
  return -1;
}

}  // namespace agio::bench
