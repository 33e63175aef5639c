#pragma once
// Runs a job on the runtime's "device threads": one GPU thread per index on the GPU backend,
// one std::thread per index on the CPU backend. Lets one job body (a struct with an AGIO_HD
// call operator taking (thread, threads)) serve the GPU, the CPU test suite and the tools.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agio/detail/atomic.hpp"
#include "agio/runtime/runtime.hpp"

#if defined(__CUDACC__)
#include "agio/runtime/cuda_error.hpp"
#endif

namespace agio {

// A job may cap the registers per thread of its kernel (`static constexpr unsigned
// max_registers = N;`, N from 24 to 255): a kernel whose register peak is on a path it rarely
// takes (a cache's miss path, in a kernel whose data the cache holds) then runs more warps per
// SM, at the price of spilling on that path. Jobs without one, or with 0, take ptxas's own
// choice (which is not that of a cap of 255).
template <class Job>
inline constexpr unsigned job_max_registers = 0;
template <class Job>
requires requires { Job::max_registers; }
inline constexpr unsigned job_max_registers<Job> = Job::max_registers;

#if defined(__CUDACC__)
template <class Job>
__device__ inline void run_job_thread(const Job& job, std::uint32_t threads) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) job(t, threads);
}
template <class Job>
requires(job_max_registers<Job> == 0) __global__ void launch_job_kernel(Job job, std::uint32_t threads) {
  run_job_thread(job, threads);
}
template <class Job>
requires(job_max_registers<Job> != 0) __global__ void __maxnreg__(job_max_registers<Job>)
    launch_job_kernel(Job job, std::uint32_t threads) {
  run_job_thread(job, threads);
}
#endif

#if defined(__CUDACC__)
// CUDA grows the stack for a kernel that needs more than is reserved, and that waits for every
// running kernel: beside the completion service the launch would never start. So such a job is
// refused before its launch.
template <class Job>
void check_job_stack(const runtime& rt) {
  if (!rt.running() || rt.completion() == completion_mode::waiters) return;
  // A kernel's stack need is fixed once compiled: asked once per job type, not at every launch.
  static const std::size_t needs = [] {
    cudaFuncAttributes kernel{};
    throw_on_cuda_error(cudaFuncGetAttributes(&kernel, launch_job_kernel<Job>), "cudaFuncGetAttributes");
    return kernel.localSizeBytes;
  }();
  std::size_t stack = 0;
  throw_on_cuda_error(cudaDeviceGetLimit(&stack, cudaLimitStackSize), "cudaDeviceGetLimit (stack)");
  if (needs > stack) {
    throw std::length_error("agio: a job kernel needs " + std::to_string(needs) +
                            " bytes of stack per thread, more than the " + std::to_string(stack) +
                            " reserved; beside the completion service its launch would never start. Raise "
                            "runtime_options::gpu_thread_stack_bytes");
  }
}

// Queues job(t, threads) for t in [0, threads) on `stream` (GPU backend) and returns at once:
// the job runs after the work queued there before it. In completion_mode::on_demand the caller
// holds a service lease until the job has finished (runtime::release_service_after(stream)).
template <class Job>
void launch_job(const runtime& rt, std::uint32_t threads, const Job& job, cudaStream_t stream,
                std::uint32_t block_threads = 256) {
  check_job_stack<Job>(rt);
  launch_job_kernel<<<(threads + block_threads - 1) / block_threads, block_threads, 0, stream>>>(job, threads);
  throw_on_cuda_error(cudaGetLastError(), "launching a job kernel");
}
#endif

// What run_job throws when its kernel has not started within runtime_options::
// job_start_timeout_ms. The kernel stays queued and runs once it can: what it uses must stay
// valid until then (after stop(), cudaDeviceSynchronize waits for it).
class job_not_started : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

#if defined(__CUDACC__)
// The job run_job launches: its first thread stores the runtime's start mark before the job
// runs, so that run_job can tell a kernel that has not started from one still running. Only
// run_job's kernels carry it: launch_job's (the evaluation's, whose registers are budgeted)
// stay as they were.
template <class Job>
struct start_marked_job {
  static constexpr unsigned max_registers = job_max_registers<Job>;
  Job job;
  std::uint64_t* mark;
  std::uint64_t ticket;
  __device__ void operator()(std::uint32_t t, std::uint32_t threads) const {
    if (t == 0) detail::store<detail::scope::system>(*mark, ticket, detail::relaxed);
    job(t, threads);
  }
};

// Waits for the job kernel just queued on `stream` with start mark `mark`: until it finishes
// once it has started, and throws job_not_started if it has not started by the mark's timeout.
// The first looks come quickly (a kernel usually starts within microseconds, and a short job's
// time is what run_job returns); later ones sleep up to a millisecond.
inline void wait_for_job_kernel(cudaStream_t stream, const runtime::job_start_mark& mark) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(mark.timeout_ms);
  for (std::uint32_t look = 0;; ++look) {
    const cudaError_t state = cudaStreamQuery(stream);
    if (state != cudaErrorNotReady) {
      throw_on_cuda_error(state, "job kernel");
      return;
    }
    if (detail::load<detail::scope::system>(*mark.word, detail::relaxed) == mark.ticket) break;
    if (std::chrono::steady_clock::now() >= limit) {
      throw job_not_started("agio: a job kernel had not started " + std::to_string(mark.timeout_ms) +
                            " ms after its launch (runtime_options::job_start_timeout_ms). Beside the completion "
                            "service a kernel whose launch makes CUDA wait for every running kernel never starts "
                            "(docs/ARCHITECTURE.md, Living beside other GPU code, names the known causes), and one "
                            "that finds no room on the GPU waits for room. It stays queued and runs once it can: "
                            "keep what it uses valid until then");
    }
    if (look < 1'000) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(look < 2'000 ? 50 : 1'000));
    }
  }
  throw_on_cuda_error(cudaStreamSynchronize(stream), "job kernel");
}
#endif

// Runs job(t, threads) for t in [0, threads) and returns the elapsed seconds. On the CPU
// backend every index is a thread of its own, so keep `threads` to a few dozen there. On the
// GPU backend it throws job_not_started when the kernel has not started within
// runtime_options::job_start_timeout_ms; once started, the job runs as long as it takes.
template <class Job>
double run_job(const runtime& rt, std::uint32_t threads, const Job& job,
               [[maybe_unused]] std::uint32_t block_threads = 256) {
  const auto start = std::chrono::steady_clock::now();
  const service_lease lease(rt);  // completion_mode::on_demand: the service runs while the job does
  if (rt.backend() == backend::gpu) {
#if defined(__CUDACC__)
    using marked = start_marked_job<Job>;
    check_job_stack<marked>(rt);
    const runtime::job_start_mark mark = rt.take_job_start_mark();
    cudaStream_t stream;
    throw_on_cuda_error(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
    // A stream destroyed with its kernel still queued (job_not_started) is released once the
    // kernel has run.
    const std::unique_ptr<CUstream_st, decltype(&cudaStreamDestroy)> owned(stream, cudaStreamDestroy);
    launch_job_kernel<<<(threads + block_threads - 1) / block_threads, block_threads, 0, stream>>>(
        marked{job, mark.word, mark.ticket}, threads);
    throw_on_cuda_error(cudaGetLastError(), "launching a job kernel");
    wait_for_job_kernel(stream, mark);
    rt.give_back_job_start_mark(mark);  // kept if the kernel did not start: it may still store to it
#else
    throw std::logic_error("agio: run_job on the GPU backend needs this file compiled by nvcc");
#endif
  } else {
    std::vector<std::thread> pool;
    pool.reserve(threads);
    for (std::uint32_t t = 0; t < threads; ++t) pool.emplace_back([&job, t, threads] { job(t, threads); });
    for (auto& th : pool) th.join();
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace agio
