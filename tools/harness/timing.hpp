#pragma once
// Timing of benchmark work: GPU work between CUDA events on non-blocking streams (launch set-up
// not counted), CPU-thread jobs by the wall clock, and medians of repetitions. The CUDA parts
// exist only in files compiled by nvcc.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/registers.hpp"

namespace agio::bench {

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Wall-clock seconds of body().
template <class Body>
double wall_seconds(Body&& body) {
  const auto start = std::chrono::steady_clock::now();
  body();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

#if defined(__CUDACC__)
// A non-blocking stream (work beside the completion service must not sync with the legacy
// default stream), destroyed with its owner.
class cuda_stream {
 public:
  cuda_stream() { throw_on_cuda_error(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~cuda_stream() { cudaStreamDestroy(s_); }
  cuda_stream(const cuda_stream&) = delete;
  cuda_stream& operator=(const cuda_stream&) = delete;
  cudaStream_t get() const { return s_; }

 private:
  cudaStream_t s_ = nullptr;
};

// A CUDA event, destroyed with its owner.
class cuda_event {
 public:
  explicit cuda_event(unsigned flags = cudaEventDefault) {
    throw_on_cuda_error(cudaEventCreateWithFlags(&e_, flags), "cudaEventCreate");
  }
  ~cuda_event() { cudaEventDestroy(e_); }
  cuda_event(const cuda_event&) = delete;
  cuda_event& operator=(const cuda_event&) = delete;
  cudaEvent_t get() const { return e_; }

 private:
  cudaEvent_t e_ = nullptr;
};

// Two streams, `compute` and `io`: work queued on io overlaps compute's later work. timed()
// measures everything a body queues on both, between events.
class stream_pair {
 public:
  cudaStream_t compute() const { return compute_.get(); }
  // The I/O stream, after what the compute stream has queued so far.
  cudaStream_t io_after_compute() {
    cudaEventRecord(fork_.get(), compute_.get());
    cudaStreamWaitEvent(io_.get(), fork_.get(), 0);
    return io_.get();
  }
  // Seconds from the start of `body` until everything it queued on both streams has finished.
  template <class Body>
  double timed(Body&& body, const char* what) {
    cudaEventRecord(start_.get(), compute_.get());
    cudaStreamWaitEvent(io_.get(), start_.get(), 0);
    body();
    cudaEventRecord(join_.get(), io_.get());
    cudaStreamWaitEvent(compute_.get(), join_.get(), 0);
    cudaEventRecord(stop_.get(), compute_.get());
    throw_on_cuda_error(cudaStreamSynchronize(compute_.get()), what);
    float ms = 0;
    cudaEventElapsedTime(&ms, start_.get(), stop_.get());
    return ms / 1e3;
  }

 private:
  cuda_stream compute_, io_;
  cuda_event start_, stop_, join_, fork_;
};

// Seconds of the kernel that `launch(stream)` starts on a stream of its own, between CUDA
// events (launch set-up not counted); launch and run errors are thrown.
template <class Launch>
double time_kernel(Launch&& launch) {
  const cuda_stream stream;
  const cuda_event start, stop;
  cudaEventRecord(start.get(), stream.get());
  launch(stream.get());
  const cudaError_t launched = cudaGetLastError();
  cudaEventRecord(stop.get(), stream.get());
  const cudaError_t finished = cudaStreamSynchronize(stream.get());
  float ms = 0;
  cudaEventElapsedTime(&ms, start.get(), stop.get());
  throw_on_cuda_error(launched, "launching a benchmark kernel");
  throw_on_cuda_error(finished, "benchmark kernel");
  return ms / 1e3;
}
#endif

// Seconds of one run of `job`: the kernel alone (CUDA events) on the GPU, the threads'
// lifetime on the CPU backend.
template <class Job>
double time_job(runtime& rt, std::uint32_t threads, const Job& job) {
#if defined(__CUDACC__)
  if (rt.backend() == backend::gpu) {
    // A kernel that needs more stack than the runtime reserved is refused, before the timing
    // starts, as launch_job refuses it: beside the completion service it would never start.
    check_job_stack<Job>(rt);
    constexpr std::uint32_t block = 256;
    return time_kernel([&](cudaStream_t stream) {
      launch_job_kernel<<<(threads + block - 1) / block, block, 0, stream>>>(job, threads);
    });
  }
#endif
  return run_job(rt, threads, job);
}

// Registers per thread of the kernel that runs `Job` (-1 on CPU threads).
template <class Job>
int registers_of(const runtime& rt) {
  return rt.backend() == backend::gpu ? job_registers<Job>() : -1;
}

}  // namespace agio::bench
