// The GPU suite: the CPU suite's scenarios with GPU threads as submitters and the completion
// service as a kernel. Needs a GPU; run it with `ctest -L gpu` or build/tests/agio_gpu_tests.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <thread>
#include <type_traits>
#include <unistd.h>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/detail/divisor.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "cache_shadow.hpp"
#include "harness/chunk_job.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::random_bytes;
using test::temp_file;

// The deadline tests set their own short deadlines.
using test::gpu_options;

struct roundtrip_case {
  const char* name;
  data_mover mover;
  bool file;
};

class GpuRoundtrip : public ::testing::TestWithParam<roundtrip_case> {};

TEST_P(GpuRoundtrip, WrittenDataReadsBackInAnotherOrder) {
  const auto& c = GetParam();
  const temp_file file(c.name);
  const std::string path = file.path();
  runtime rt(gpu_options(c.mover));
  const std::uint32_t bytes = 16u << 20;
  rt.attach(device_options{c.file ? "file:" + path + "?create=16M&lba=4096" : "ram:16M?lba=512", 4, 32});
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
  std::vector<std::byte> got(bytes);
  rt.copy_to_host(got.data(), back, bytes);
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  rt.check();
  EXPECT_EQ(failed, 0u);
  for (std::uint32_t i = 0; i < bytes; i += chunk) {
    ASSERT_EQ(0, std::memcmp(got.data() + i, data.data() + i, chunk)) << "chunk " << i / chunk;
  }
  rt.stop();
  const auto counters = rt.counters();
  EXPECT_EQ(counters[0].completed, 2u * bytes / chunk);
}

INSTANTIATE_TEST_SUITE_P(StoresAndMovers, GpuRoundtrip,
                         ::testing::Values(roundtrip_case{"ram_gpu_warps", data_mover::gpu_warps, false},
                                           roundtrip_case{"ram_copy_engine", data_mover::copy_engine, false},
                                           roundtrip_case{"file_gpu_warps", data_mover::gpu_warps, true},
                                           roundtrip_case{"file_copy_engine", data_mover::copy_engine, true}),
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

void figure1(std::uint32_t queue_pairs, std::uint32_t depth) {
  constexpr std::uint32_t threads = 8192, per_thread = 4;
  runtime_options o = gpu_options();
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

// One thread runs one request of each kind and records its status.
enum class probe : std::uint32_t { lba_past_end, zero_blocks, oversized, unknown_opcode, unregistered, misaligned, plain };

template <class IO>
struct probe_job {
  IO io;
  probe what;
  std::byte* buffer;
  std::byte* unregistered;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    status s{};
    switch (what) {
      case probe::lba_past_end: s = io.read(0, io.capacity_blocks(0), 1, buffer); break;
      case probe::zero_blocks: s = io.read(0, 0, 0, buffer); break;
      case probe::oversized: s = io.read(0, 0, io.max_blocks(0) + 1, buffer); break;
      case probe::unknown_opcode: {
        auto cmd = spec::make_rw(spec::opcode::read, 0, 1, 0, 1, reinterpret_cast<std::uint64_t>(buffer), 0);
        cmd.cdw0 = (cmd.cdw0 & ~0xffu) | 0x7f;
        s = io.wait(io.async_passthrough(0, cmd, buffer, 4096));
        break;
      }
      case probe::unregistered: s = io.read(0, 0, 1, unregistered); break;
      case probe::misaligned: s = io.read(0, 0, 1, buffer + 2); break;
      case probe::plain: s = io.read(0, 1, 1, buffer); break;
    }
    *result = s.pack();
  }
};

class GpuFaults : public ::testing::Test {
 protected:
  void start(const std::string& uri) {
    rt = std::make_unique<runtime>(gpu_options());
    rt->attach(device_options{uri, 1, 8});
    rt->start();
    buffer = static_cast<std::byte*>(rt->allocate_device(64 * 1024));
    result = static_cast<std::uint32_t*>(rt->allocate_device(4));
    // GPU memory the controller was never told about. Not cudaMalloc/cudaFree: cudaFree waits
    // for every kernel on the device, the completion service included.
    unregistered = rt->allocate_device(4096);
    rt->unregister_memory(unregistered);
  }
  status run(probe what) {
    with_io(*rt, [&](const auto& io) {
      run_job(*rt, 1, probe_job{io, what, buffer, static_cast<std::byte*>(unregistered), result});
    });
    std::uint32_t word = 0;
    rt->copy_to_host(&word, result, 4);
    return status::unpack(word);
  }
  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
  std::uint32_t* result = nullptr;
  void* unregistered = nullptr;
};

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

TEST_F(GpuFaults, EveryBadRequestGetsItsStatus) {
  start("ram:1M?lba=4096");
  EXPECT_EQ(run(probe::lba_past_end).nvme_status, generic(spec::generic::lba_out_of_range));
  EXPECT_EQ(run(probe::zero_blocks).result, outcome::invalid_argument);
  EXPECT_EQ(run(probe::oversized).result, outcome::invalid_argument);
  EXPECT_EQ(run(probe::unknown_opcode).nvme_status, generic(spec::generic::invalid_opcode));
  EXPECT_EQ(run(probe::unregistered).nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(run(probe::misaligned).nvme_status, generic(spec::generic::prp_offset_invalid));
  EXPECT_TRUE(run(probe::plain).ok());
  try {
    rt->check();
    FAIL() << "check() must report the first failure";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("LBA 256"), std::string::npos) << e.what();
  }
}

TEST_F(GpuFaults, StoreErrorsBecomeMediaErrors) {
  start("ram:1M?lba=4096&fault=eio@1");
  EXPECT_EQ(run(probe::plain).nvme_status, spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error));
  const temp_file file("short");
  rt.reset();
  start("file:" + file.path() + "?create=1M&lba=4096&fault=short@1");
  EXPECT_EQ(run(probe::plain).nvme_status, spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error));
  rt.reset();
}

template <class IO>
struct deadline_job {
  IO io;
  std::byte* buffer;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    const transaction t = io.async_read(0, 0, 1, buffer);
    result[0] = io.wait_for(t, deadline::after_ms(1)).pack();
    result[1] = io.wait(t).pack();
  }
};

TEST(GpuWait, DeadlinePassesThenTheRequestStillFinishes) {
  runtime rt(gpu_options());
  rt.attach("ram:1M?read_us=200000");
  rt.start();
  auto* buffer = static_cast<std::byte*>(rt.allocate_device(4096));
  auto* result = static_cast<std::uint32_t*>(rt.allocate_device(8));
  with_io(rt, [&](const auto& io) { run_job(rt, 1, deadline_job{io, buffer, result}); });
  std::uint32_t words[2];
  rt.copy_to_host(words, result, 8);
  EXPECT_EQ(status::unpack(words[0]).result, outcome::timeout);
  EXPECT_TRUE(status::unpack(words[1]).ok());
}

// Threads rewrite their block round after round until the runtime stops under them; each
// records the last round acknowledged. Afterwards every block holds at least that round.
template <class IO>
struct until_stopped_job {
  IO io;
  std::byte* buffers;
  std::uint32_t* acknowledged;
  std::uint32_t* unexpected;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::byte* slot = buffers + std::uint64_t{t} * 4096;
    for (std::uint32_t round = 1; round < 1'000'000; ++round) {
      reinterpret_cast<std::uint32_t*>(slot)[0] = round;
      reinterpret_cast<std::uint32_t*>(slot)[1] = t;
      const status s = io.write(0, t, 1, slot);
      if (s.ok()) {
        acknowledged[t] = round;
      } else {
        if (s.result != outcome::stopped) detail::fetch_add<detail::scope::device>(*unexpected, 1u, detail::relaxed);
        return;
      }
    }
  }
};

TEST(GpuStop, InFlightWritesFinishOrFailAndNoAcknowledgedWriteIsLost) {
  constexpr std::uint32_t threads = 2048;
  const temp_file file("stop");
  const std::string uri = "file:" + file.path() + "?create=16M&lba=4096";
  std::vector<std::uint32_t> acknowledged(threads);
  {
    runtime rt(gpu_options());
    rt.attach(device_options{uri, 4, 32});
    rt.start();
    auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * 4096));
    auto* acks = static_cast<std::uint32_t*>(rt.allocate_device(threads * 4));
    auto* unexpected = static_cast<std::uint32_t*>(rt.allocate_device(4));
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      rt.stop();
    });
    with_io(rt, [&](const auto& io) { run_job(rt, threads, until_stopped_job{io, buffers, acks, unexpected}); });
    stopper.join();
    std::uint32_t bad = 0;
    rt.copy_to_host(&bad, unexpected, 4);
    EXPECT_EQ(bad, 0u);
    rt.copy_to_host(acknowledged.data(), acks, threads * 4);
  }
  EXPECT_GT(std::accumulate(acknowledged.begin(), acknowledged.end(), 0ull), 0ull);
  runtime_options o = gpu_options();
  o.backend = backend::cpu;  // read back on the host: independent of the GPU path under test
  runtime rt(o);
  rt.attach(uri);
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_host(4096));
  for (std::uint32_t t = 0; t < threads; ++t) {
    if (acknowledged[t] == 0) continue;
    ASSERT_TRUE(with_io(rt, [&](const auto& io) { return io.read(0, t, 1, buf); }).ok());
    std::uint32_t words[2];
    std::memcpy(words, buf, 8);
    EXPECT_EQ(words[1], t);
    EXPECT_GE(words[0], acknowledged[t]) << "block " << t << " lost an acknowledged write";
  }
  rt.stop();
}

// The cache on the GPU: every thread owns one element of every block; a warp's 32 lanes touch
// one line together (warp coalescing), blocks are visited in a per-thread order, and the cache
// is far smaller than the data. Afterwards storage must hold every thread's last write.
template <class Policy, class IO>
struct cache_writers_job {
  cache::array_view<std::uint32_t, Policy, cache::no_lock_chain, cache::no_share_table, IO> arr;
  std::uint32_t blocks;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const std::uint32_t per_block = 1024;
    for (std::uint32_t k = 0; k < blocks; ++k) {
      const std::uint32_t b = (k + t / 32) % blocks;
      if (!arr.put(0, std::uint64_t{b} * per_block + t % per_block, t * 131 + b).ok()) {
        detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
      }
    }
    for (std::uint32_t k = 0; k < blocks; ++k) {
      const std::uint32_t b = (k * 7 + t / 32) % blocks;
      std::uint32_t v = 0;
      if (!arr.get(0, std::uint64_t{b} * per_block + t % per_block, v).ok() || v != t * 131 + b) {
        detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
      }
    }
  }
};

template <class Policy>
void gpu_cache_run(std::uint32_t lines, std::uint32_t ways, std::uint32_t threads) {
  constexpr std::uint32_t blocks = 16;
  runtime rt(gpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 4, 32});
  rt.start();
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {std::size_t{lines} * 4096, 4096, ways});
    ASSERT_EQ(cache.line_count(), lines);
    run_job(rt, threads, cache_writers_job<Policy, IO>{cache.template array<std::uint32_t>(), blocks, failures});
    cache.flush();
    const auto c = cache.counters();
    EXPECT_GT(c.coalesced_in_warp, 0u);
    EXPECT_GT(c.write_backs, 0u);
  });
  if (::testing::Test::HasFatalFailure()) return;
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  EXPECT_EQ(failed, 0u);
  rt.check();
  // Read storage back around the cache, with the I/O API (the controller is for device threads).
  auto* stored = static_cast<std::byte*>(rt.allocate_device(blocks * 4096));
  with_io(rt, [&](const auto& io) { run_job(rt, 64, bench::chunk_job{io, 0, 0, stored, 4096, blocks, failures}); });
  rt.copy_to_host(&failed, failures, 4);
  ASSERT_EQ(failed, 0u);
  std::vector<std::uint32_t> words(blocks * 1024);
  rt.copy_to_host(words.data(), stored, blocks * 4096);
  for (std::uint32_t b = 0; b < blocks; ++b) {
    // Thread t (one per element) wrote element t of every block.
    for (std::uint32_t t = 0; t < threads; ++t) ASSERT_EQ(words[b * 1024 + t], t * 131 + b) << "block " << b;
  }
  rt.stop();
}

TEST(GpuCache, ThousandThreadsThroughALfuDaCacheOfEightLines) { gpu_cache_run<cache::lfu_da>(8, 4, 1024); }
TEST(GpuCache, OneLineUnder1024Threads) { gpu_cache_run<cache::direct_mapped>(1, 1, 1024); }
TEST(GpuCache, TwoLinesUnder1024Threads) { gpu_cache_run<cache::clock>(2, 2, 1024); }

// Array readers on the GPU: each thread walks runs of 96 elements (lanes of a warp walk the
// same lines together, so acquisitions and releases are coalesced), warps start at different
// blocks, and the cache has two lines: a reader that kept its line while asking for the next,
// or lost a pin, would stop the cache. Every value must match what was written.
template <class IO>
struct cache_readers_job {
  cache::array_view<std::uint32_t, cache::clock, cache::no_lock_chain, cache::no_share_table, IO> arr;
  std::uint32_t blocks;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    auto reader = arr.reader(0);
    const std::uint64_t elements = std::uint64_t{blocks} * 1024;
    for (std::uint32_t k = 0; k < blocks; ++k) {
      const std::uint64_t first = ((k + t / 32) % blocks) * 1024 + (t % 32) * 96 % 1024;
      for (std::uint64_t i = first; i < first + 96; ++i) {
        const std::uint64_t e = i % elements;
        std::uint32_t v = 0;
        if (!reader.get(e, v).ok() || v != static_cast<std::uint32_t>(e * 7 + 3)) {
          detail::fetch_add<detail::scope::device>(*failures, 1u, detail::relaxed);
        }
      }
    }
  }
};

TEST(GpuCache, ReadersWalkRunsThroughATwoLineCache) {
  constexpr std::uint32_t blocks = 16;
  runtime rt(gpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 4, 32});
  rt.start();
  std::vector<std::uint32_t> words(blocks * 1024);
  for (std::uint32_t e = 0; e < words.size(); ++e) words[e] = e * 7 + 3;
  auto* data = static_cast<std::byte*>(rt.allocate_device(blocks * 4096));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  rt.copy_to_device(data, words.data(), blocks * 4096);
  const std::uint32_t zero = 0;
  rt.copy_to_device(failures, &zero, 4);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, 16, bench::chunk_job<IO>{io, 0, 1, data, 4096, blocks, failures});
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {2 * 4096, 4096, 2});
    run_job(rt, 1024, cache_readers_job<IO>{cache.template array<std::uint32_t>(), blocks, failures});
    const auto c = cache.counters();
    EXPECT_GT(c.coalesced_in_warp, 0u);
    EXPECT_GT(c.evictions, 0u);
  });
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  EXPECT_EQ(failed, 0u);
  rt.check();
  rt.stop();
}

// The shadow-model scenarios of the CPU suite (tests/cache_shadow.hpp) on GPU threads, whose
// warps diverge over the operation kinds: without faults, then with every fault kind, short
// deadlines and stop/restart phases through small and large caches.
template <class Shares = cache::no_share_table>
void gpu_cache_shadow(const bench::shadow_shape& shape, std::uint32_t lines, std::uint32_t ways, bool faults,
                      std::uint32_t phases = 1) {
  const temp_file file("gpu-shadow", true);
  bench::shadow_config c;
  c.options = gpu_options();
  c.path = file.path();
  c.shape = shape;
  c.cache_lines = {lines, static_cast<std::uint32_t>((shape.blocks() + ways - 1) / ways * ways)};
  c.ways = ways;
  c.share_slots = 256;
  c.queue_pairs = 4;
  c.queue_depth = 64;
  c.verify_threads = 256;
  c.phases = phases;
  c.rounds = faults ? 2 : 1;
  if (faults) c = test::faulty_config(c, 2'000);
  test::expect_clean(bench::run_shadow<cache::lfu_da, Shares>(c), faults);
}

// 1024 threads × 1024 operations over 2064 blocks through 64 lines.
TEST(GpuCacheShadow, MillionOperations) { gpu_cache_shadow({1024, 1024, 16, 2}, 64, 8, false); }
TEST(GpuCacheShadow, MillionOperationsWithAShareTable) {
  gpu_cache_shadow<cache::share_table>({1024, 1024, 16, 2}, 64, 8, false);
}
// The same with faults: 4096 threads × 256 operations × 2 rounds × 4 phases.
TEST(GpuCacheShadowFaults, EveryFaultKind) { gpu_cache_shadow({4096, 256, 16, 2}, 256, 8, true, 4); }
TEST(GpuCacheShadowFaults, EveryFaultKindWithAShareTable) {
  gpu_cache_shadow<cache::share_table>({4096, 256, 16, 2}, 256, 8, true, 4);
}
// Short runs of the same, for compute-sanitizer (scripts/gpu-sanitize.sh skips the long ones).
TEST(GpuCacheShadow, ShortRunMatchesTheModel) { gpu_cache_shadow({256, 32, 16, 2}, 16, 4, false); }
TEST(GpuCacheShadow, ShortRunWithAShareTable) { gpu_cache_shadow<cache::share_table>({256, 32, 16, 2}, 16, 4, false); }
TEST(GpuCacheShadowFaults, ShortRunWithFaults) { gpu_cache_shadow({256, 32, 16, 2}, 16, 4, true, 2); }

}  // namespace
}  // namespace agio
