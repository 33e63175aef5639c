// Replacement policies on CPU threads: S3-FIFO keeps data through eviction and write-back, keeps
// hot blocks through scans of one-time blocks (which push them out under CLOCK), and takes a
// block evicted too early straight back to its main queue.
#include <gtest/gtest.h>

#include <atomic>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/s3_fifo.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::cpu_options;
using test::run_threads;

TEST(S3Fifo, WritesReachStorage) { test::sequential_roundtrip<cache::s3_fifo>(8); }
TEST(S3Fifo, WritesReachStorageAtFourWays) { test::sequential_roundtrip<cache::s3_fifo>(4); }

// A cache of one set of 8 lines over a ram: store; block b is element b * 1024 of the array.
template <class Policy>
class one_set {
 public:
  one_set() : rt_(cpu_options()), cache_(started(rt_), {8 * 4096, 4096, 8}) {}

  // Reads `block`; true when that took no fill.
  bool hit(std::uint64_t block) {
    const std::uint64_t before = cache_.counters().misses;
    std::uint32_t v = 0;
    EXPECT_TRUE(cache_.template array<std::uint32_t>().get(0, block * 1024, v).ok());
    return cache_.counters().misses == before;
  }
  // Reads blocks [from, to) once each.
  void scan(std::uint64_t from, std::uint64_t to) {
    for (std::uint64_t b = from; b < to; ++b) hit(b);
  }

 private:
  static runtime& started(runtime& rt) {
    rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
    rt.start();
    return rt;
  }
  runtime rt_;
  software_cache<Policy> cache_;
};

// Block 0 is read three times, then 40 other blocks once each: S3-FIFO moves block 0 to main
// and lets the newcomers replace one another; CLOCK's hand sweeps block 0 out.
template <class Policy>
bool hot_block_survives_scan() {
  one_set<Policy> c;
  for (int i = 0; i < 3; ++i) c.hit(0);
  c.scan(100, 140);
  return c.hit(0);
}

TEST(S3Fifo, HotBlockSurvivesScanOfOneTimeBlocks) {
  EXPECT_TRUE(hot_block_survives_scan<cache::s3_fifo>());
  EXPECT_FALSE(hot_block_survives_scan<cache::clock>());
}

// Block 0 is read once and evicted by newcomers; read again while its tag is in the set's
// ghost, it enters main and outlives a scan, although it was never hit. Block 100, back only
// after the ghost has forgotten it, is a newcomer again and the next scan pushes it out.
TEST(S3Fifo, BlockBackFromGhostEntersMain) {
  one_set<cache::s3_fifo> c;
  c.hit(0);
  c.scan(100, 108);  // 7 take the free lines, the 8th evicts the oldest newcomer: block 0
  EXPECT_FALSE(c.hit(0));
  c.scan(200, 240);
  EXPECT_TRUE(c.hit(0));
  EXPECT_FALSE(c.hit(100));
  c.scan(150, 190);
  EXPECT_FALSE(c.hit(100));
  EXPECT_TRUE(c.hit(0));
}

// Threads hit and evict the same two sets at once (on_hit racing victim and on_insert), with
// writes: every value read back is the thread's own, and storage ends up with all of them.
TEST(S3Fifo, ConcurrentReadersAndWritersLoseNothing) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 2, 16});
  rt.start();
  constexpr unsigned threads = 16;
  constexpr std::uint64_t blocks = 48;
  {
    software_cache<cache::s3_fifo> cache(rt, {16 * 4096, 4096, 8});
    const auto arr = cache.array<std::uint32_t>();
    std::atomic<unsigned> failures{0};
    run_threads(threads, [&](unsigned t) {
      // Thread t owns element t of every block; a few blocks are hot, the rest pass through.
      for (std::uint64_t round = 0; round < 4; ++round) {
        for (std::uint64_t b = 0; b < blocks; ++b) {
          const std::uint64_t block = b % 3 == 0 ? b % 6 : b;
          const auto value = static_cast<std::uint32_t>(t * 1000 + block);
          if (!arr.put(0, block * 1024 + t, value).ok()) failures++;
          std::uint32_t v = 0;
          if (!arr.get(0, block * 1024 + t, v).ok() || v != value) failures++;
        }
      }
    });
    EXPECT_EQ(failures.load(), 0u);
    EXPECT_GT(cache.counters().evictions, 0u);
    cache.flush();
  }
  const auto stored = test::read_storage(rt, blocks);
  const auto* words = reinterpret_cast<const std::uint32_t*>(stored.data());
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const bool written = b % 3 != 0 || b < 6;
    for (unsigned t = 0; t < threads; ++t) {
      ASSERT_EQ(words[b * 1024 + t], written ? t * 1000 + b : 0u) << "block " << b << " thread " << t;
    }
  }
}

}  // namespace
}  // namespace agio
