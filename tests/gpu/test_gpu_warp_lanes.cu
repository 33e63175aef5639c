// Lanes of one warp that access the cache together are coalesced: one lane (the leader) acquires
// the line for its group. Two things must not leak between lanes through that: the cache (lanes
// of a warp may read through different caches, where the same block sits in different lines or
// in none) and the deadline (lanes may use handles with different timeouts). GPU only: CPU
// threads form groups of one.
#include <gtest/gtest.h>

#include <type_traits>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "gpu_jobs.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t line_bytes = 4096;
constexpr std::uint32_t per_line = line_bytes / 4;

using test::bump;
using test::pattern;
using test::pattern_job;
template <class IO>
using view = test::clock_view<IO>;
template <class IO>
using cache_of = software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO>;

struct lane_counts {
  std::uint32_t wrong;
  std::uint32_t failed;
};

// Thread t reads one element of each of `count` blocks from `first` on (to warm a cache).
template <class IO>
struct touch_job {
  view<IO> arr;
  std::uint64_t first;
  std::uint64_t count;
  lane_counts* counts;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    for (std::uint64_t b = first; b < first + count; ++b) {
      std::uint32_t v = 0;
      const std::uint64_t i = b * per_line + t;
      if (!arr.get(0, i, v).ok()) bump(counts->failed);
      else if (v != pattern(i)) bump(counts->wrong);
    }
  }
};

// Even lanes read block `block` through one cache, odd lanes the same block through another,
// in the same instruction.
template <class IO>
struct two_caches_job {
  view<IO> even;
  view<IO> odd;
  std::uint64_t block;
  lane_counts* counts;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const view<IO>& arr = t % 2 == 0 ? even : odd;
    const std::uint64_t i = block * per_line + t % per_line;
    std::uint32_t v = 0;
    if (!arr.get(0, i, v).ok()) bump(counts->failed);
    else if (v != pattern(i)) bump(counts->wrong);
  }
};

// Cache A holds block 5 only; cache B holds blocks 0-3 in its four lines. A warp whose even
// lanes read block 5 through A and whose odd lanes read it through B: B's lanes must miss and
// fill, not read whatever B keeps in the line where A keeps block 5.
TEST(GpuWarpLanes, LanesOfTwoCachesEachReadTheirOwnCache) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:64K?lba=4096", 4, 32});
  rt.start();
  auto* counts = static_cast<lane_counts*>(rt.allocate_device(sizeof(lane_counts)));
  const lane_counts zero{};
  rt.copy_to_device(counts, &zero, sizeof zero);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    {
      cache_of<IO> writer(rt, {4 * line_bytes, line_bytes, 4});
      run_job(rt, 256, pattern_job<IO>{writer.template array<std::uint32_t>(), 16, &counts->failed});
      writer.flush();
    }
    cache_of<IO> a(rt, {4 * line_bytes, line_bytes, 4});
    cache_of<IO> b(rt, {4 * line_bytes, line_bytes, 4});
    run_job(rt, 32, touch_job<IO>{a.template array<std::uint32_t>(), 5, 1, counts});
    run_job(rt, 32, touch_job<IO>{b.template array<std::uint32_t>(), 0, 4, counts});
    run_job(rt, 1024,
            two_caches_job<IO>{a.template array<std::uint32_t>(), b.template array<std::uint32_t>(), 5, counts});
    EXPECT_EQ(a.audit().live_pins, 0u);
    EXPECT_EQ(b.audit().live_pins, 0u);
  });
  lane_counts c{};
  rt.copy_to_host(&c, counts, sizeof c);
  EXPECT_EQ(c.wrong, 0u) << "lanes that read another cache's line";
  EXPECT_EQ(c.failed, 0u);
  rt.free(counts);
  rt.stop();
}

// Even lanes (lane 0, the leader, among them) read through a handle whose deadline passes
// almost at once; odd lanes through one with the full timeout. The block's fill takes 2 ms, so
// the leader gives up first: the odd lanes must still get their data.
template <class IO>
struct mixed_deadlines_job {
  view<IO> hurried;
  view<IO> patient;
  std::uint64_t block;
  lane_counts* counts;  // failures and wrong values of the patient lanes
  std::uint32_t* hurried_timeouts;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const bool hurry = t % 2 == 0;
    const view<IO>& arr = hurry ? hurried : patient;
    const std::uint64_t i = block * per_line + t % per_line;
    std::uint32_t v = 0;
    const status s = arr.get(0, i, v);
    if (hurry) {
      if (s.result == outcome::timeout) bump(*hurried_timeouts);
      return;
    }
    if (!s.ok()) bump(counts->failed);
    else if (v != pattern(i)) bump(counts->wrong);
  }
};

TEST(GpuWarpLanes, LanesWithALongerDeadlineOutwaitTheirLeader) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:64K?lba=4096&read_us=2000", 4, 32});
  rt.start();
  auto* counts = static_cast<lane_counts*>(rt.allocate_device(sizeof(lane_counts)));
  auto* timeouts = static_cast<std::uint32_t*>(rt.allocate_device(4));
  const lane_counts zero{};
  const std::uint32_t none = 0;
  rt.copy_to_device(counts, &zero, sizeof zero);
  rt.copy_to_device(timeouts, &none, 4);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    {
      cache_of<IO> writer(rt, {4 * line_bytes, line_bytes, 4});
      run_job(rt, 256, pattern_job<IO>{writer.template array<std::uint32_t>(), 16, &counts->failed});
      writer.flush();
    }
    // A fresh cache: every block misses, and each fill takes 2 ms.
    cache_of<IO> cache(rt, {16 * line_bytes, line_bytes, 4});
    auto quick = cache.device();
    quick.wait_timeout_ns = 1'000;
    for (std::uint64_t block = 0; block < 4; ++block) {
      run_job(rt, 256,
              mixed_deadlines_job<IO>{view<IO>{quick}, cache.template array<std::uint32_t>(), block, counts, timeouts});
    }
    EXPECT_EQ(cache.audit().live_pins, 0u);
  });
  lane_counts c{};
  std::uint32_t hurried_timeouts = 0;
  rt.copy_to_host(&c, counts, sizeof c);
  rt.copy_to_host(&hurried_timeouts, timeouts, 4);
  EXPECT_EQ(c.failed, 0u) << "patient lanes that failed with their hurried leader";
  EXPECT_EQ(c.wrong, 0u);
  EXPECT_GT(hurried_timeouts, 0u) << "the hurried lanes never gave up: the test proves nothing";
  rt.free(counts);
  rt.free(timeouts);
  rt.stop();
}

}  // namespace
}  // namespace agio
