// The cache against a shadow model on CPU threads (tests/cache_shadow.hpp): mixed operations
// through a cache far smaller than the data, then a flush and a check of storage against the
// model. With a completion service, with waiters retiring their own completions (the BaM-style
// mode, whose retirement paths differ), and with a share table; over a million operations
// without faults, and shorter runs with faults, short deadlines and stop/restart phases.
#include <gtest/gtest.h>

#include "agio/cache/policies/lfu_da.hpp"
#include "cache_shadow.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using policy = cache::lfu_da;

// `waiters` picks the completion mode: a completion service, or waiters retiring completions.
bench::shadow_config base_config(const test::temp_file& file, bool waiters) {
  bench::shadow_config c;
  c.options = test::cpu_options();
  c.options.completion = waiters ? completion_mode::waiters : completion_mode::service;
  c.path = file.path();
  // 8 lines in 2 sets of 4 ways for 64 blocks: nearly every access evicts, or waits on a fill.
  c.cache_lines = {8};
  return c;
}

// 8 threads × 131072 operations, no faults, one phase.
template <class Shares>
void million_operations(bool waiters) {
  const test::temp_file file("shadow-million", true);
  const bench::shadow_report r = bench::run_shadow<policy, Shares>(base_config(file, waiters));
  test::expect_clean(r, false);
  EXPECT_GT(r.counters.write_backs, 0u);
  EXPECT_GT(r.counters.hits_on_busy, 0u);
  if constexpr (Shares::enabled) {
    EXPECT_GT(r.counters.share_hits, 0u);
  }
}

TEST(CacheShadow, MillionOperationsWithACompletionService) { million_operations<cache::no_share_table>(false); }
TEST(CacheShadow, MillionOperationsWithWaitersRetiring) { million_operations<cache::no_share_table>(true); }
TEST(CacheShadow, MillionOperationsWithAShareTable) { million_operations<cache::share_table>(false); }

// 8 threads × 1536 operations × 2 rounds (each ending in a flush) × 3 phases (8-, 64- and
// 8-line caches, a fresh runtime each), with an always-failing block, random read and write
// failures, and 1 in 16 operations under a 20 µs deadline.
template <class Shares>
void with_faults(bool waiters) {
  const test::temp_file file("shadow-faults", true);
  bench::shadow_config c = test::faulty_config(base_config(file, waiters), 20'000);
  c.shape.ops_per_thread = 1536;
  c.rounds = 2;
  c.phases = 3;
  c.cache_lines = {8, 64};
  const bench::shadow_report r = bench::run_shadow<policy, Shares>(c);
  test::expect_clean(r, true);
}

TEST(CacheShadowFaults, WithACompletionService) { with_faults<cache::no_share_table>(false); }
TEST(CacheShadowFaults, WithWaitersRetiring) { with_faults<cache::no_share_table>(true); }
TEST(CacheShadowFaults, WithAShareTable) { with_faults<cache::share_table>(false); }

// The same through a cache above a host tier (cache/host_tier.hpp) of 32 lines, half the
// blocks: both levels evict, the GPU cache's write-backs go into the tier and the tier's to
// storage. Without faults, then with them (as above), admitting every block, on reuse only, or
// on eviction (the clean lines the cache above evicts are demoted into the tier).
template <class Admission>
bench::shadow_report above_a_host_tier(bool faults, bool waiters) {
  const test::temp_file file("shadow-host-tier", true);
  bench::shadow_config c = base_config(file, waiters);
  c.host_tier_lines = 32;
  c.shape.ops_per_thread = 16384;
  if (faults) {
    c = test::faulty_config(c, 20'000);
    c.shape.ops_per_thread = 1536;
    c.rounds = 2;
    c.phases = 3;
    c.cache_lines = {8, 16};
  }
  return bench::run_shadow<policy, cache::no_share_table, Admission>(c);
}

TEST(CacheShadowHostTier, AdmittingEveryBlock) {
  const bench::shadow_report r = above_a_host_tier<cache::admit_always>(false, false);
  test::expect_clean(r, false);
  EXPECT_GT(r.counters.write_backs, 0u);
  EXPECT_GT(r.host_tier_counters.hits, 0u);
  EXPECT_GT(r.host_tier_counters.write_backs, 0u);
}
TEST(CacheShadowHostTier, AdmittingOnReuseWithWaitersRetiring) {
  const bench::shadow_report r = above_a_host_tier<cache::admit_on_reuse>(false, true);
  test::expect_clean(r, false);
  EXPECT_GT(r.host_tier_counters.hits, 0u);
}
TEST(CacheShadowHostTier, DemotingEvictedLines) {
  const bench::shadow_report r = above_a_host_tier<cache::admit_on_eviction>(false, false);
  test::expect_clean(r, false);
  EXPECT_GT(r.host_tier_counters.demotions, 0u);
  EXPECT_GT(r.host_tier_counters.hits, 0u);
}
TEST(CacheShadowHostTierFaults, AdmittingEveryBlock) {
  test::expect_clean(above_a_host_tier<cache::admit_always>(true, false), true);
}
TEST(CacheShadowHostTierFaults, AdmittingOnReuseWithWaitersRetiring) {
  test::expect_clean(above_a_host_tier<cache::admit_on_reuse>(true, true), true);
}
TEST(CacheShadowHostTierFaults, DemotingEvictedLinesWithWaitersRetiring) {
  test::expect_clean(above_a_host_tier<cache::admit_on_eviction>(true, true), true);
}

}  // namespace
}  // namespace agio
