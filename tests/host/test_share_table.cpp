// The share table (AGILE §3.4.1) on CPU threads: sharing by reference, the coherence protocol
// against the cache path (RAW, WAR, WAW), propagation at the owner's release, failed fills,
// a full table, and many threads sharing and releasing at once.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using shared_cache = software_cache<cache::clock, cache::no_lock_chain, cache::share_table>;
using cache::share_role;
using test::cpu_options;
using test::run_threads;

deadline soon() { return deadline::after_ms(60'000); }

// Word i of block b as written to storage by write_pattern.
std::uint32_t pattern(std::uint64_t b, std::uint32_t i) { return static_cast<std::uint32_t>(b * 100'000 + i); }

void write_pattern(runtime& rt, std::uint64_t blocks) {
  auto* buf = static_cast<std::uint32_t*>(rt.allocate_device(4096));
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (std::uint32_t i = 0; i < 1024; ++i) buf[i] = pattern(b, i);
    ASSERT_TRUE(rt.io().write(0, b, 1, buf).ok());
  }
  rt.free(buf);
}

// Word i of a transaction's data (other threads may write other words of it meanwhile).
std::uint32_t word(const cache::share_transaction& t, std::uint32_t i) {
  return detail::shared_load(static_cast<const std::uint32_t*>(t.data())[i]);
}

// Word i of block b as the cache path sees it.
std::uint32_t cached(const shared_cache& c, std::uint64_t b, std::uint32_t i) {
  std::uint32_t v = 0;
  EXPECT_TRUE(c.device().read_bytes(0, b, i * 4, 4, &v, soon()).ok());
  return v;
}

struct fixture {
  explicit fixture(const char* uri = "ram:1M?lba=4096", std::uint32_t share_slots = 64) : rt(cpu_options()) {
    rt.attach(device_options{uri, 2, 16});
    rt.start();
    cache.emplace(rt, cache_options{8 * 4096, 4096, 2, share_slots});
  }
  std::uint32_t* buffer() { return static_cast<std::uint32_t*>(rt.allocate_device(4096)); }
  const shared_cache::handle& dev() const { return cache->device(); }

  runtime rt;
  std::optional<shared_cache> cache;
};

TEST(ShareTable, SecondRequestSharesTheBuffer) {
  fixture f;
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  std::uint32_t* a = f.buffer();
  std::uint32_t* b = f.buffer();
  auto first = dev.async_read(0, 3, a);
  auto second = dev.async_read(0, 3, b);
  EXPECT_EQ(first.role, share_role::owner);
  EXPECT_EQ(second.role, share_role::sharer);
  EXPECT_EQ(first.data(), a);
  EXPECT_EQ(second.data(), a);  // by reference: the owner's buffer
  EXPECT_EQ(dev.shares.references(first), 2u);
  EXPECT_EQ(f.cache->counters().share_hits, 1u);
  ASSERT_TRUE(dev.wait(second).ok());  // whichever holder waits first fills the buffer
  ASSERT_TRUE(dev.wait(first).ok());
  EXPECT_EQ(word(second, 7), pattern(3, 7));
  EXPECT_EQ(b[7], 0u);  // the sharer's own buffer was never used
  ASSERT_TRUE(dev.release(second).ok());
  EXPECT_EQ(dev.shares.references(first), 1u);
  ASSERT_TRUE(dev.release(first).ok());
  EXPECT_EQ(dev.shares.references(first), 0u);
  EXPECT_EQ(first.role, share_role::released);
  // The entry is gone: the next request registers its own buffer.
  auto third = dev.async_read(0, 3, b);
  EXPECT_EQ(third.role, share_role::owner);
  EXPECT_EQ(third.data(), b);
  ASSERT_TRUE(dev.wait(third).ok());
  EXPECT_EQ(word(third, 1023), pattern(3, 1023));
  ASSERT_TRUE(dev.release(third).ok());
  EXPECT_EQ(f.cache->counters().share_hits, 1u);
}

// RAW and WAR between the cache path (array view put, write_bytes, async_write) and buffers
// of the table: a write through the cache is seen by later requests, never by a snapshot
// someone already holds.
TEST(ShareTable, CachePathWritesAndSharedSnapshots) {
  fixture f;
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  const auto arr = f.cache->array<std::uint32_t>();
  // RAW: an element written through the cache is in the buffer of a later read.
  ASSERT_TRUE(arr.put(0, 2 * 1024 + 5, 123).ok());
  auto held = dev.async_read(0, 2, f.buffer());
  ASSERT_TRUE(dev.wait(held).ok());
  EXPECT_EQ(word(held, 5), 123u);
  // WAR: writing the element while the buffer is held leaves the holder's snapshot alone, and
  // a later request no longer shares that snapshot: it gets a buffer of its own with the write.
  ASSERT_TRUE(arr.put(0, 2 * 1024 + 5, 456).ok());
  EXPECT_EQ(word(held, 5), 123u);
  std::uint32_t* mine = f.buffer();
  auto after_put = dev.async_read(0, 2, mine);
  EXPECT_EQ(after_put.role, share_role::owner);
  EXPECT_EQ(after_put.data(), mine);
  ASSERT_TRUE(dev.wait(after_put).ok());
  EXPECT_EQ(word(after_put, 5), 456u);
  // The same through write_bytes ...
  const std::uint32_t v = 789;
  ASSERT_TRUE(dev.write_bytes(0, 2, 6 * 4, 4, &v, soon()).ok());
  EXPECT_EQ(word(after_put, 6), pattern(2, 6));
  auto after_bytes = dev.async_read(0, 2, f.buffer());
  EXPECT_EQ(after_bytes.role, share_role::owner);
  ASSERT_TRUE(dev.wait(after_bytes).ok());
  EXPECT_EQ(word(after_bytes, 6), 789u);
  // ... and through async_write of the whole block.
  std::uint32_t* block = f.buffer();
  for (std::uint32_t i = 0; i < 1024; ++i) block[i] = 5000 + i;
  ASSERT_TRUE(dev.wait(dev.async_write(0, 2, block)).ok());
  EXPECT_EQ(word(after_bytes, 9), pattern(2, 9));
  auto after_block = dev.async_read(0, 2, f.buffer());
  EXPECT_EQ(after_block.role, share_role::owner);
  ASSERT_TRUE(dev.wait(after_block).ok());
  EXPECT_EQ(word(after_block, 9), 5009u);
  // A request while nothing was written since shares the newest buffer.
  auto sharer = dev.async_read(0, 2, f.buffer());
  EXPECT_EQ(sharer.role, share_role::sharer);
  EXPECT_EQ(sharer.data(), after_block.data());
  for (auto* t : {&sharer, &held, &after_put, &after_bytes, &after_block}) ASSERT_TRUE(dev.release(*t).ok());
  EXPECT_EQ(arr[0][2 * 1024 + 9], 5009u);
}

// Writes to a shared buffer: every holder sees them at once; the cache gets them when the
// owner's release returns (after the sharers released), then storage on flush.
TEST(ShareTable, OwnersReleasePropagatesWritesToCacheAndStorage) {
  fixture f;
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  std::uint32_t* a = f.buffer();
  auto owner = dev.async_read(0, 4, a);
  auto sharer = dev.async_read(0, 4, f.buffer());
  ASSERT_TRUE(dev.wait(owner).ok());
  ASSERT_TRUE(dev.wait(sharer).ok());
  const std::uint32_t three = 333;
  ASSERT_TRUE(dev.write_shared(sharer, 3 * 4, 4, &three).ok());
  EXPECT_EQ(word(owner, 3), 333u);
  // A holder may also write in place and say so.
  detail::shared_store(a[8], 888u);
  ASSERT_TRUE(dev.mark_modified(owner, 8 * 4, 4).ok());
  // RAW through the buffer: a new request shares it and sees both writes.
  auto reader = dev.async_read(0, 4, f.buffer());
  EXPECT_EQ(reader.role, share_role::sharer);
  ASSERT_TRUE(dev.wait(reader).ok());
  EXPECT_EQ(word(reader, 3), 333u);
  EXPECT_EQ(word(reader, 8), 888u);
  ASSERT_TRUE(dev.release(reader).ok());
  ASSERT_TRUE(dev.release(sharer).ok());
  // Not in the cache while the owner holds the buffer.
  EXPECT_EQ(cached(*f.cache, 4, 3), pattern(4, 3));
  ASSERT_TRUE(dev.release(owner).ok());
  EXPECT_EQ(cached(*f.cache, 4, 3), 333u);
  EXPECT_EQ(cached(*f.cache, 4, 8), 888u);
  EXPECT_EQ(cached(*f.cache, 4, 9), pattern(4, 9));
  // RAW after the release: a new request reads the cache again.
  auto later = dev.async_read(0, 4, f.buffer());
  EXPECT_EQ(later.role, share_role::owner);
  ASSERT_TRUE(dev.wait(later).ok());
  EXPECT_EQ(word(later, 3), 333u);
  ASSERT_TRUE(dev.release(later).ok());
  f.cache->flush();
  auto* stored = f.buffer();
  ASSERT_TRUE(f.rt.io().read(0, 4, 1, stored).ok());
  EXPECT_EQ(stored[3], 333u);
  EXPECT_EQ(stored[8], 888u);
  EXPECT_EQ(stored[9], pattern(4, 9));
}

// WAW: the latest write to a word wins, whichever path made it, although a shared buffer
// reaches the cache only at its owner's release.
TEST(ShareTable, LatestWriteWinsAcrossPaths) {
  fixture f;
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  const auto arr = f.cache->array<std::uint32_t>();
  const std::uint32_t one = 1, four = 4, five = 5, seven = 7;
  // A write to the buffer, then a cache-path write of the same word: the cache's is newer.
  auto t = dev.async_read(0, 1, f.buffer());
  ASSERT_TRUE(dev.wait(t).ok());
  ASSERT_TRUE(dev.write_shared(t, 10 * 4, 4, &one).ok());
  ASSERT_TRUE(dev.write_shared(t, 12 * 4, 4, &one).ok());
  ASSERT_TRUE(arr.put(0, 1024 + 10, 2).ok());
  ASSERT_TRUE(arr.put(0, 1024 + 11, 2).ok());  // a word the buffer did not write
  ASSERT_TRUE(dev.release(t).ok());
  EXPECT_EQ(arr[0][1024 + 10], 2u);
  EXPECT_EQ(arr[0][1024 + 11], 2u);
  EXPECT_EQ(arr[0][1024 + 12], 1u);
  // A cache-path write, then a write to a buffer filled after it: the buffer's is newer.
  ASSERT_TRUE(arr.put(0, 1024 + 13, 3).ok());
  auto u = dev.async_read(0, 1, f.buffer());
  ASSERT_TRUE(dev.wait(u).ok());
  EXPECT_EQ(word(u, 13), 3u);
  ASSERT_TRUE(dev.write_shared(u, 13 * 4, 4, &four).ok());
  ASSERT_TRUE(dev.release(u).ok());
  EXPECT_EQ(arr[0][1024 + 13], 4u);
  // Two buffers of the same block: the newer write wins although its buffer is released first.
  auto older = dev.async_read(0, 1, f.buffer());
  ASSERT_TRUE(dev.wait(older).ok());
  ASSERT_TRUE(dev.write_shared(older, 20 * 4, 4, &five).ok());
  ASSERT_TRUE(dev.write_bytes(0, 1, 21 * 4, 4, &five, soon()).ok());  // detaches `older`
  auto newer = dev.async_read(0, 1, f.buffer());
  EXPECT_EQ(newer.role, share_role::owner);
  ASSERT_TRUE(dev.wait(newer).ok());
  EXPECT_EQ(word(newer, 20), pattern(1, 20));  // not propagated yet: its owner holds it
  ASSERT_TRUE(dev.write_shared(newer, 20 * 4, 4, &seven).ok());
  ASSERT_TRUE(dev.release(newer).ok());
  ASSERT_TRUE(dev.release(older).ok());
  EXPECT_EQ(arr[0][1024 + 20], 7u);
  EXPECT_EQ(arr[0][1024 + 21], 5u);
  // async_write of the whole block is newer than every buffer's writes.
  auto last = dev.async_read(0, 1, f.buffer());
  ASSERT_TRUE(dev.wait(last).ok());
  ASSERT_TRUE(dev.write_shared(last, 0, 4, &seven).ok());
  std::uint32_t* block = f.buffer();
  for (std::uint32_t i = 0; i < 1024; ++i) block[i] = 9000 + i;
  ASSERT_TRUE(dev.wait(dev.async_write(0, 1, block)).ok());
  ASSERT_TRUE(dev.release(last).ok());
  EXPECT_EQ(arr[0][1024], 9000u);
}

// The owner learns when its buffer is free: its release waits for the sharers (to a deadline,
// then says timeout and may be called again), and nobody new shares the buffer meanwhile.
TEST(ShareTable, OwnersReleaseWaitsForSharers) {
  fixture f;
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  auto owner = dev.async_read(0, 5, f.buffer());
  auto sharer = dev.async_read(0, 5, f.buffer());
  ASSERT_TRUE(dev.wait(owner).ok());
  ASSERT_TRUE(dev.wait(sharer).ok());
  const std::uint32_t eleven = 11;
  ASSERT_TRUE(dev.write_shared(sharer, 4, 4, &eleven).ok());
  EXPECT_EQ(dev.release_for(owner, deadline::after_ms(20)).result, outcome::timeout);
  EXPECT_EQ(dev.shares.references(owner), 1u);
  auto fresh = dev.async_read(0, 5, f.buffer());
  EXPECT_EQ(fresh.role, share_role::owner);
  ASSERT_TRUE(dev.wait(fresh).ok());
  EXPECT_EQ(word(fresh, 1), pattern(5, 1));  // the shared write is not in the cache yet
  ASSERT_TRUE(dev.release(fresh).ok());
  std::thread sharer_thread([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(dev.release(sharer).ok());
  });
  EXPECT_TRUE(dev.release_for(owner, soon()).ok());
  sharer_thread.join();
  EXPECT_EQ(cached(*f.cache, 5, 1), 11u);
}

TEST(ShareTable, FailedFillReachesEverySharer) {
  fixture f("ram:64K?lba=4096&fault=eio@3");
  const auto& dev = f.dev();
  auto owner = dev.async_read(0, 3, f.buffer());
  auto sharer = dev.async_read(0, 3, f.buffer());
  ASSERT_EQ(sharer.role, share_role::sharer);
  const status seen_by_sharer = dev.wait(sharer);
  const status seen_by_owner = dev.wait(owner);
  EXPECT_EQ(seen_by_sharer.result, outcome::nvme_error);
  EXPECT_EQ(seen_by_owner.result, outcome::nvme_error);
  EXPECT_EQ(seen_by_owner.nvme_status, seen_by_sharer.nvme_status);
  EXPECT_THROW(f.rt.check(), io_error);
  const std::uint32_t x = 1;
  EXPECT_EQ(dev.write_shared(owner, 0, 4, &x).result, outcome::invalid_argument);  // nothing to write to
  ASSERT_TRUE(dev.release(sharer).ok());
  ASSERT_TRUE(dev.release(owner).ok());
  // A failed entry is not shared: the next request tries storage again (and fails again).
  auto again = dev.async_read(0, 3, f.buffer());
  EXPECT_EQ(again.role, share_role::owner);
  EXPECT_EQ(dev.wait(again).result, outcome::nvme_error);
  ASSERT_TRUE(dev.release(again).ok());
  auto good = dev.async_read(0, 2, f.buffer());
  EXPECT_TRUE(dev.wait(good).ok());
  ASSERT_TRUE(dev.release(good).ok());
}

// Two slots: a third source is read privately, into the caller's own buffer, and its writes
// go to the cache at once.
TEST(ShareTable, FullTableFallsBackToPrivateReads) {
  fixture f("ram:1M?lba=4096", 2);
  write_pattern(f.rt, 8);
  const auto& dev = f.dev();
  auto zero = dev.async_read(0, 0, f.buffer());
  auto one = dev.async_read(0, 1, f.buffer());
  std::uint32_t* mine = f.buffer();
  auto two = dev.async_read(0, 2, mine);
  EXPECT_EQ(zero.role, share_role::owner);
  EXPECT_EQ(one.role, share_role::owner);
  EXPECT_EQ(two.role, share_role::private_read);
  EXPECT_EQ(two.data(), mine);
  for (auto* t : {&zero, &one, &two}) ASSERT_TRUE(dev.wait(*t).ok());
  EXPECT_EQ(word(two, 4), pattern(2, 4));
  const std::uint32_t value = 44;
  ASSERT_TRUE(dev.write_shared(two, 4 * 4, 4, &value).ok());
  EXPECT_EQ(cached(*f.cache, 2, 4), 44u);
  EXPECT_EQ(dev.shares.references(two), 0u);
  ASSERT_TRUE(dev.release(two).ok());
  auto zero_again = dev.async_read(0, 0, f.buffer());  // still shared
  EXPECT_EQ(zero_again.role, share_role::sharer);
  for (auto* t : {&zero_again, &zero, &one}) ASSERT_TRUE(dev.release(*t).ok());
  auto two_again = dev.async_read(0, 2, f.buffer());  // room again
  EXPECT_EQ(two_again.role, share_role::owner);
  ASSERT_TRUE(dev.wait(two_again).ok());
  EXPECT_EQ(word(two_again, 4), 44u);
  ASSERT_TRUE(dev.release(two_again).ok());
}

// 64 threads, 4 blocks, 16 slots: each thread reads a block, writes its own word of it through
// the (often shared, sometimes private) buffer and releases, many times. No write is lost, every
// slot is free at the end, and storage has the last write of every thread.
TEST(ShareTable, ManyThreadsShareAndReleaseWithoutLostWrites) {
  fixture f("ram:1M?lba=4096", 16);
  const auto& dev = f.dev();
  constexpr unsigned threads = 64;
  constexpr std::uint64_t blocks = 4;
  constexpr std::uint64_t rounds = 24;
  std::vector<std::uint64_t*> buffers;
  for (unsigned t = 0; t < threads; ++t) buffers.push_back(reinterpret_cast<std::uint64_t*>(f.buffer()));
  std::atomic<unsigned> failures{0};
  run_threads(threads, [&](unsigned t) {
    for (std::uint64_t r = 0; r < rounds; ++r) {
      const std::uint64_t b = (t + r) % blocks;
      auto tx = dev.async_read(0, b, buffers[t]);
      if (!dev.wait(tx).ok()) failures++;
      const std::uint64_t value = std::uint64_t{t} << 32 | (r + 1);
      if (!dev.write_shared(tx, t * 8, 8, &value).ok()) failures++;
      if (!dev.release(tx).ok()) failures++;
    }
  });
  EXPECT_EQ(failures.load(), 0u);
  const cache::share_table& table = dev.shares;
  for (std::uint32_t s = 0; s < table.slot_count; ++s) EXPECT_EQ(table.words[s] & 7, 0u) << "slot " << s << " not free";
  EXPECT_GT(f.cache->counters().share_hits, 0u);
  f.cache->flush();
  const std::vector<std::uint64_t> stored = test::read_storage(f.rt, blocks);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (unsigned t = 0; t < threads; ++t) {
      std::uint64_t last = 0;
      for (std::uint64_t r = 0; r < rounds; ++r) {
        if ((t + r) % blocks == b) last = r + 1;
      }
      ASSERT_EQ(stored[b * 512 + t], std::uint64_t{t} << 32 | last) << "block " << b << " thread " << t;
    }
  }
}

}  // namespace
}  // namespace agio
