// Job kernels beside the completion service: one that needs more stack per thread than the
// runtime reserved would make CUDA grow the stack, which waits for the service kernel forever;
// run_job refuses it with a message naming the option, and runs it once the option is raised.
// Jobs that contain a printf, an assert or a malloc start beside the service (CUDA sets each up
// at the first launch of a kernel using it, which waits for running kernels: start() has it done).
// A job whose kernel finds no room to start is reported (job_not_started) after
// job_start_timeout_ms, and runs once there is room. And a job's register cap (max_registers):
// its kernel keeps to it and computes the same.
// The assert case needs assert compiled in, which NDEBUG (release builds) would remove.
#undef NDEBUG
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cassert>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t words = 4096;  // 16 KiB of stack per thread

struct big_stack_job {
  std::uint32_t* out;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    volatile std::uint32_t local[words];
    for (std::uint32_t i = 0; i < words; ++i) local[i] = t + i;
    out[t] = local[(t * 7) % words];
  }
};

bool waiters_under_test() { return test::gpu_options().completion == completion_mode::waiters; }

runtime_options gpu_options(std::uint32_t stack_bytes) {
  runtime_options o = test::gpu_options();
  o.gpu_thread_stack_bytes = stack_bytes;
  return o;
}

std::vector<std::uint32_t> run_big_stack_job(runtime& rt) {
  constexpr std::uint32_t threads = 64;
  auto* out = static_cast<std::uint32_t*>(rt.allocate_device(threads * sizeof(std::uint32_t)));
  run_job(rt, threads, big_stack_job{out});
  std::vector<std::uint32_t> got(threads);
  rt.copy_to_host(got.data(), out, threads * sizeof(std::uint32_t));
  rt.free(out);
  return got;
}

TEST(GpuLaunch, JobNeedingMoreStackThanReservedIsRefusedBesideTheService) {
  if (waiters_under_test()) GTEST_SKIP() << "no service kernel to wait for in waiters mode";
  runtime rt(gpu_options(4096));
  rt.attach("ram:1M");
  rt.start();
  // The reservation is the process's and only grows: an earlier test may have made room.
  std::size_t reserved = 0;
  ASSERT_EQ(cudaDeviceGetLimit(&reserved, cudaLimitStackSize), cudaSuccess);
  if (reserved >= words * sizeof(std::uint32_t)) {
    rt.stop();
    GTEST_SKIP() << "an earlier test of this process reserved " << reserved << " bytes of stack";
  }
  try {
    run_big_stack_job(rt);
    FAIL() << "a job needing 16 KiB of stack ran with 4 KiB reserved";
  } catch (const std::length_error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_thread_stack_bytes"), std::string::npos) << e.what();
  }
  rt.stop();
}

TEST(GpuLaunch, JobRunsBesideTheServiceOnceTheStackIsReserved) {
  runtime rt(gpu_options(32 * 1024));
  rt.attach("ram:1M");
  rt.start();
  const std::vector<std::uint32_t> got = run_big_stack_job(rt);
  for (std::uint32_t t = 0; t < got.size(); ++t) EXPECT_EQ(got[t], t + (t * 7) % words) << "thread " << t;
  rt.stop();
}

// Jobs whose kernels contain a device-runtime call on a branch no thread takes (`never` is
// past the last thread), each writing t * 3 + 1 for thread t.
struct printf_job {
  std::uint32_t* out;
  std::uint32_t never;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    if (t == never) printf("thread %u\n", t);
    out[t] = t * 3 + 1;
  }
};
struct assert_job {
  std::uint32_t* out;
  std::uint32_t never;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    assert(t != never);
    out[t] = t * 3 + 1;
  }
};
struct malloc_job {
  std::uint32_t* out;
  std::uint32_t never;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    if (t == never) free(malloc(t));
    out[t] = t * 3 + 1;
  }
};

// Waits up to 10 s for the work on `stream` to end, or to fail (the caller's synchronize then
// says how). Work still going then holds the GPU for good, and stop() would not return either
// (on an H200 VM, a kernel waiting for the service ran past 120 s): so the test process exits,
// saying `failure`.
void end_within_10_s_or_exit(cudaStream_t stream, const std::string& failure) {
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (cudaStreamQuery(stream) == cudaErrorNotReady && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (cudaStreamQuery(stream) == cudaErrorNotReady) {
    std::fprintf(stderr, "FAILED: %s\n", failure.c_str());
    std::_Exit(1);
  }
}

// Launches the job on a stream of its own and waits up to 10 s for it: a kernel not started by
// then waits for the service.
template <class Job>
void expect_job_runs_beside_the_service(const char* what) {
  runtime_options o = test::gpu_options();
  o.completion = completion_mode::service;
  runtime rt(o);
  rt.attach("ram:1M");
  rt.start();
  constexpr std::uint32_t threads = 256;
  auto* out = static_cast<std::uint32_t*>(rt.allocate_device(threads * sizeof(std::uint32_t)));
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  launch_job(rt, threads, Job{out, threads}, stream);
  end_within_10_s_or_exit(
      stream, std::string("a job whose kernel contains ") + what + " had not finished beside the service after 10 s");
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  cudaStreamDestroy(stream);
  std::vector<std::uint32_t> got(threads);
  rt.copy_to_host(got.data(), out, threads * sizeof(std::uint32_t));
  for (std::uint32_t t = 0; t < threads; ++t) ASSERT_EQ(got[t], t * 3 + 1) << "thread " << t;
  rt.free(out);
  rt.stop();
}

constexpr const char* no_service_under_test =
    "compute-sanitizer runs one kernel at a time: no job runs beside a service";

TEST(GpuLaunch, JobContainingPrintfRunsBesideTheService) {
  if (waiters_under_test()) GTEST_SKIP() << no_service_under_test;
  expect_job_runs_beside_the_service<printf_job>("a printf");
}

TEST(GpuLaunch, JobContainingAssertRunsBesideTheService) {
  if (waiters_under_test()) GTEST_SKIP() << no_service_under_test;
  expect_job_runs_beside_the_service<assert_job>("an assert");
}

TEST(GpuLaunch, JobContainingMallocRunsBesideTheService) {
  if (waiters_under_test()) GTEST_SKIP() << no_service_under_test;
  expect_job_runs_beside_the_service<malloc_job>("a malloc");
}

// A kernel of 1024-thread blocks that spins until *release is set, each block setting its word
// of `resident` once it runs (plain stores: the VMs' GPUs have no atomics on host memory):
// launched two blocks per SM (at most 32 registers a thread), it holds every thread slot of the
// GPU, and no other kernel finds room.
__global__ void __launch_bounds__(1024, 2)
    fill_the_gpu(const volatile std::uint32_t* release, volatile std::uint32_t* resident) {
  if (threadIdx.x == 0) resident[blockIdx.x] = 1;
  while (*release == 0) __nanosleep(1'000);
}

struct numbered_job {
  std::uint32_t* out;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const { out[t] = t * 5 + 2; }
};

// A job whose kernel cannot start (every thread slot held by another kernel) is reported after
// job_start_timeout_ms instead of waited for without end; it stays queued and runs once room
// comes. Then a job on the free GPU runs as before. Waiters retire completions, so that nothing
// of agio's runs on the GPU beside the kernel that fills it.
TEST(GpuLaunch, JobThatFindsNoRoomIsReportedNotStartedAndRunsOnceThereIsRoom) {
  // The runtime first: CUDA must come up with eager module loading, which the runtime asks for.
  runtime_options o = test::gpu_options();
  o.completion = completion_mode::waiters;
  o.job_start_timeout_ms = 300;
  runtime rt(o);
  int device = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  cudaDeviceProp prop{};
  ASSERT_EQ(cudaGetDeviceProperties(&prop, device), cudaSuccess);
  int per_sm = 0;
  ASSERT_EQ(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fill_the_gpu, 1024, 0), cudaSuccess);
  if (per_sm * 1024 != prop.maxThreadsPerMultiProcessor) {
    GTEST_SKIP() << per_sm << " blocks of 1024 threads per SM do not fill its " << prop.maxThreadsPerMultiProcessor
                 << " thread slots";
  }
  rt.attach("ram:1M");
  rt.start();
  const auto blocks = static_cast<std::uint32_t>(per_sm * prop.multiProcessorCount);
  // Zeroed: the release word, then each block's.
  auto* flags = static_cast<std::uint32_t*>(rt.allocate_host((1 + blocks) * sizeof(std::uint32_t)));
  volatile std::uint32_t* release = flags;
  volatile std::uint32_t* resident = flags + 1;
  const auto running_blocks = [&] {
    std::uint32_t n = 0;
    for (std::uint32_t b = 0; b < blocks; ++b) n += resident[b];
    return n;
  };
  cudaStream_t filler;
  // Lets the filler go and waits for it, then for the job queued behind it.
  const auto let_go = [&] {
    *release = 1;
    end_within_10_s_or_exit(filler, "the kernel filling the GPU did not end 10 s after it was let go");
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  };
  constexpr std::uint32_t threads = 4096;
  auto* out = static_cast<std::uint32_t*>(rt.allocate_device(threads * sizeof(std::uint32_t)));
  // Before the filler: a memset queued behind it could run after the job.
  ASSERT_EQ(cudaMemset(out, 0, threads * sizeof(std::uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  ASSERT_EQ(cudaStreamCreateWithFlags(&filler, cudaStreamNonBlocking), cudaSuccess);
  fill_the_gpu<<<blocks, 1024, 0, filler>>>(release, resident);
  ASSERT_EQ(cudaGetLastError(), cudaSuccess);
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running_blocks() < blocks && std::chrono::steady_clock::now() < limit)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (const std::uint32_t running = running_blocks(); running < blocks) {
    let_go();
    FAIL() << "the filling kernel had " << running << " of its " << blocks << " blocks running after 10 s";
  }

  const auto launched = std::chrono::steady_clock::now();
  try {
    run_job(rt, threads, numbered_job{out});
    ADD_FAILURE() << "run_job returned though its kernel had no room to start";
  } catch (const job_not_started& e) {
    const auto waited = std::chrono::steady_clock::now() - launched;
    EXPECT_GE(waited, std::chrono::milliseconds(300));
    EXPECT_LT(waited, std::chrono::seconds(5));
    EXPECT_NE(std::string(e.what()).find("job_start_timeout_ms"), std::string::npos) << e.what();
  }
  let_go();
  cudaStreamDestroy(filler);
  std::vector<std::uint32_t> got(threads);
  rt.copy_to_host(got.data(), out, threads * sizeof(std::uint32_t));
  for (std::uint32_t t = 0; t < threads; ++t) ASSERT_EQ(got[t], t * 5 + 2) << "thread " << t << ", run once room came";

  // The GPU free again: the next job starts and finishes, and is not mistaken for one that did not.
  ASSERT_EQ(cudaMemset(out, 0, threads * sizeof(std::uint32_t)), cudaSuccess);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // run_job's stream does not wait for the memset
  run_job(rt, threads, numbered_job{out});
  rt.copy_to_host(got.data(), out, threads * sizeof(std::uint32_t));
  for (std::uint32_t t = 0; t < threads; ++t) ASSERT_EQ(got[t], t * 5 + 2) << "thread " << t;
  rt.free(out);
  rt.free(flags);
  rt.stop();
}

// Keeps 48 words that each round mixes into one another, which ptxas holds in registers of
// their own unless capped (integers, so the host's sums are the same).
template <unsigned Cap>
struct many_sums_job {
  static constexpr unsigned max_registers = Cap;
  static constexpr unsigned sums = 48;
  std::uint32_t* out;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::uint32_t s[sums];
#pragma unroll
    for (unsigned k = 0; k < sums; ++k) s[k] = t + k;
    for (std::uint32_t round = 0; round < 16; ++round) {
#pragma unroll
      for (unsigned k = 0; k < sums; ++k) s[k] = s[k] * 3u + (s[(k + 7) % sums] ^ round);
    }
    std::uint32_t total = 0;
#pragma unroll
    for (unsigned k = 0; k < sums; ++k) total += s[k] * (k + 1);
    out[t] = total;
  }
};

// Of the kernel run_job launches for `Job`.
template <class Job>
int registers_of() {
  cudaFuncAttributes kernel{};
  EXPECT_EQ(cudaFuncGetAttributes(&kernel, launch_job_kernel<start_marked_job<Job>>), cudaSuccess);
  return kernel.numRegs;
}

template <class Job>
void expect_sums_as_on_the_host(runtime& rt) {
  constexpr std::uint32_t threads = 1024;
  auto* out = static_cast<std::uint32_t*>(rt.allocate_device(threads * sizeof(std::uint32_t)));
  run_job(rt, threads, Job{out});
  std::vector<std::uint32_t> got(threads), want(threads);
  rt.copy_to_host(got.data(), out, threads * sizeof(std::uint32_t));
  rt.free(out);
  for (std::uint32_t t = 0; t < threads; ++t) Job{want.data()}(t, threads);
  EXPECT_EQ(got, want);
}

TEST(GpuLaunch, AJobsRegisterCapBindsItsKernel) {
  EXPECT_GT(registers_of<many_sums_job<0>>(), 32) << "without a cap the sums need more than 32 registers";
  EXPECT_LE(registers_of<many_sums_job<32>>(), 32);
  runtime rt(test::gpu_options());
  rt.attach("ram:1M");
  rt.start();
  expect_sums_as_on_the_host<many_sums_job<0>>(rt);
  expect_sums_as_on_the_host<many_sums_job<32>>(rt);  // spilled, the same sums
  rt.stop();
}

}  // namespace
}  // namespace agio
