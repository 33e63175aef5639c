// completion_mode::on_demand on the GPU: the completion service kernel runs only while a lease is
// held, so a device-wide synchronize (what torch.cuda.synchronize() does) returns between jobs
// and after a job queued on a stream of the caller's, whose lease is given back behind it.
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t block_bytes = 4096;

// Each thread writes or reads block t: a word of it holds t + seed.
struct blocks_job {
  io_handle io;
  bool write;
  std::uint32_t seed;
  std::uint32_t* data;  // block_bytes / 4 words per block
  std::uint32_t* failures;
  __device__ void operator()(std::uint32_t t, std::uint32_t) const {
    std::uint32_t* block = data + std::size_t{t} * (block_bytes / 4);
    if (write) block[0] = t + seed;
    const status s = write ? io.write(0, t, 1, block) : io.read(0, t, 1, block);
    if (!s.ok() || (!write && block[0] != t + seed)) atomicAdd(failures, 1u);
  }
};

// Whether cudaDeviceSynchronize() returns within `limit`. A call that does not stays blocked on a
// thread of its own until the runtime stops and its service ends.
bool device_synchronizes_within(std::chrono::seconds limit) {
  auto returned = std::make_shared<std::atomic<bool>>(false);
  std::thread([returned] {
    cudaDeviceSynchronize();
    returned->store(true);
  }).detach();
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!returned->load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

class GpuOnDemand : public ::testing::Test {
 protected:
  void SetUp() override {
    if (test::gpu_options().completion == completion_mode::waiters)
      GTEST_SKIP() << "compute-sanitizer runs one kernel at a time: a job and its service cannot meet";
    runtime_options o = test::gpu_options();
    o.completion = completion_mode::on_demand;
    rt = std::make_unique<runtime>(o);
    rt->attach("ram:4M?lba=4096");
    rt->start();
    data = static_cast<std::uint32_t*>(rt->allocate_device(threads * block_bytes));
    failures = static_cast<std::uint32_t*>(rt->allocate_device(sizeof(std::uint32_t)));
  }

  std::uint32_t failed() const {
    std::uint32_t n = 0;
    rt->copy_to_host(&n, failures, sizeof n);
    return n;
  }

  static constexpr std::uint32_t threads = 256;
  std::unique_ptr<runtime> rt;
  std::uint32_t* data = nullptr;
  std::uint32_t* failures = nullptr;
};

TEST_F(GpuOnDemand, DeviceSynchronizeReturnsBetweenJobs) {
  for (std::uint32_t round = 0; round < 10; ++round) {
    run_job(*rt, threads, blocks_job{rt->io(), true, round, data, failures});
    ASSERT_EQ(cudaMemset(data, 0, threads * block_bytes), cudaSuccess);  // the read must bring it back
    run_job(*rt, threads, blocks_job{rt->io(), false, round, data, failures});
    ASSERT_TRUE(device_synchronizes_within(std::chrono::seconds(10))) << "round " << round;
  }
  EXPECT_EQ(failed(), 0u);
  rt->stop();
}

TEST_F(GpuOnDemand, AJobOnTheCallersStreamGivesItsLeaseBackBehindIt) {
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
  for (const bool write : {true, false}) {
    if (!write) ASSERT_EQ(cudaMemsetAsync(data, 0, threads * block_bytes, stream), cudaSuccess);
    rt->acquire_service();
    launch_job(*rt, threads, blocks_job{rt->io(), write, 7, data, failures}, stream);
    rt->release_service_after(stream);
  }
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_TRUE(device_synchronizes_within(std::chrono::seconds(10)));
  EXPECT_EQ(failed(), 0u);
  cudaStreamDestroy(stream);
  rt->stop();
}

}  // namespace
}  // namespace agio
