// The whole stack on CPU threads: submitters, proxy controller, stores and completion service.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <latch>
#include <numeric>
#include <random>

#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::random_bytes;
using test::run_threads;
using test::temp_file;

struct stack_case {
  const char* name;
  data_mover mover;
  bool file;
  std::uint32_t lba;
  completion_mode completion = completion_mode::service;
};

std::string uri_for(const stack_case& c, const temp_file& file, const char* size) {
  const std::string lba = "lba=" + std::to_string(c.lba);
  return c.file ? "file:" + file.path() + "?create=" + size + "&" + lba : std::string("ram:") + size + "?" + lba;
}

class Stack : public ::testing::TestWithParam<stack_case> {};

// Writes random data through agio from several threads, each keeping several requests in
// flight, then reads it back in a different order into GPU-like and pinned buffers.
TEST_P(Stack, WrittenDataReadsBackInAnyOrder) {
  const stack_case& c = GetParam();
  temp_file file(std::string("roundtrip-") + c.name);
  runtime_options opt;
  opt.backend = backend::cpu;
  opt.mover = c.mover;
  opt.completion = c.completion;
  opt.max_transfer_bytes = 64 * 1024;
  runtime rt(opt);
  rt.attach(device_options{uri_for(c, file, "8M"), 2, 16});
  rt.start();

  constexpr unsigned threads = 4;
  constexpr std::uint32_t chunk_blocks_4k = 4;  // 16 KiB chunks at 4 KiB LBAs
  const std::uint32_t chunk_bytes = chunk_blocks_4k * 4096;
  const std::uint32_t chunk_blocks = chunk_bytes / c.lba;
  constexpr unsigned chunks_per_thread = 24;
  const auto data = random_bytes(std::size_t{threads} * chunks_per_thread * chunk_bytes, 42);
  auto* source = static_cast<std::byte*>(rt.allocate_device(data.size()));
  std::memcpy(source, data.data(), data.size());

  // Written once for both controller types: the case picks the completion mode.
  with_io(rt, [&](const auto& io) {
    run_threads(threads, [&](unsigned t) {
      std::vector<transaction> inflight;
      for (unsigned k = 0; k < chunks_per_thread; ++k) {
        const std::uint64_t chunk = t * chunks_per_thread + k;
        inflight.push_back(io.async_write(0, chunk * chunk_blocks, chunk_blocks, source + chunk * chunk_bytes));
        if (inflight.size() == 6) {
          for (auto tx : inflight) ASSERT_TRUE(io.wait(tx).ok());
          inflight.clear();
        }
      }
      for (auto tx : inflight) ASSERT_TRUE(io.wait(tx).ok());
    });
    ASSERT_TRUE(io.wait(io.async_flush(0)).ok());

    auto* gpu_like = static_cast<std::byte*>(rt.allocate_device(data.size()));
    auto* pinned = static_cast<std::byte*>(rt.allocate_host(data.size()));
    std::vector<std::uint64_t> order(std::size_t{threads} * chunks_per_thread);
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), std::mt19937(7));
    run_threads(threads, [&](unsigned t) {
      std::vector<transaction> inflight;
      for (std::size_t i = t; i < order.size(); i += threads) {
        const std::uint64_t chunk = order[i];
        std::byte* dst = (chunk % 2 == 0 ? gpu_like : pinned) + chunk * chunk_bytes;
        inflight.push_back(io.async_read(0, chunk * chunk_blocks, chunk_blocks, dst));
      }
      for (auto tx : inflight) ASSERT_TRUE(io.wait(tx).ok());
    });
    for (std::size_t chunk = 0; chunk < order.size(); ++chunk) {
      const std::byte* got = (chunk % 2 == 0 ? gpu_like : pinned) + chunk * chunk_bytes;
      ASSERT_EQ(0, std::memcmp(got, data.data() + chunk * chunk_bytes, chunk_bytes)) << "chunk " << chunk;
    }
  });
  if (HasFatalFailure()) return;
  rt.check();
  rt.stop();
  const auto counters = rt.counters();
  EXPECT_EQ(counters[0].completed, counters[0].submitted);
  EXPECT_EQ(counters[0].errors, 0u);
  std::uint64_t read = 0, written = 0;
  for (const auto& q : counters[0].queue_pairs) {
    read += q.bytes_read;
    written += q.bytes_written;
  }
  EXPECT_EQ(read, data.size());
  EXPECT_EQ(written, data.size());
}

INSTANTIATE_TEST_SUITE_P(
    StoresAndMovers, Stack,
    ::testing::Values(stack_case{"ram_gpu_warps", data_mover::gpu_warps, false, 512},
                      stack_case{"ram_copy_engine", data_mover::copy_engine, false, 4096},
                      stack_case{"file_gpu_warps", data_mover::gpu_warps, true, 4096},
                      stack_case{"file_copy_engine", data_mover::copy_engine, true, 512},
                      stack_case{"ram_waiters_retire", data_mover::gpu_warps, false, 4096, completion_mode::waiters},
                      stack_case{"file_waiters_retire", data_mover::copy_engine, true, 4096, completion_mode::waiters}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// AGILE Figure 1: far more outstanding requests than queue entries, every thread issuing
// several before it waits on any. With a service retiring completions independently of the
// submitters this finishes; a design where submitters retire their own completions while
// holding queue entries can deadlock here. Without a service, submitters facing full queues
// retire completions themselves, so it must finish then too.
void run_figure1(std::uint32_t queue_pairs, std::uint32_t depth, unsigned threads, unsigned per_thread,
                 completion_mode completion = completion_mode::service, unsigned read_us = 5000) {
  runtime_options opt;
  opt.backend = backend::cpu;
  opt.completion = completion;
  opt.max_transfer_bytes = 4096;
  opt.transaction_records = threads * per_thread + 64;
  runtime rt(opt);
  // A read latency keeps commands outstanding long enough for every queue to fill: longer
  // than the threads take to issue everything they hold, even slowed by a sanitizer.
  rt.attach(device_options{"ram:4M?lba=4096&read_us=" + std::to_string(read_us), queue_pairs, depth});
  rt.start();
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * per_thread * 4096));
  std::latch all_started(threads);  // every thread issues at once, as GPU threads would
  with_io(rt, [&](const auto& io) {
    run_threads(threads, [&](unsigned t) {
      all_started.arrive_and_wait();
      std::vector<transaction> mine;
      for (unsigned k = 0; k < per_thread; ++k) {
        const std::uint64_t block = (t * per_thread + k) % 1024;
        mine.push_back(io.async_read(0, block, 1, buffers + (std::size_t{t} * per_thread + k) * 4096));
      }
      for (auto tx : mine) ASSERT_TRUE(io.wait(tx).ok());
    });
  });
  rt.stop();
  const auto c = rt.counters();
  EXPECT_EQ(c[0].completed, std::uint64_t{threads} * per_thread);
  EXPECT_GT(c[0].queue_full_retries, 0u) << "the scenario must actually fill the queues";
}

TEST(Figure1, OneQueuePairOfFourEntries) { run_figure1(1, 4, 16, 8); }
TEST(Figure1, TwoQueuePairs) { run_figure1(2, 4, 16, 8); }
// Many shallow queue pairs fill only once the threads have issued about a quarter of their
// requests, which must happen before the first read finishes: 5 ms was not always long enough
// for 64 threads on two cores under the thread sanitizer.
constexpr unsigned many_queues_read_us = 50000;
TEST(Figure1, ManyQueuePairs) { run_figure1(128, 2, 64, 8, completion_mode::service, many_queues_read_us); }
TEST(Figure1, WaitersRetireOnOneQueuePair) { run_figure1(1, 4, 16, 8, completion_mode::waiters); }
TEST(Figure1, WaitersRetireOnManyQueuePairs) {
  run_figure1(128, 2, 64, 8, completion_mode::waiters, many_queues_read_us);
}

// With trip stamps every request's trip is summed leg by leg. On CPU threads both sides read
// the host's clock, so every leg is a time: the controller's leg holds the store's 200 us read,
// and the legs of a request add up to no more than its whole trip.
TEST(TripStamps, EveryRequestIsSummedLegByLeg) {
  runtime_options opt;
  opt.backend = backend::cpu;
  opt.trip_stamps = true;
  runtime rt(opt);
  rt.attach(device_options{"ram:1M?lba=4096&read_us=200", 2, 8});
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_device(4096));
  constexpr std::uint64_t reads = 50;
  const auto started = std::chrono::steady_clock::now();
  with_io(rt, [&](const auto& io) {
    for (std::uint64_t k = 0; k < reads; ++k) ASSERT_TRUE(io.read(0, k, 1, buf).ok());
  });
  const auto elapsed_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
  const io::trip_sums trip = rt.counters()[0].trip;
  EXPECT_EQ(trip.requests, reads);
  const auto leg = [](std::uint64_t raw) { return static_cast<std::int64_t>(raw); };
  EXPECT_GE(leg(trip.to_controller), 0);
  EXPECT_GE(leg(trip.in_controller), static_cast<std::int64_t>(reads * 200'000));
  EXPECT_GE(leg(trip.to_retirer), 0);
  EXPECT_GE(leg(trip.retiring), 0);
  EXPECT_LE(trip.to_controller + trip.in_controller + trip.to_retirer + trip.retiring, elapsed_ns);
  rt.stop();
}

TEST(TripStamps, OffUnlessAskedFor) {
  runtime_options opt;
  opt.backend = backend::cpu;
  runtime rt(opt);
  rt.attach("ram:1M?lba=4096");
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_device(4096));
  with_io(rt, [&](const auto& io) { ASSERT_TRUE(io.read(0, 0, 1, buf).ok()); });
  EXPECT_EQ(rt.counters()[0].trip.requests, 0u);
  rt.stop();
}

TEST(Devices, SeveralStoresEachKeepTheirOwnData) {
  temp_file file("multi");
  runtime_options opt;
  opt.backend = backend::cpu;
  runtime rt(opt);
  const std::uint32_t a = rt.attach("ram:1M?lba=4096");
  const std::uint32_t b = rt.attach("file:" + file.path() + "?create=1M&lba=4096");
  const std::uint32_t c = rt.attach(device_options{"ram:2M", 3, 8});
  rt.start();
  const io_handle& io = rt.io();
  EXPECT_EQ(io.capacity_blocks(c), 2u * 1024 * 1024 / 512);
  auto* buf = static_cast<std::byte*>(rt.allocate_device(3 * 4096));
  for (std::uint32_t d : {a, b, c}) std::memset(buf + d * 4096, 0x10 + static_cast<int>(d), 4096);
  for (std::uint32_t d : {a, b, c}) ASSERT_TRUE(io.write(d, 5, 4096 / io.lba_bytes(d), buf + d * 4096).ok());
  std::memset(buf, 0, 3 * 4096);
  for (std::uint32_t d : {a, b, c}) ASSERT_TRUE(io.read(d, 5, 4096 / io.lba_bytes(d), buf + d * 4096).ok());
  for (std::uint32_t d : {a, b, c}) {
    EXPECT_EQ(buf[d * 4096], static_cast<std::byte>(0x10 + d));
    EXPECT_EQ(buf[d * 4096 + 4095], static_cast<std::byte>(0x10 + d));
  }
  rt.stop();
  const auto counters = rt.counters();
  ASSERT_EQ(counters.size(), 3u);
  for (const auto& dc : counters) EXPECT_EQ(dc.completed, 2u);
}

TEST(Devices, LargestTransferUsesAPrpList) {
  runtime_options opt;
  opt.backend = backend::cpu;
  opt.max_transfer_bytes = 256 * 1024;
  runtime rt(opt);
  rt.attach("ram:4M?lba=4096");
  rt.start();
  const io_handle& io = rt.io();
  const auto data = random_bytes(256 * 1024, 3);
  auto* buf = static_cast<std::byte*>(rt.allocate_host(data.size() + 4096));
  // Start 512 bytes into a page so the transfer spans 65 pages through PRP1 and a list.
  std::byte* unaligned = buf + 512;
  std::memcpy(unaligned, data.data(), data.size());
  ASSERT_TRUE(io.write(0, 10, 64, unaligned).ok());
  std::memset(buf, 0, data.size() + 4096);
  ASSERT_TRUE(io.read(0, 10, 64, unaligned).ok());
  EXPECT_EQ(0, std::memcmp(unaligned, data.data(), data.size()));
  EXPECT_EQ(io.read(0, 0, 65, buf).result, outcome::invalid_argument);
}

}  // namespace
}  // namespace agio
