// The cache under storage faults and stop: a failed fill never serves another block, a failed
// write-back keeps its data and reports its error at once, and no write accepted around
// rt.stop() is lost. The same scenarios run on the GPU in tests/gpu/test_gpu_cache_faults.cu.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;
using test::cpu_options;
using test::expect_nothing_held;
using test::run_threads;

constexpr std::uint32_t pattern(std::uint64_t element) { return static_cast<std::uint32_t>(element * 7 + 3); }

// Writes pattern(i) as element i of the first `blocks` 4 KiB blocks of device 0, around the cache.
void write_pattern(runtime& rt, std::uint64_t blocks) {
  auto* buf = static_cast<std::uint32_t*>(rt.allocate_device(4096));
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (std::uint32_t k = 0; k < 1024; ++k) buf[k] = pattern(b * 1024 + k);
    ASSERT_TRUE(with_io(rt, [&](const auto& io) { return io.write(0, b, 1, buf); }).ok());
  }
  rt.free(buf);
}

runtime_options options_with(completion_mode mode, std::uint32_t wait_ms) {
  runtime_options o = cpu_options();
  o.completion = mode;
  o.wait_timeout_ms = wait_ms;
  return o;
}

// Three threads read a block whose every read fails while six walk eight good blocks of the
// same (only) set through array readers, for a second. The failing block never succeeds, every
// good element read is right, and no pin is left behind.
template <class IO>
void failing_block_beside_good_ones(completion_mode mode) {
  runtime rt(options_with(mode, 2'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@8", 1, 16});
  rt.start();
  write_pattern(rt, 8);
  software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {4 * 4096, 4096, 4});
  const auto arr = cache.template array<std::uint32_t>();
  std::atomic<unsigned> bad_successes{0}, bad_errors{0}, wrong{0}, good_failures{0};
  const auto end = clock_type::now() + 1s;
  run_threads(9, [&](unsigned t) {
    if (t < 3) {
      while (clock_type::now() < end) {
        std::uint32_t v = 0;
        const status s = arr.get(0, 8 * 1024 + t, v);
        if (s.ok()) bad_successes++;
        if (s.result == outcome::nvme_error) bad_errors++;
      }
      return;
    }
    auto reader = arr.reader(0);
    for (std::uint64_t k = 0; clock_type::now() < end; ++k) {
      const std::uint64_t b = (t + k) % 8;
      for (std::uint64_t i = b * 1024 + t; i < b * 1024 + 1024; i += 97) {
        std::uint32_t v = 0;
        if (!reader.get(i, v).ok()) {
          good_failures++;
        } else if (v != pattern(i)) {
          wrong++;
        }
      }
    }
  });
  EXPECT_EQ(bad_successes.load(), 0u);
  EXPECT_GT(bad_errors.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(good_failures.load(), 0u);
  expect_nothing_held(cache);
}

TEST(CacheFaults, FailedFillNeverServesAnotherBlock) {
  failing_block_beside_good_ones<io_handle>(completion_mode::service);
}
TEST(CacheFaults, FailedFillNeverServesAnotherBlockWhenWaitersRetire) {
  failing_block_beside_good_ones<waiting_io_handle>(completion_mode::waiters);
}

// Requesters that give up on their fill after a few microseconds (the failing block's and good
// blocks') beside holders that keep a good block pinned for a while: a holder's line never
// changes under it, and at the end every line is free again.
TEST(CacheFaults, RequestersGivingUpLeaveNoPinOnTheNextFill) {
  runtime rt(options_with(completion_mode::service, 2'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@8", 1, 16});
  rt.start();
  write_pattern(rt, 8);
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 4});
  const auto& handle = cache.device();
  std::atomic<unsigned> bad_successes{0}, wrong{0}, changed_under_holder{0};
  const auto end = clock_type::now() + 1s;
  run_threads(8, [&](unsigned t) {
    std::mt19937 random(t);
    while (clock_type::now() < end) {
      const bool impatient = t < 5;
      const std::uint64_t block = impatient && random() % 2 == 0 ? 8 : random() % 8;
      const deadline limit = deadline::after_ns(impatient ? 1'000 + random() % 40'000 : 2'000'000'000);
      std::uint32_t line = cache::no_line;
      const status s = handle.acquire_line(0, block, line, limit);
      if (!s.ok()) continue;
      if (block == 8) bad_successes++;
      const auto* data = reinterpret_cast<const std::uint32_t*>(handle.line_data(line));
      const std::uint32_t k = random() % 1024;
      if (data[k] != pattern(block * 1024 + k)) wrong++;
      if (!impatient) {
        std::this_thread::sleep_for(50us);
        if (data[k] != pattern(block * 1024 + k)) changed_under_holder++;
      }
      handle.unpin(line);
    }
  });
  EXPECT_EQ(bad_successes.load(), 0u);
  EXPECT_EQ(wrong.load(), 0u);
  EXPECT_EQ(changed_under_holder.load(), 0u);
  // Fills of requesters that gave up may still be landing.
  detail::poll_until([&] { return cache.audit().busy == 0; }, deadline::after_ns(2'000'000'000), 1'000'000);
  expect_nothing_held(cache);
  // Every line can be taken: four readers hold four other blocks at once.
  const auto arr = cache.array<std::uint32_t>();
  std::array<cache::array_reader<std::uint32_t, cache::clock>, 4> readers{arr.reader(0), arr.reader(0), arr.reader(0),
                                                                          arr.reader(0)};
  for (std::uint32_t r = 0; r < 4; ++r) {
    std::uint32_t v = 0;
    ASSERT_TRUE(readers[r].get((r + 4) * 1024 + 1, v).ok());
    EXPECT_EQ(v, pattern((r + 4) * 1024 + 1));
  }
}

// Block 5 of these stores fails every write (and read): a whole-line write puts it in the cache
// without reading it, and its write-back fails.
constexpr const char* failing_write_store = "ram:64K?lba=4096&fault=eio@5";

std::vector<std::uint32_t> line_of(std::uint32_t value) { return std::vector<std::uint32_t>(1024, value); }

template <class Cache>
void write_whole_line(const Cache& cache, std::uint64_t block, std::uint32_t value) {
  const auto words = line_of(value);
  ASSERT_TRUE(cache.device().write_bytes(0, block, 0, 4096, words.data(), deadline::after_ns(1'000'000'000)).ok());
}

// The status storage gives a write of block 5 (what a failed write-back must report).
status failing_write_status(runtime& rt) {
  auto* buf = rt.allocate_device(4096);
  const status s = with_io(rt, [&](const auto& io) { return io.write(0, 5, 1, buf); });
  rt.free(buf);
  return s;
}

// The line whose write-back failed keeps the newest data for reads and writes and is not
// picked as a victim again: misses through its set take the other lines.
TEST(CacheFaults, FailedWriteBackKeepsItsDataAndIsNoVictim) {
  runtime rt(options_with(completion_mode::service, 5'000));
  rt.attach(device_options{failing_write_store, 1, 16});
  rt.start();
  write_pattern(rt, 5);
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 4});
  const auto arr = cache.array<std::uint32_t>();
  write_whole_line(cache, 5, 77);
  for (int round = 0; round < 20; ++round) {
    for (std::uint64_t b = 0; b < 5; ++b) {
      std::uint32_t v = 0;
      ASSERT_TRUE(arr.get(0, b * 1024 + 9, v).ok());
      ASSERT_EQ(v, pattern(b * 1024 + 9));
    }
  }
  EXPECT_EQ(cache.counters().write_backs, 1u);
  EXPECT_EQ(cache.audit().failed, 1u);
  std::uint32_t v = 0;
  ASSERT_TRUE(arr.get(0, 5 * 1024 + 9, v).ok());
  EXPECT_EQ(v, 77u);
  ASSERT_TRUE(arr.put(0, 5 * 1024 + 9, 78).ok());
  ASSERT_TRUE(arr.get(0, 5 * 1024 + 9, v).ok());
  EXPECT_EQ(v, 78u);
  EXPECT_EQ(cache.audit().failed, 1u);
  expect_nothing_held(cache);
}

// An access whose set has no line left but failed ones gets the write-back's error at once,
// not a timeout at its deadline.
TEST(CacheFaults, SetOfFailedLinesGivesTheWriteBackErrorAtOnce) {
  runtime rt(options_with(completion_mode::service, 3'000));
  rt.attach(device_options{failing_write_store, 1, 16});
  rt.start();
  const status expected = failing_write_status(rt);
  ASSERT_EQ(expected.result, outcome::nvme_error);
  software_cache<cache::clock> cache(rt, {1 * 4096, 4096, 1});
  const auto arr = cache.array<std::uint32_t>();
  write_whole_line(cache, 5, 77);
  for (int access = 0; access < 2; ++access) {
    const auto start = clock_type::now();
    std::uint32_t v = 0;
    const status s = arr.get(0, 1, v);
    EXPECT_LT(clock_type::now() - start, 1s);
    EXPECT_EQ(s.result, outcome::nvme_error);
    EXPECT_EQ(s.nvme_status, expected.nvme_status);
  }
  std::uint32_t v = 0;
  ASSERT_TRUE(arr.get(0, 5 * 1024, v).ok());
  EXPECT_EQ(v, 77u);
}

// flush() writes a failed line back write_back_attempts times, then throws at once naming the
// device, the LBA and the cause; the other lines reach storage, the failed line's data stays in
// the cache, and the next flush tries again.
TEST(CacheFaults, FlushRetriesAFailedWriteBackThenThrowsAtOnce) {
  runtime rt(options_with(completion_mode::service, 5'000));
  rt.attach(device_options{failing_write_store, 1, 16});
  rt.start();
  cache_options options{4 * 4096, 4096, 4};
  options.write_back_attempts = 3;
  software_cache<cache::clock> cache(rt, options);
  const auto arr = cache.array<std::uint32_t>();
  write_whole_line(cache, 5, 77);
  ASSERT_TRUE(arr.put(0, 2 * 1024, 99).ok());
  for (std::uint64_t flushes = 1; flushes <= 2; ++flushes) {
    const auto start = clock_type::now();
    std::optional<io_error> error;
    try {
      cache.flush();
    } catch (const io_error& e) {
      error = e;
    }
    EXPECT_LT(clock_type::now() - start, 2s);
    ASSERT_TRUE(error && error->has_request()) << (error ? error->what() : "flush() did not throw");
    EXPECT_EQ(error->lba(), 5u);
    EXPECT_EQ(error->blocks(), 1u);
    EXPECT_EQ(error->opcode(), spec::opcode::write);
    EXPECT_EQ(error->uri(), failing_write_store);
    EXPECT_EQ(error->nvme_status(), spec::make_status(spec::status_type::media, spec::media::write_fault));
    EXPECT_EQ(cache.counters().write_backs, 1 + flushes * options.write_back_attempts);
    const cache_audit a = cache.audit();
    EXPECT_EQ(a.failed, 1u);
    EXPECT_EQ(a.modified, 0u);
  }
  std::uint32_t v = 0;
  ASSERT_TRUE(arr.get(0, 5 * 1024 + 3, v).ok());
  EXPECT_EQ(v, 77u);
  EXPECT_EQ(test::read_storage(rt, 3)[2 * 512] & 0xffffffffu, 99u);
  expect_nothing_held(cache);
}

// Writers on every cache write path race with rt.stop(): each write is refused with `stopped`
// or is on storage afterwards (as read by a fresh runtime). A write may also time out (its line's
// fill caught by the I/O layer's stop); it was not made: a cache write changes a line only
// once it holds it.
TEST(CacheFaults, WritesRacingStopAreRefusedOrDurable) {
  const test::temp_file file("cache-stop-race");
  const std::string uri = "file:" + file.path() + "?create=1M&lba=4096";
  constexpr unsigned writers = 9;
  constexpr std::uint64_t shared_blocks = 8;
  // acked[t][b]: the last value thread t wrote successfully to its element of block b (element
  // t of blocks 0-7 for partial writers; the whole of block 8 + t / 3 for whole-line writers).
  std::vector<std::array<std::uint32_t, shared_blocks>> acked(writers);
  std::atomic<unsigned> refused{0}, other_failures{0};
  std::atomic<std::uint32_t> other_outcome{0};
  {
    runtime rt(options_with(completion_mode::service, 2'000));
    rt.attach(device_options{uri, 1, 8});
    rt.start();
    software_cache<cache::clock> cache(rt, {16 * 4096, 4096, 4});
    const auto arr = cache.array<std::uint32_t>();
    const auto& handle = cache.device();
    std::atomic<bool> stopped{false};
    std::string stop_failure;
    std::thread stopper([&] {
      std::this_thread::sleep_for(30ms);
      try {
        rt.stop();
      } catch (const std::exception& e) {
        stop_failure = e.what();
      }
      stopped = true;
    });
    run_threads(writers, [&](unsigned t) {
      acked[t].fill(0);
      std::vector<std::uint32_t> words(1024);
      unsigned after_stop = 0;
      for (std::uint32_t n = 1; after_stop < 300; ++n) {
        if (stopped) ++after_stop;
        status s;
        std::uint64_t b = n % shared_blocks;
        if (t % 3 == 0) {
          s = arr.put(0, b * 1024 + t, n);
        } else if (t % 3 == 1) {
          s = handle.write_bytes(0, b, t * 4, 4, &n, deadline::after_ns(200'000'000));
        } else {
          b = 0;
          words.assign(1024, n);
          s = handle.wait(handle.async_write(0, shared_blocks + t / 3, words.data()));
        }
        if (s.ok()) {
          acked[t][b] = n;
        } else if (s.result == outcome::stopped) {
          refused++;
        } else if (s.result != outcome::timeout) {
          other_failures++;
          other_outcome = s.pack();
        }
      }
    });
    stopper.join();
    EXPECT_EQ(stop_failure, "");
  }
  EXPECT_GT(refused.load(), 0u);
  EXPECT_EQ(other_failures.load(), 0u) << describe(status::unpack(other_outcome).result);
  runtime rt(cpu_options());
  rt.attach(uri);
  rt.start();
  const auto stored = test::read_storage(rt, shared_blocks + writers / 3);
  const auto word = [&](std::uint64_t block, std::uint64_t k) {
    return static_cast<std::uint32_t>(stored[block * 512 + k / 2] >> (32 * (k % 2)));
  };
  for (unsigned t = 0; t < writers; ++t) {
    if (t % 3 == 2) {
      EXPECT_EQ(word(shared_blocks + t / 3, 0), acked[t][0]) << "whole-line writer " << t;
      continue;
    }
    for (std::uint64_t b = 0; b < shared_blocks; ++b)
      EXPECT_EQ(word(b, t), acked[t][b]) << "writer " << t << " block " << b;
  }
}

}  // namespace
}  // namespace agio
