// The GPU suite (tests/gpu/, one file per theme so that they compile in parallel): the CPU
// suite's scenarios with GPU threads as submitters and the completion service as a kernel.
// Needs a GPU; run build/tests/agio_gpu_tests. This file: data written and read back through
// every store and data mover, writes staged by lanes and reads copied by the completion service
// of every size and alignment, the device's divisor, and AGILE's Figure 1 (more requests in
// flight than the queues hold).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "agio/detail/divisor.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/chunk_job.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::gpu_options;
using test::random_bytes;
using test::temp_file;

struct roundtrip_case {
  const char* name;
  data_mover mover;
  bool file;
  // runtime_options::lanes_per_queue and wait_together_ns (a warp's lanes over several queues
  // while few requests are in flight, leaving their waits together); by default the suite's
  // (gpu_options).
  std::uint32_t lanes_per_queue = gpu_options().lanes_per_queue;
  std::uint32_t wait_together_ns = gpu_options().wait_together_ns;
  // With 256, the 1024 threads stay below eight requests a queue pair: lanes spread.
  std::uint32_t queue_pairs = 4;
};

// The `bytes` at `back` once the jobs are done, having checked that none of their requests failed.
std::vector<std::byte> copied_back(runtime& rt, const std::byte* back, std::uint32_t bytes,
                                   const std::uint32_t* failures) {
  std::vector<std::byte> got(bytes);
  rt.copy_to_host(got.data(), back, bytes);
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  rt.check();
  EXPECT_EQ(failed, 0u);
  return got;
}

class GpuRoundtrip : public ::testing::TestWithParam<roundtrip_case> {};

TEST_P(GpuRoundtrip, WrittenDataReadsBackInAnotherOrder) {
  const auto& c = GetParam();
  const temp_file file(c.name);
  const std::string path = file.path();
  runtime_options o = gpu_options(c.mover);
  o.lanes_per_queue = c.lanes_per_queue;
  o.wait_together_ns = c.wait_together_ns;
  runtime rt(o);
  const std::uint32_t bytes = 16u << 20;
  rt.attach(device_options{c.file ? "file:" + path + "?create=16M&lba=4096" : "ram:16M?lba=512", c.queue_pairs, 32});
  rt.start();
  const auto data = random_bytes(bytes, 11);
  auto* src = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* back = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  rt.copy_to_device(src, data.data(), bytes);
  const std::uint32_t chunk = 16 * 1024;
  with_io(rt, [&](const auto& io) {
    run_job(rt, 1024, bench::chunk_job{io, 0, 1, src, chunk, bytes / chunk, failures});
    run_job(rt, 768, bench::chunk_job{io, 0, 0, back, chunk, bytes / chunk, failures});
  });
  const std::vector<std::byte> got = copied_back(rt, back, bytes, failures);
  for (std::uint32_t i = 0; i < bytes; i += chunk) {
    ASSERT_EQ(0, std::memcmp(got.data() + i, data.data() + i, chunk)) << "chunk " << i / chunk;
  }
  rt.stop();
  const auto counters = rt.counters();
  EXPECT_EQ(counters[0].completed, 2u * bytes / chunk);
}

INSTANTIATE_TEST_SUITE_P(
    StoresAndMovers, GpuRoundtrip,
    ::testing::Values(roundtrip_case{"ram_gpu_warps", data_mover::gpu_warps, false},
                      roundtrip_case{"ram_copy_engine", data_mover::copy_engine, false},
                      roundtrip_case{"file_gpu_warps", data_mover::gpu_warps, true},
                      roundtrip_case{"file_copy_engine", data_mover::copy_engine, true},
                      roundtrip_case{"ram_lanes_spread_waiting_together", data_mover::gpu_warps, false, 1, 8'000, 256},
                      roundtrip_case{"file_four_lanes_a_queue", data_mover::gpu_warps, true, 4, 2'000}),
    [](const auto& p) { return std::string(p.param.name); });

// Writes whose data lanes stage alone and in groups of every size, with the tails that do not
// fill a lane's loads in flight (io_handle::write_stage_loads), from 16-byte-aligned sources and
// from sources only 4-byte aligned: in warp w the first 1 + 7w % 32 lanes write, thread t from 1
// to 32 blocks of 512 bytes at the start of its own 16 KiB.
template <class IO>
struct ragged_write_job {
  IO io;
  const std::byte* src;
  std::uint32_t* failures;
  static constexpr std::uint32_t region = 16 * 1024;
  AGIO_HD static bool writes(std::uint32_t t) { return t % 32 < 1 + (t / 32 * 7) % 32; }
  AGIO_HD static std::uint32_t blocks(std::uint32_t t) { return 1 + (t * 5) % 32; }
  AGIO_HD static std::uint32_t source_offset(std::uint32_t t) { return t % 3 == 0 ? 4 : 0; }
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    if (!writes(t)) return;
    const std::byte* from = src + std::uint64_t{t} * region + source_offset(t);
    if (!io.write(0, std::uint64_t{t} * (region / 512), blocks(t), from).ok()) {
      detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
    }
  }
};

TEST(GpuWriteStaging, LanesAloneAndInGroupsOfEverySizeWriteExactlyTheirData) {
  runtime rt(gpu_options());
  constexpr std::uint32_t threads = 1024, region = ragged_write_job<io_handle>::region;
  constexpr std::uint32_t bytes = threads * region;
  rt.attach(device_options{"ram:16M?lba=512", 4, 32});
  rt.start();
  const auto before = random_bytes(bytes, 5);
  const auto data = random_bytes(bytes + 16, 6);
  auto* staged = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* src = static_cast<std::byte*>(rt.allocate_device(bytes + 16));
  auto* back = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  rt.copy_to_device(staged, before.data(), bytes);
  rt.copy_to_device(src, data.data(), bytes + 16);
  with_io(rt, [&](const auto& io) {
    using job = ragged_write_job<std::decay_t<decltype(io)>>;
    run_job(rt, 256, bench::chunk_job{io, 0, 1, staged, region, threads, failures});
    run_job(rt, threads, job{io, src, failures});
    run_job(rt, 256, bench::chunk_job{io, 0, 0, back, region, threads, failures});
  });
  const std::vector<std::byte> got = copied_back(rt, back, bytes, failures);
  using job = ragged_write_job<io_handle>;
  std::uint32_t writers = 0;
  for (std::uint32_t t = 0; t < threads; ++t) {
    const std::uint32_t written = job::writes(t) ? job::blocks(t) * 512 : 0;
    writers += written != 0 ? 1 : 0;
    const std::byte* at = got.data() + std::uint64_t{t} * region;
    ASSERT_EQ(0, std::memcmp(at, data.data() + std::uint64_t{t} * region + job::source_offset(t), written))
        << "thread " << t << ": its " << written << " bytes";
    ASSERT_EQ(0, std::memcmp(at + written, before.data() + std::uint64_t{t} * region + written, region - written))
        << "thread " << t << ": the bytes after its " << written;
  }
  EXPECT_GT(writers, threads / 3);
  rt.stop();
}

// Reads whose copies the completion service makes out of a window: thread t reads 1 to 32
// blocks of 512 bytes (up to four slots of a staging area, and tails of less than one) from the
// start of its own 16 KiB into its own 16 KiB of GPU memory, 16-byte aligned or, for every
// third thread, only 4-byte aligned (which bulk copies cannot take).
template <class IO>
struct ragged_read_job {
  IO io;
  std::byte* dst;
  std::uint32_t* failures;
  static constexpr std::uint32_t region = 16 * 1024 + 16;
  AGIO_HD static std::uint32_t blocks(std::uint32_t t) { return 1 + (t * 11) % 32; }
  AGIO_HD static std::uint32_t destination_offset(std::uint32_t t) { return t % 3 == 0 ? 4 : 0; }
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::byte* to = dst + std::uint64_t{t} * region + destination_offset(t);
    if (!io.read(0, std::uint64_t{t} * (16 * 1024 / 512), blocks(t), to).ok()) {
      detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
    }
  }
};

struct staging_case {
  const char* name;
  std::uint32_t staging_bytes;  // runtime_options::service_staging_bytes
  bool file;
};

class GpuRetireCopies : public ::testing::TestWithParam<staging_case> {};

TEST_P(GpuRetireCopies, ReadsOfEverySizeAndAlignmentLandExactlyAndNothingElse) {
  const auto& c = GetParam();
  const temp_file file(c.name);
  runtime_options o = gpu_options();
  o.service_staging_bytes = c.staging_bytes;
  runtime rt(o);
  constexpr std::uint32_t threads = 1024, store_bytes = threads * 16 * 1024;
  using job = ragged_read_job<io_handle>;
  constexpr std::uint32_t bytes = threads * job::region;
  rt.attach(device_options{c.file ? "file:" + file.path() + "?create=16M&lba=512" : "ram:16M?lba=512", 4, 32});
  rt.start();
  const auto stored = random_bytes(store_bytes, 7);
  const auto before = random_bytes(bytes, 8);
  auto* src = static_cast<std::byte*>(rt.allocate_device(store_bytes));
  auto* back = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  rt.copy_to_device(src, stored.data(), store_bytes);
  rt.copy_to_device(back, before.data(), bytes);
  with_io(rt, [&](const auto& io) {
    run_job(rt, 256, bench::chunk_job{io, 0, 1, src, 16 * 1024, threads, failures});
    run_job(rt, threads, ragged_read_job<std::decay_t<decltype(io)>>{io, back, failures});
  });
  const std::vector<std::byte> got = copied_back(rt, back, bytes, failures);
  for (std::uint32_t t = 0; t < threads; ++t) {
    const std::uint32_t read = job::blocks(t) * 512, at = job::destination_offset(t);
    const std::byte* mine = got.data() + std::uint64_t{t} * job::region;
    const std::byte* was = before.data() + std::uint64_t{t} * job::region;
    ASSERT_EQ(0, std::memcmp(mine, was, at)) << "thread " << t << ": the bytes before its " << read;
    ASSERT_EQ(0, std::memcmp(mine + at, stored.data() + std::uint64_t{t} * 16 * 1024, read))
        << "thread " << t << ": its " << read << " bytes";
    ASSERT_EQ(0, std::memcmp(mine + at + read, was + at + read, job::region - at - read))
        << "thread " << t << ": the bytes after its " << read;
  }
  rt.stop();
}

INSTANTIATE_TEST_SUITE_P(StagingAreas, GpuRetireCopies,
                         ::testing::Values(staging_case{"ram_lanes_loads", 0, false},
                                           staging_case{"ram_one_slot", 4096, false},
                                           staging_case{"ram_default", runtime_options{}.service_staging_bytes, false},
                                           staging_case{"file_one_slot", 4096, true},
                                           staging_case{"file_default", runtime_options{}.service_staging_bytes, true}),
                         [](const auto& p) { return std::string(p.param.name); });

// Every thread issues `per_thread` reads before it waits on any (AGILE Figure 1).
template <class IO>
struct figure1_job {
  IO io;
  std::byte* buffers;
  std::uint32_t per_thread;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    transaction tx[8];
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      tx[k] = io.async_read(0, (t * per_thread + k) % 1024, 1, buffers + (std::uint64_t{t} * per_thread + k) * 4096);
    }
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      if (!io.wait(tx[k]).ok()) detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
    }
  }
};

void figure1(std::uint32_t queue_pairs, std::uint32_t depth,
             std::uint32_t lanes_per_queue = gpu_options().lanes_per_queue,
             std::uint32_t wait_together_ns = gpu_options().wait_together_ns) {
  constexpr std::uint32_t threads = 8192, per_thread = 4;
  runtime_options o = gpu_options();
  o.lanes_per_queue = lanes_per_queue;
  o.wait_together_ns = wait_together_ns;
  o.max_transfer_bytes = 4096;
  o.transaction_records = threads * per_thread + 1024;
  runtime rt(o);
  rt.attach(device_options{"ram:4M?lba=4096&read_us=200", queue_pairs, depth});
  rt.start();
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * per_thread * 4096));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  with_io(rt, [&](const auto& io) { run_job(rt, threads, figure1_job{io, buffers, per_thread, failures}); });
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  EXPECT_EQ(failed, 0u);
  rt.stop();
  const auto c = rt.counters();
  EXPECT_EQ(c[0].completed, std::uint64_t{threads} * per_thread);
  EXPECT_GT(c[0].queue_full_retries, 0u);
}

// detail::divisor on the device, where its multiply-high is __umul64hi, against the host's
// division operators (the CPU suite checks the host's path the same way).
struct divide_job {
  const std::uint64_t* numerators;
  std::uint32_t count;
  detail::divisor by;
  std::uint64_t* quotients;
  std::uint32_t* remainders;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint32_t i = t; i < count; i += threads) {
      quotients[i] = by.quotient(numerators[i]);
      remainders[i] = by.remainder(numerators[i]);
    }
  }
};

TEST(GpuDivisor, MatchesDivisionForEdgeAndRandomOperands) {
  runtime rt(gpu_options());
  std::mt19937_64 random(7);
  for (const std::uint32_t d : test::divisor_edges()) {
    const std::vector<std::uint64_t> n = test::numerator_edges(d, random);
    const auto count = static_cast<std::uint32_t>(n.size());
    auto* numerators = static_cast<std::uint64_t*>(rt.allocate_device(count * sizeof(std::uint64_t)));
    auto* quotients = static_cast<std::uint64_t*>(rt.allocate_device(count * sizeof(std::uint64_t)));
    auto* remainders = static_cast<std::uint32_t*>(rt.allocate_device(count * sizeof(std::uint32_t)));
    rt.copy_to_device(numerators, n.data(), count * sizeof(std::uint64_t));
    run_job(rt, 1024, divide_job{numerators, count, d, quotients, remainders});
    std::vector<std::uint64_t> q(count);
    std::vector<std::uint32_t> r(count);
    rt.copy_to_host(q.data(), quotients, count * sizeof(std::uint64_t));
    rt.copy_to_host(r.data(), remainders, count * sizeof(std::uint32_t));
    rt.free(numerators);
    rt.free(quotients);
    rt.free(remainders);
    for (std::uint32_t i = 0; i < count; ++i) {
      ASSERT_EQ(q[i], n[i] / d) << n[i] << " / " << d;
      ASSERT_EQ(r[i], n[i] % d) << n[i] << " % " << d;
    }
  }
}

TEST(GpuFigure1, OneQueuePair) { figure1(1, 16); }
TEST(GpuFigure1, TwoQueuePairs) { figure1(2, 16); }
TEST(GpuFigure1, ManyQueuePairs) { figure1(128, 8); }
// Lanes staying for the others of their warp once their requests are done (wait_together_ns),
// with lanes_per_queue 1: 32768 requests in flight keep each warp's lanes at one queue but for
// the run's first and last moments (GpuRoundtrip's 256-queue case spreads them throughout).
TEST(GpuFigure1, LanesSpreadOverQueuesWaitTogether) { figure1(16, 16, 1, 8'000); }

}  // namespace
}  // namespace agio
