// A cache above a host tier (cache/host_tier.hpp) on CPU threads: reads served by the tier
// instead of storage, admission on reuse, writes through both levels reaching storage on
// flush and on stop, NUMA placement, lines taken from a memory buffer and the errors of a tier
// that does not fit. The shadow
// model runs above a tier too (test_cache_shadow.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <system_error>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::cpu_options;
using test::read_storage;

template <class Admission>
using tiered = software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table,
                              cache::tiered_io<cache::clock, Admission, io_handle>>;
using tier_cache = software_cache<cache::clock>;

cache_options in_host_memory(std::uint32_t lines, int numa_node = -1) {
  cache_options o{std::size_t{lines} * 4096, 4096, 4};
  o.memory = cache_memory::host;
  o.numa_node = numa_node;
  return o;
}

std::uint64_t store_commands(const runtime& rt) { return rt.counters().at(0).submitted; }

// A started runtime on a 1 MiB ram: store of 4 KiB blocks.
class HostTier : public ::testing::Test {
 protected:
  void SetUp() override {
    rt.attach(device_options{"ram:1M?lba=4096", 1, 16});
    rt.start();
  }
  runtime rt{cpu_options()};
};

// Block b's 64-bit words hold b * 1000 + word.
void write_pattern(runtime& rt, std::uint64_t blocks) {
  auto* buf = static_cast<std::uint64_t*>(rt.allocate_device(4096));
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (std::uint64_t w = 0; w < 512; ++w) buf[w] = b * 1000 + w;
    ASSERT_TRUE(rt.io().write(0, b, 1, buf).ok());
  }
  rt.free(buf);
}

// Reads every block through `cache` and checks each word.
template <class Cache>
void read_all(const Cache& cache, std::uint64_t blocks) {
  std::uint64_t words[512];
  for (std::uint64_t b = 0; b < blocks; ++b) {
    ASSERT_TRUE(cache.device().read_bytes(0, b, 0, 4096, words, deadline::after_ms(10'000)).ok());
    for (std::uint64_t w = 0; w < 512; ++w) ASSERT_EQ(words[w], b * 1000 + w) << "block " << b << " word " << w;
  }
}

// A second pass over 64 blocks through an 8-line cache misses on every block again, and the
// 64-line tier below serves every one of those misses: storage sees no command.
TEST_F(HostTier, ServesTheMissesOfTheCacheAbove) {
  write_pattern(rt, 64);
  tier_cache tier(rt, in_host_memory(64));
  tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
  read_all(cache, 64);
  const std::uint64_t after_first = store_commands(rt);
  EXPECT_EQ(tier.counters().misses, 64u);
  read_all(cache, 64);
  EXPECT_EQ(store_commands(rt), after_first);
  EXPECT_EQ(cache.counters().misses, 128u);
  EXPECT_EQ(tier.counters().hits, 64u);
  test::expect_nothing_held(cache);
  test::expect_nothing_held(tier);
}

// Admission on reuse: a block enters the tier on its second miss. A scan's first pass leaves
// the tier empty (it reads storage straight into the cache above); the second pass admits.
TEST_F(HostTier, AdmittingOnReuseLetsAScanPassBy) {
  write_pattern(rt, 64);
  tier_cache tier(rt, in_host_memory(64));
  tiered<cache::admit_on_reuse> cache(rt, tier, {8 * 4096, 4096, 4});
  read_all(cache, 64);
  EXPECT_EQ(tier.counters().misses, 0u);
  EXPECT_EQ(tier.counters().hits, 0u);
  read_all(cache, 64);
  // Most blocks are admitted now: the table remembering first misses has a slot per tier line,
  // and two blocks of one slot forget each other.
  const std::uint64_t admitted = tier.counters().misses;
  EXPECT_GT(admitted, 32u);
  read_all(cache, 64);
  EXPECT_EQ(tier.counters().hits, admitted);
}

// Admission on eviction (a victim cache): the first pass reads storage straight into the cache
// above and demotes each line it evicts into the tier; the second pass finds every block in one
// level or the other and sends storage no command.
TEST_F(HostTier, DemotesTheLinesTheCacheAboveEvicts) {
  write_pattern(rt, 64);
  tier_cache tier(rt, in_host_memory(64));
  tiered<cache::admit_on_eviction> cache(rt, tier, {8 * 4096, 4096, 4});
  read_all(cache, 64);
  const std::uint64_t after_first = store_commands(rt);
  EXPECT_EQ(tier.counters().misses, 0u);
  EXPECT_EQ(tier.counters().demotions, cache.counters().evictions);
  EXPECT_EQ(cache.counters().evictions, 56u);
  read_all(cache, 64);
  EXPECT_EQ(store_commands(rt), after_first);
  EXPECT_EQ(tier.counters().misses, 0u);
  EXPECT_EQ(tier.counters().hits, cache.counters().misses - 64);
  test::expect_nothing_held(cache);
  test::expect_nothing_held(tier);
}

// Writes through an 8-line cache over 64 blocks: its write-backs land in the tier (storage
// unchanged until the tier gives them up or is flushed); flush() writes both levels out.
TEST_F(HostTier, WritesReachStorageOnFlush) {
  tier_cache tier(rt, in_host_memory(64));
  tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
  const auto arr = cache.array<std::uint64_t>();
  for (std::uint64_t i = 0; i < 64 * 512; i += 5) ASSERT_TRUE(arr.put(0, i, i + 7).ok());
  EXPECT_GT(cache.counters().write_backs, 0u);
  EXPECT_EQ(tier.counters().write_backs, 0u);
  EXPECT_GT(tier.audit().modified, 0u);
  cache.flush();
  EXPECT_EQ(cache.audit().modified, 0u);
  EXPECT_EQ(tier.audit().modified, 0u);
  const auto stored = read_storage(rt, 64);
  for (std::uint64_t i = 0; i < 64 * 512; ++i) ASSERT_EQ(stored[i], i % 5 == 0 ? i + 7 : 0) << "element " << i;
}

// Stopping the runtime writes the cache's lines into the tier and then the tier's to storage
// (stop hooks run last added first), with no flush by the caller.
TEST(HostTierStop, WritesBothLevelsOutWithoutAFlush) {
  const test::temp_file file("host-tier-stop", true);
  {
    runtime rt(cpu_options());
    rt.attach(device_options{"file:" + file.path() + "?create=1M&lba=4096", 1, 16});
    rt.start();
    tier_cache tier(rt, in_host_memory(16));
    tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
    const auto arr = cache.array<std::uint64_t>();
    for (std::uint64_t i = 0; i < 64 * 512; i += 3) ASSERT_TRUE(arr.put(0, i, i * 2 + 1).ok());
    rt.stop();
  }
  runtime rt(cpu_options());
  rt.attach(device_options{"file:" + file.path() + "?lba=4096", 1, 16});
  rt.start();
  const auto stored = read_storage(rt, 64);
  for (std::uint64_t i = 0; i < 64 * 512; ++i) ASSERT_EQ(stored[i], i % 3 == 0 ? i * 2 + 1 : 0) << "element " << i;
}

// Emulated added latency (CXL) changes the time, not the data.
TEST_F(HostTier, AddedLatencyKeepsTheData) {
  write_pattern(rt, 32);
  tier_cache tier(rt, in_host_memory(32));
  tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4}, host_tier_options{190});
  read_all(cache, 32);
  read_all(cache, 32);
  EXPECT_EQ(tier.counters().hits, 32u);
}

// The tier's memory bound to NUMA node 0 (there on every Linux machine with NUMA support) holds
// the same data; a node the machine does not have is refused, naming it.
TEST_F(HostTier, BoundToANumaNode) {
  write_pattern(rt, 32);
  try {
    tier_cache tier(rt, in_host_memory(32, 0));
    tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
    read_all(cache, 32);
    read_all(cache, 32);
    EXPECT_EQ(tier.counters().hits, 32u);
  } catch (const std::system_error& e) {
    // A kernel without NUMA support refuses every binding.
    EXPECT_NE(std::string(e.what()).find("NUMA node 0"), std::string::npos) << e.what();
    EXPECT_EQ(e.code().value(), ENOSYS) << e.what();
  }
  try {
    tier_cache tier(rt, in_host_memory(32, 1000));
    ADD_FAILURE() << "a tier on node 1000 was made";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("NUMA node 1000"), std::string::npos) << e.what();
  }
}

// A tier whose lines are a region of a memory buffer (LMB's): the buffer counts them beside its
// other regions, the tier serves the cache above from them, a tier larger than what the buffer
// has left is refused, and the region goes back with the tier.
TEST_F(HostTier, TakesItsLinesFromAMemoryBufferBesideOtherRegions) {
  write_pattern(rt, 32);
  memory_buffer buffer(rt, 48 * 4096);
  const host_region other = buffer.allocate(16 * 4096);
  {
    cache_options below = in_host_memory(32);
    below.host_memory = &buffer;
    tier_cache tier(rt, below);
    EXPECT_EQ(buffer.used(), 48u * 4096);
    tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
    read_all(cache, 32);
    read_all(cache, 32);
    EXPECT_EQ(tier.counters().hits, 32u);
    cache_options more = in_host_memory(8);
    more.host_memory = &buffer;
    EXPECT_THROW(tier_cache(rt, more), std::length_error);
  }
  EXPECT_EQ(buffer.used(), 16u * 4096);
  EXPECT_EQ(buffer.region(other.id).data, other.data);

  runtime another(cpu_options());
  memory_buffer elsewhere(another, 32 * 4096);
  cache_options foreign = in_host_memory(8);
  foreign.host_memory = &elsewhere;
  EXPECT_THROW(tier_cache(rt, foreign), std::invalid_argument);
}

// A runtime configured with host tier memory (runtime_options::host_tier_bytes): tiers made on
// it take their lines from it without being told, up to its size, and give them back; a tier
// asking for another node than the runtime's memory is refused. Without it, a tier's memory is
// its own.
TEST(HostTierOnTheRuntime, TiersDrawOnTheRuntimesHostTierMemory) {
  runtime_options options = cpu_options();
  options.host_tier_bytes = 48 * 4096;
  runtime rt(options);
  rt.attach(device_options{"ram:1M?lba=4096", 1, 16});
  rt.start();
  write_pattern(rt, 32);
  memory_buffer* memory = rt.host_tier_memory();
  ASSERT_NE(memory, nullptr);
  EXPECT_EQ(memory->capacity(), 48u * 4096);
  {
    tier_cache tier(rt, in_host_memory(32));
    EXPECT_EQ(memory->used(), 32u * 4096);
    tiered<cache::admit_always> cache(rt, tier, {8 * 4096, 4096, 4});
    read_all(cache, 32);
    read_all(cache, 32);
    EXPECT_EQ(tier.counters().hits, 32u);
    EXPECT_THROW(tier_cache(rt, in_host_memory(32)), std::length_error);
    EXPECT_THROW(tier_cache(rt, in_host_memory(8, 1000)), std::invalid_argument);
  }
  EXPECT_EQ(memory->used(), 0u);

  runtime plain(cpu_options());
  EXPECT_EQ(plain.host_tier_memory(), nullptr);
}

// The tier's lines must be the size of the cache's above it.
TEST_F(HostTier, LinesOfAnotherSizeAreRefused) {
  cache_options below = in_host_memory(32);
  below.line_bytes = 8192;
  tier_cache tier(rt, below);
  EXPECT_THROW((tiered<cache::admit_always>(rt, tier, {8 * 4096, 4096, 4})), std::invalid_argument);
}

}  // namespace
}  // namespace agio
