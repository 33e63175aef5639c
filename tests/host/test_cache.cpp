// The software cache on CPU threads: the four access cases, write-back, flush, policies, tiny
// caches under many threads (the randomized run against a shadow model is test_cache_shadow.cpp).
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/spec/status.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using namespace std::chrono_literals;
using test::cpu_options;
using test::read_storage;
using test::run_threads;
using test::sequential_roundtrip;

TEST(Cache, DirectMappedWritesReachStorage) { sequential_roundtrip<cache::direct_mapped>(1); }
TEST(Cache, ClockWritesReachStorage) { sequential_roundtrip<cache::clock>(4); }
TEST(Cache, LfuDaWritesReachStorage) { sequential_roundtrip<cache::lfu_da>(8); }

// A prefetched line is not pinned: a later access may find it evicted and reads it again.
TEST(Cache, PrefetchedLineEvictedBeforeUseIsReadAgain) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_device(4096));
  for (std::uint64_t b = 0; b < 2; ++b) {
    std::memset(buf, static_cast<int>(0x40 + b), 4096);
    ASSERT_TRUE(rt.io().write(0, b, 1, buf).ok());
  }
  software_cache<cache::direct_mapped> cache(rt, {4096, 4096, 1});  // one line
  const auto& dev = cache.device();
  ASSERT_TRUE(dev.prefetch(0, 0).ok());
  std::uint8_t byte = 0;
  // Block 1 takes the only line (after block 0's fill lands), evicting the prefetched block 0.
  ASSERT_TRUE(dev.read_bytes(0, 1, 0, 1, &byte, deadline::after_ns(10'000'000'000)).ok());
  EXPECT_EQ(byte, 0x41);
  ASSERT_TRUE(dev.read_bytes(0, 0, 100, 1, &byte, deadline::after_ns(10'000'000'000)).ok());
  EXPECT_EQ(byte, 0x40);
  const auto c = cache.counters();
  EXPECT_EQ(c.misses, 3u);
  EXPECT_EQ(c.evictions, 2u);
}

// holds() finds a block with its data and takes no pin doing so; a block no line holds, or whose
// fill failed, it does not find.
TEST(Cache, HoldsFindsABlockWithItsDataAndPinsNothing) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:64K?lba=4096", 1, 8});
  rt.start();
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 2});
  const auto& dev = cache.device();
  EXPECT_FALSE(dev.holds(0, 3));
  cache.preload(0, 3, 1);
  EXPECT_TRUE(dev.holds(0, 3));
  EXPECT_FALSE(dev.holds(0, 2));
  EXPECT_FALSE(dev.holds(1, 3));  // another device's block 3
  test::expect_nothing_held(cache);
  // A prefetch past the store's end fails its fill, and nobody has asked for the block to hear
  // of it: the line keeps the block's tag, without data.
  ASSERT_TRUE(dev.prefetch(0, 16).ok());
  const deadline limit = deadline::after_ms(10'000);
  while (cache.counters().fill_failures == 0 && !limit.passed()) std::this_thread::yield();
  ASSERT_EQ(cache.counters().fill_failures, 1u);
  EXPECT_FALSE(dev.holds(0, 16));
  EXPECT_TRUE(dev.holds(0, 3));
}

// RAW, WAR and WAW between the element path (array view) and the block path (async reads and
// writes of whole blocks through user buffers).
TEST(Cache, HazardsAcrossElementAndBlockPaths) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  software_cache<cache::clock> cache(rt, {2 * 4096, 4096, 2});
  const auto& dev = cache.device();
  const auto arr = cache.array<std::uint32_t>();
  auto* user = static_cast<std::uint32_t*>(rt.allocate_device(4096));

  // RAW: an element write is seen by a block read into a user buffer.
  ASSERT_TRUE(arr.put(0, 5, 123).ok());
  ASSERT_TRUE(dev.wait(dev.async_read(0, 0, user)).ok());
  EXPECT_EQ(user[5], 123u);
  // WAR: writing the element after the block read does not change the user's copy.
  ASSERT_TRUE(arr.put(0, 5, 456).ok());
  EXPECT_EQ(user[5], 123u);
  std::uint32_t v = 0;
  ASSERT_TRUE(arr.get(0, 5, v).ok());
  EXPECT_EQ(v, 456u);
  // WAW: a block write then an element write; the later one wins in the cache and in storage.
  for (int i = 0; i < 1024; ++i) user[i] = 1000 + i;
  ASSERT_TRUE(dev.wait(dev.async_write(0, 0, user)).ok());
  ASSERT_TRUE(arr.put(0, 7, 7).ok());
  ASSERT_TRUE(arr.get(0, 5, v).ok());
  EXPECT_EQ(v, 1005u);
  // Evict block 0 through two other blocks, then read it back from storage via the cache.
  ASSERT_TRUE(arr.get(0, 1024 * 1, v).ok());
  ASSERT_TRUE(arr.get(0, 1024 * 2, v).ok());
  ASSERT_TRUE(arr.get(0, 1024 * 3, v).ok());
  ASSERT_TRUE(arr.get(0, 7, v).ok());
  EXPECT_EQ(v, 7u);
  ASSERT_TRUE(arr.get(0, 8, v).ok());
  EXPECT_EQ(v, 1008u);
  EXPECT_GT(cache.counters().write_backs, 0u);
}

TEST(Cache, FailedFillsReturnTheNvmeStatus) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@3", 1, 8});
  rt.start();
  software_cache<cache::lfu_da> cache(rt, {4 * 4096, 4096, 2});
  const auto arr = cache.array<std::uint32_t>();
  std::uint32_t v = 0;
  const status past_end = arr.get(0, 1024 * 16, v);  // block 16 of a 16-block store
  EXPECT_EQ(past_end.result, outcome::nvme_error);
  EXPECT_EQ(past_end.nvme_status, spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range));
  const status eio = arr.get(0, 1024 * 3, v);
  EXPECT_EQ(eio.result, outcome::nvme_error);
  EXPECT_THROW(rt.check(), io_error);
  // The cache still works for good blocks, and the bad block fails again rather than hanging.
  ASSERT_TRUE(arr.put(0, 1, 9).ok());
  ASSERT_TRUE(arr.get(0, 1, v).ok());
  EXPECT_EQ(v, 9u);
  EXPECT_EQ(arr.get(0, 1024 * 3, v).result, outcome::nvme_error);
  EXPECT_GT(cache.counters().fill_failures, 0u);
}

// Caches of one and two lines under 1024 threads: every access finishes, no write is lost.
template <class Policy>
void tiny_cache(std::uint32_t lines) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 2, 16});
  rt.start();
  constexpr unsigned threads = 1024;
  constexpr std::uint64_t blocks = 8;
  {
    software_cache<Policy> cache(rt, {lines * 4096ull, 4096, lines});
    ASSERT_EQ(cache.line_count(), lines);
    const auto arr = cache.template array<std::uint32_t>();
    std::atomic<unsigned> failures{0};
    run_threads(threads, [&](unsigned t) {
      // Thread t owns element t of every block and writes then reads it back in each block.
      for (std::uint64_t b = 0; b < blocks; ++b) {
        const std::uint64_t i = b * 1024 + t;
        if (!arr.put(0, i, static_cast<std::uint32_t>(t * 100 + b)).ok()) failures++;
      }
      for (std::uint64_t b = 0; b < blocks; ++b) {
        std::uint32_t v = 0;
        if (!arr.get(0, b * 1024 + t, v).ok() || v != t * 100 + b) failures++;
      }
    });
    EXPECT_EQ(failures.load(), 0u);
    cache.flush();
  }
  auto stored = read_storage(rt, blocks);
  const auto* words = reinterpret_cast<const std::uint32_t*>(stored.data());
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (unsigned t = 0; t < threads; ++t)
      ASSERT_EQ(words[b * 1024 + t], t * 100 + b) << "block " << b << " thread " << t;
  }
}

// Without a completion service, threads waiting on line states retire the fills themselves.
TEST(Cache, WorksWhenWaitersRetireCompletions) {
  runtime_options o = cpu_options();
  o.completion = completion_mode::waiters;
  runtime rt(o);
  rt.attach(device_options{"ram:1M?lba=4096", 2, 8});
  rt.start();
  {
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, waiting_io_handle> cache(
        rt, {4 * 4096, 4096, 2});
    const auto arr = cache.array<std::uint32_t>();
    run_threads(8, [&](unsigned t) {
      for (std::uint32_t b = 0; b < 16; ++b) ASSERT_TRUE(arr.put(0, b * 1024 + t, b + t).ok());
      for (std::uint32_t b = 0; b < 16; ++b) {
        std::uint32_t v = 0;
        ASSERT_TRUE(arr.get(0, b * 1024 + t, v).ok());
        ASSERT_EQ(v, b + t);
      }
    });
    cache.flush();
  }
  const auto stored = read_storage(rt, 16);
  const auto* words = reinterpret_cast<const std::uint32_t*>(stored.data());
  for (std::uint32_t b = 0; b < 16; ++b) {
    for (unsigned t = 0; t < 8; ++t) ASSERT_EQ(words[b * 1024 + t], b + t);
  }
}

// CPU-thread options whose waits end sooner than the suite's minute: a reader that kept a pin
// then fails with a timeout instead of holding the test up.
runtime_options short_wait_options(std::uint32_t ms) {
  runtime_options o = cpu_options();
  o.wait_timeout_ms = ms;
  return o;
}

// Writes element i = i * 7 + 3 to the first `blocks` 4 KiB blocks of device 0, around any cache.
void write_pattern(runtime& rt, std::uint64_t blocks) {
  auto* buf = static_cast<std::uint32_t*>(rt.allocate_device(4096));
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (std::uint32_t k = 0; k < 1024; ++k) buf[k] = static_cast<std::uint32_t>((b * 1024 + k) * 7 + 3);
    ASSERT_TRUE(with_io(rt, [&](const auto& io) { return io.write(0, b, 1, buf); }).ok());
  }
  rt.free(buf);
}

// Attaches `store` to `rt`, starts it and writes the pattern to the store's first `blocks` blocks.
void start_with_pattern(runtime& rt, const device_options& store, std::uint64_t blocks) {
  rt.attach(store);
  rt.start();
  write_pattern(rt, blocks);
}

// Readers walking runs of elements read the right values and pin once per line walked, not
// once per element.
TEST(ArrayReader, PinsOncePerLineWalked) {
  runtime rt(cpu_options());
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 16);
  software_cache<cache::clock> cache(rt, {16 * 4096, 4096, 8});
  const auto arr = cache.array<std::uint32_t>();
  constexpr unsigned threads = 16;
  constexpr std::uint64_t run = 5000;  // elements per thread: 5 or 6 lines
  std::atomic<unsigned> wrong{0};
  run_threads(threads, [&](unsigned t) {
    auto reader = arr.reader(0);
    for (std::uint64_t i = t * 700; i < t * 700 + run; ++i) {
      std::uint32_t v = 0;
      if (!reader.get(i, v).ok() || v != i * 7 + 3) wrong++;
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
  const auto c = cache.counters();
  EXPECT_LE(c.hits + c.misses + c.hits_on_busy, threads * 6u);
  EXPECT_GT(c.misses, 0u);
}

// A walk downwards leaves each line from its first element, where the reader must notice the
// step into the line below (the offset from the held line's start wraps) and nowhere else.
TEST(ArrayReader, WalkDownwardsMovesOncePerLine) {
  runtime rt(cpu_options());
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 4);
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 4});
  const auto arr = cache.array<std::uint32_t>();
  auto reader = arr.reader(0);
  unsigned wrong = 0;
  for (std::uint64_t i = 3 * 1024; i-- > 0;) {
    std::uint32_t v = 0;
    if (!reader.get(i, v).ok() || v != i * 7 + 3) wrong++;
  }
  EXPECT_EQ(wrong, 0u);
  const auto c = cache.counters();
  EXPECT_EQ(c.hits + c.misses + c.hits_on_busy, 3u);
}

// 64 threads share a two-line cache, each walking eight blocks from a different start: every
// reader must let go of its line before asking for the next, or the cache stops. Afterwards
// no pin is left behind.
TEST(ArrayReader, TwoLineCacheUnderManyReadersLosesNoPin) {
  runtime rt(short_wait_options(20'000));
  constexpr std::uint64_t blocks = 8;
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, blocks);
  software_cache<cache::clock> cache(rt, {2 * 4096, 4096, 2});
  const auto arr = cache.array<std::uint32_t>();
  std::atomic<unsigned> wrong{0};
  run_threads(64, [&](unsigned t) {
    auto reader = arr.reader(0);
    for (std::uint64_t k = 0; k < blocks; ++k) {
      const std::uint64_t b = (t + k) % blocks;
      for (std::uint64_t i = b * 1024 + t; i < b * 1024 + 1024; i += 64) {
        std::uint32_t v = 0;
        if (!reader.get(i, v).ok() || v != i * 7 + 3) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
  // Two readers hold two blocks at once only if no reader left a pin on either line.
  auto first = arr.reader(0);
  auto second = arr.reader(0);
  std::uint32_t a = 0, b = 0;
  ASSERT_TRUE(first.get(5, a).ok());
  ASSERT_TRUE(second.get(7 * 1024 + 5, b).ok());
  EXPECT_EQ(a, 5u * 7 + 3);
  EXPECT_EQ(b, (7u * 1024 + 5) * 7 + 3);
}

// 32 threads share an eight-line cache, each walking two arrays side by side (SpMV's columns
// and values) with a reader for each. A reader that must wait for its line has its thread's
// other reader let go first (get's trailing arguments): otherwise eight threads holding one
// line each while waiting for another stop the cache until their waits time out.
TEST(ArrayReader, TwoReadersPerThreadInAnEightLineCacheNeverWaitHoldingALine) {
  runtime rt(short_wait_options(5'000));
  constexpr std::uint64_t blocks = 32;
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, blocks);
  software_cache<cache::clock> cache(rt, {8 * 4096, 4096, 8});
  const auto arr = cache.array<std::uint32_t>();
  constexpr std::uint64_t half = blocks / 2 * 1024;  // the second array starts here
  std::atomic<unsigned> wrong{0};
  run_threads(32, [&](unsigned t) {
    auto columns = arr.reader(0);
    auto values = arr.reader(0);
    for (std::uint64_t k = 0; k < 4; ++k) {
      const std::uint64_t start = (t + k * 5) % (blocks / 2) * 1024 + t;
      for (std::uint64_t i = start; i < start + 1024; i += 16) {
        std::uint32_t c = 0, v = 0;
        if (!columns.get(i, c, values).ok() || c != i * 7 + 3) wrong++;
        if (!values.get(half + i % half, v, columns).ok() || v != (half + i % half) * 7 + 3) wrong++;
      }
    }
  });
  EXPECT_EQ(wrong.load(), 0u);
  // No pin is left behind: every line can be taken again.
  std::uint32_t v = 0;
  for (std::uint64_t b = 0; b < blocks; ++b) ASSERT_TRUE(arr.get(0, b * 1024 + 9, v).ok());
}

// A read that must wait lets its thread's other reader go first also when what it waits for
// is its set's lock (another access inserting): 32 GPU warps holding a line each while queued
// on the one set's lock of an eight-line cache kept it from moving for seconds.
TEST(ArrayReader, ReadQueuedOnItsSetsLockHoldsNoOtherLine) {
  runtime rt(short_wait_options(10'000));
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 4);
  software_cache<cache::clock> cache(rt, {2 * 4096, 4096, 2});
  const auto arr = cache.array<std::uint32_t>();
  const cache::cache_state& state = arr.cache.state;
  const auto pins = [&] {
    std::uint32_t total = 0;
    for (std::uint32_t l = 0; l < 2; ++l) {
      total += cache::pins_of(detail::load<detail::scope::device>(state.words[l], detail::relaxed));
    }
    return total;
  };
  auto columns = arr.reader(0);
  auto values = arr.reader(0);
  std::uint32_t c = 0, v = 0;
  ASSERT_TRUE(columns.get(5, c).ok());
  ASSERT_EQ(pins(), 1u);
  std::uint32_t& set_lock = state.set_locks[0];
  ASSERT_TRUE(cache::try_lock(set_lock));  // another access is inserting into the set
  std::thread reading([&] { EXPECT_TRUE(values.get(3 * 1024 + 5, v, columns).ok()); });
  const auto until = std::chrono::steady_clock::now() + 2s;
  while (pins() != 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(pins(), 0u) << "the other reader kept its line while the read waited for the set's lock";
  cache::unlock(set_lock);
  reading.join();
  EXPECT_EQ(v, (3u * 1024 + 5) * 7 + 3);
  ASSERT_TRUE(columns.get(6, c).ok());
  EXPECT_EQ(c, 6u * 7 + 3);
}

// Set locks that count the accesses that take them.
std::atomic<unsigned> set_locks_taken{0};
struct counting_locks {
  status acquire(std::uint32_t& word, cache::lock_name name, deadline limit) const {
    set_locks_taken++;
    return cache::no_lock_chain{}.acquire(word, name, limit);
  }
  void release(std::uint32_t& word, cache::lock_name name) const { cache::no_lock_chain{}.release(word, name); }
};

// An access that misses a set whose every line is pinned waits without queuing on the set's
// lock, which stays free for the accesses that can give lines back: a look at the lines tells
// it there is nothing to take. On CPU threads it takes the lock once, to ask for its turn when
// it has waited starving_after_ns (claim_turn.hpp).
TEST(ArrayReader, MissOnAFullSetWaitsWithoutQueuingOnItsLock) {
  runtime rt(short_wait_options(200));
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 4);
  software_cache<cache::clock, counting_locks> cache(rt, {2 * 4096, 4096, 2});
  const auto arr = cache.array<std::uint32_t>();
  auto first = arr.reader(0);
  auto second = arr.reader(0);
  std::uint32_t v = 0;
  ASSERT_TRUE(first.get(5, v).ok());
  ASSERT_TRUE(second.get(1024 + 5, v).ok());
  const unsigned before = set_locks_taken.load();
  EXPECT_EQ(arr.get(0, 2 * 1024 + 5, v).result, outcome::timeout);
  EXPECT_LE(set_locks_taken.load() - before, 1u);
  first.release();
  second.release();
  ASSERT_TRUE(arr.get(0, 2 * 1024 + 5, v).ok());
  EXPECT_EQ(v, (2u * 1024 + 5) * 7 + 3);
}

// A failed read reaches the reader as the NVMe status; the reader then holds nothing and goes
// on with good elements.
TEST(ArrayReader, FailedReadGivesTheStatusAndMovesOn) {
  runtime rt(short_wait_options(10'000));
  start_with_pattern(rt, {"ram:64K?lba=4096&fault=eio@3", 1, 8}, 2);
  software_cache<cache::clock> cache(rt, {2 * 4096, 4096, 2});
  const auto arr = cache.array<std::uint32_t>();
  {
    auto reader = arr.reader(0);
    std::uint32_t v = 0;
    ASSERT_TRUE(reader.get(1030, v).ok());
    EXPECT_EQ(v, 1030u * 7 + 3);
    EXPECT_EQ(reader.get(1024 * 16, v).result, outcome::nvme_error);  // past the end
    EXPECT_EQ(reader.get(1024 * 3, v).result, outcome::nvme_error);   // injected EIO
    ASSERT_TRUE(reader.get(7, v).ok());
    EXPECT_EQ(v, 7u * 7 + 3);
  }
  EXPECT_THROW(rt.check(), io_error);
  // Both lines are free again: two readers can hold two other blocks at once.
  auto first = arr.reader(0);
  auto second = arr.reader(0);
  std::uint32_t v = 0;
  EXPECT_TRUE(first.get(1, v).ok());
  EXPECT_TRUE(second.get(1024 * 2, v).ok());
}

// Elements whose size does not divide the line (12 bytes: 341 to a 4 KiB line, 4 bytes left
// over) are found through the general path, by the reader and by the view alike.
TEST(ArrayReader, ElementsOfTwelveBytesSkipEachLinesTail) {
  runtime rt(cpu_options());
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 8);
  software_cache<cache::clock> cache(rt, {8 * 4096, 4096, 8});
  struct triple {
    std::uint32_t a, b, c;
  };
  const auto arr = cache.array<triple>();
  constexpr std::uint64_t per_line = 4096 / sizeof(triple);
  const auto first_word = [&](std::uint64_t i) { return i / per_line * 1024 + i % per_line * 3; };
  unsigned wrong = 0;
  auto reader = arr.reader(0);
  for (std::uint64_t i = 0; i < 5 * per_line + 7; ++i) {
    triple t{};
    const std::uint64_t w = first_word(i);
    if (!reader.get(i, t).ok() || t.a != w * 7 + 3 || t.b != (w + 1) * 7 + 3 || t.c != (w + 2) * 7 + 3) wrong++;
  }
  EXPECT_EQ(wrong, 0u);
  triple t{};
  ASSERT_TRUE(arr.get(0, 3 * per_line - 1, t).ok());
  EXPECT_EQ(t.c, (first_word(3 * per_line - 1) + 2) * 7 + 3);
}

// An index whose byte offset does not fit in 64 bits is refused, not wrapped onto a block that
// exists.
TEST(ArrayReader, IndexPastAnyStorageIsAnInvalidArgument) {
  runtime rt(cpu_options());
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 1);
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 4});
  const auto arr = cache.array<std::uint32_t>();
  const std::uint64_t wraps_to_element_5 = (std::uint64_t{1} << 62) + 5;  // times 4: 20 bytes
  auto reader = arr.reader(0);
  std::uint32_t v = 0;
  EXPECT_EQ(reader.get(wraps_to_element_5, v).result, outcome::invalid_argument);
  EXPECT_EQ(arr.get(0, wraps_to_element_5, v).result, outcome::invalid_argument);
  ASSERT_TRUE(reader.get(5, v).ok());
  EXPECT_EQ(v, 5u * 7 + 3);
  using larger_than_a_line = std::array<std::byte, 8192>;
  EXPECT_THROW(cache.array<larger_than_a_line>(), std::invalid_argument);
}

// A device past the attached ones is refused by reads, writes and readers, also where its tag
// would alias an attached one's (a tag keeps 8 bits of the device number): device 256's block 0
// is not device 0's line.
TEST(ArrayView, DevicePastTheAttachedOnesIsAnInvalidArgument) {
  runtime rt(cpu_options());
  start_with_pattern(rt, {"ram:1M?lba=4096", 2, 16}, 1);
  software_cache<cache::clock> cache(rt, {4 * 4096, 4096, 4});
  const auto arr = cache.array<std::uint32_t>();
  std::uint32_t v = 0;
  ASSERT_TRUE(arr.get(0, 5, v).ok());  // device 0's block 0 is now in the cache
  EXPECT_EQ(v, 5u * 7 + 3);
  v = 0;
  EXPECT_EQ(arr.get(256, 5, v).result, outcome::invalid_argument);
  EXPECT_EQ(arr.get(1, 5, v).result, outcome::invalid_argument);
  EXPECT_EQ(arr.put(256, 5, 1u).result, outcome::invalid_argument);
  auto reader = arr.reader(256);
  EXPECT_EQ(reader.get(5, v).result, outcome::invalid_argument);
  EXPECT_EQ(v, 0u);
  ASSERT_TRUE(arr.get(0, 5, v).ok());  // device 0's element untouched by the refused write
  EXPECT_EQ(v, 5u * 7 + 3);
}

TEST(TinyCache, OneLineUnder1024Threads) { tiny_cache<cache::direct_mapped>(1); }
TEST(TinyCache, TwoLinesUnder1024Threads) { tiny_cache<cache::clock>(2); }

// Stopping the runtime writes the cache's MODIFIED lines back (the cache registers with stop).
TEST(Cache, StopWritesModifiedLinesBack) {
  const test::temp_file file("cache-stop");
  const std::string uri = "file:" + file.path() + "?create=1M&lba=4096";
  {
    runtime rt(cpu_options());
    rt.attach(device_options{uri, 1, 8});
    rt.start();
    software_cache<cache::clock> cache(rt, {16 * 4096, 4096, 4});
    const auto arr = cache.array<std::uint32_t>();
    for (std::uint32_t i = 0; i < 8 * 1024; i += 1024) ASSERT_TRUE(arr.put(0, i, i + 1).ok());
    rt.stop();
  }
  runtime rt(cpu_options());
  rt.attach(uri);
  rt.start();
  auto* buf = static_cast<std::uint32_t*>(rt.allocate_device(4096));
  for (std::uint32_t b = 0; b < 8; ++b) {
    ASSERT_TRUE(rt.io().read(0, b, 1, buf).ok());
    EXPECT_EQ(buf[0], b * 1024 + 1);
  }
}

}  // namespace
}  // namespace agio
