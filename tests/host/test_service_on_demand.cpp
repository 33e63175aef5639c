// completion_mode::on_demand: the completion service runs only while a lease is held (run_job
// takes one per job). Jobs one after another and from many host threads at once each find a
// service; without a lease none runs, so a request nobody leased ends at its deadline; stop()
// retires what is left either way.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "agio/agio.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t block_bytes = 4096;

runtime_options on_demand(std::uint32_t wait_timeout_ms = 60'000) {
  runtime_options o = test::cpu_options();
  o.completion = completion_mode::on_demand;
  o.wait_timeout_ms = wait_timeout_ms;
  return o;
}

// Writes or reads blocks [first, first + count), one per job thread, and counts the failures.
struct blocks_job {
  io_handle io;
  bool write;
  std::uint64_t first;
  std::uint64_t count;
  std::byte* data;
  std::uint32_t* failures;
  void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t b = t; b < count; b += threads) {
      std::byte* block = data + b * block_bytes;
      const status s = write ? io.write(0, first + b, 1, block) : io.read(0, first + b, 1, block);
      if (!s.ok()) detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
    }
  }
};

class ServiceOnDemand : public ::testing::Test {
 protected:
  void start(runtime_options options = on_demand()) {
    rt = std::make_unique<runtime>(options);
    rt->attach("ram:4M?lba=4096");
    rt->start();
  }

  // Writes `count` blocks of a pattern seeded by `seed` from block `first` on, reads them back
  // into fresh memory and checks them: two jobs, each needing a service.
  void round_trip(std::uint64_t first, std::uint64_t count, std::uint64_t seed) {
    const std::vector<std::byte> pattern = test::random_bytes(count * block_bytes, seed);
    auto* data = static_cast<std::byte*>(rt->allocate_device(count * block_bytes));
    auto* failures = static_cast<std::uint32_t*>(rt->allocate_device(sizeof(std::uint32_t)));
    std::memcpy(data, pattern.data(), pattern.size());
    run_job(*rt, 4, blocks_job{rt->io(), true, first, count, data, failures});
    std::memset(data, 0, pattern.size());
    run_job(*rt, 4, blocks_job{rt->io(), false, first, count, data, failures});
    EXPECT_EQ(*failures, 0u);
    EXPECT_EQ(std::memcmp(data, pattern.data(), pattern.size()), 0) << "blocks " << first << "+" << count;
    rt->free(data);
    rt->free(failures);
  }

  std::unique_ptr<runtime> rt;
};

TEST_F(ServiceOnDemand, JobsOneAfterAnotherEachFindAService) {
  start();
  for (std::uint64_t round = 0; round < 40; ++round) round_trip(round * 8, 8, round);
  EXPECT_EQ(rt->counters()[0].errors, 0u);
  rt->stop();
}

TEST_F(ServiceOnDemand, JobsFromManyHostThreadsAtOnceShareTheService) {
  start();
  test::run_threads(6, [&](unsigned t) {
    for (std::uint64_t round = 0; round < 12; ++round) round_trip((t * 12 + round) * 8, 8, t * 100 + round);
  });
  EXPECT_EQ(rt->counters()[0].completed, 6u * 12 * 2 * 8);
  rt->stop();
}

// The test that fails if the service outlived its last lease: a request issued by a thread that
// holds none is never retired, so its wait ends at the deadline; stop() then retires it.
TEST_F(ServiceOnDemand, WithoutALeaseNoServiceRetiresRequests) {
  start(on_demand(300));
  round_trip(0, 4, 1);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));  // the last generation drains and exits
  auto* block = static_cast<std::byte*>(rt->allocate_device(block_bytes));
  const io_handle io = rt->io();
  EXPECT_EQ(io.wait(io.async_read(0, 0, 1, block)).result, outcome::timeout);
  {
    const service_lease lease(*rt);
    EXPECT_TRUE(rt->io().read(0, 1, 1, block).ok());
  }
  rt->stop();
  EXPECT_EQ(rt->counters()[0].completed, rt->counters()[0].submitted);
}

TEST_F(ServiceOnDemand, ALeaseGivenBackAfterAStreamIsGivenBackAtOnceOnCpuThreads) {
  start(on_demand(300));
  auto* block = static_cast<std::byte*>(rt->allocate_device(block_bytes));
  rt->acquire_service();
  EXPECT_TRUE(rt->io().read(0, 0, 1, block).ok());
  rt->release_service_after(nullptr);
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const io_handle io = rt->io();
  EXPECT_EQ(io.wait(io.async_read(0, 0, 1, block)).result, outcome::timeout);
  rt->stop();
}

TEST_F(ServiceOnDemand, StopWhileALeaseIsHeldDrainsAndTheLateReleaseIsHarmless) {
  start();
  round_trip(0, 4, 2);
  {
    const service_lease lease(*rt);
    auto* block = static_cast<std::byte*>(rt->allocate_device(block_bytes));
    const io_handle io = rt->io();
    const transaction tx = io.async_read(0, 3, 1, block);
    rt->stop();
    EXPECT_TRUE(io.wait(tx).ok());
  }
  EXPECT_EQ(rt->counters()[0].completed, rt->counters()[0].submitted);
}

TEST_F(ServiceOnDemand, OtherModesIgnoreLeases) {
  runtime_options o = on_demand();
  o.completion = completion_mode::service;
  start(o);
  { const service_lease lease(*rt); }
  round_trip(0, 4, 3);
  rt->stop();
}

}  // namespace
}  // namespace agio
