// The GPU suite's cache: a thousand threads writing and reading through caches far smaller
// than the data, with each replacement policy, and array readers walking runs through two lines
// (one reader a thread) and through eight (two readers a thread).
#include <gtest/gtest.h>

#include <type_traits>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/chunk_job.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::gpu_options;

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
    software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> cache(
        rt, {std::size_t{lines} * 4096, 4096, ways});
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

// Writes element e = e * 7 + 3 to the first `blocks` blocks of a ram: store, then runs
// Job<IO>{array view of a clock cache of `lines` lines, blocks, failures} on 1024 threads; every
// value a job reads must match. Returns the cache's counters.
template <template <class> class Job>
cache_counters run_readers(const runtime_options& options, std::uint32_t blocks, std::uint32_t lines) {
  runtime rt(options);
  rt.attach(device_options{"ram:1M?lba=4096", 4, 32});
  rt.start();
  std::vector<std::uint32_t> words(blocks * 1024);
  for (std::uint32_t e = 0; e < words.size(); ++e) words[e] = e * 7 + 3;
  auto* data = static_cast<std::byte*>(rt.allocate_device(blocks * 4096));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  rt.copy_to_device(data, words.data(), blocks * 4096);
  const std::uint32_t zero = 0;
  rt.copy_to_device(failures, &zero, 4);
  cache_counters counters;
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, 16, bench::chunk_job<IO>{io, 0, 1, data, 4096, blocks, failures});
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt,
                                                                                        {lines * 4096, 4096, lines});
    run_job(rt, 1024, Job<IO>{cache.template array<std::uint32_t>(), blocks, failures});
    counters = cache.counters();
  });
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  EXPECT_EQ(failed, 0u);
  rt.check();
  rt.stop();
  return counters;
}

TEST(GpuCache, ReadersWalkRunsThroughATwoLineCache) {
  const cache_counters c = run_readers<cache_readers_job>(gpu_options(), 16, 2);
  EXPECT_GT(c.coalesced_in_warp, 0u);
  EXPECT_GT(c.evictions, 0u);
}

// Two readers a thread (SpMV's columns and values): each warp walks runs of both arrays side
// by side, 32 warps through eight lines. A reader that waited for its line while the thread's
// other reader held one would let the warps pin every line and stop the cache until their
// waits time out; named in get(), the other reader lets go first (array_reader.hpp).
template <class IO>
struct paired_readers_job {
  cache::array_view<std::uint32_t, cache::clock, cache::no_lock_chain, cache::no_share_table, IO> arr;
  std::uint32_t blocks;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    auto columns = arr.reader(0);
    auto values = arr.reader(0);
    const std::uint64_t half = std::uint64_t{blocks} / 2 * 1024;  // the second array starts here
    std::uint32_t wrong = 0;
    for (std::uint32_t k = 0; k < 4; ++k) {
      const std::uint64_t first = ((t / 32 + k * 5) % (blocks / 2)) * 1024 + (t % 32) * 32;
      for (std::uint64_t i = first; i < first + 32; ++i) {
        std::uint32_t c = 0, v = 0;
        if (!columns.get(i, c, values).ok() || c != static_cast<std::uint32_t>(i * 7 + 3)) wrong++;
        if (!values.get(half + i, v, columns).ok() || v != static_cast<std::uint32_t>((half + i) * 7 + 3)) wrong++;
      }
    }
    if (wrong != 0) detail::fetch_add<detail::scope::device>(*failures, wrong, detail::relaxed);
  }
};

TEST(GpuCache, TwoReadersAThreadThroughAnEightLineCache) {
  runtime_options o = gpu_options();
  o.wait_timeout_ms = 20'000;  // a stopped cache fails the test in seconds, not minutes
  EXPECT_GT(run_readers<paired_readers_job>(o, 32, 8).evictions, 0u);
}

}  // namespace
}  // namespace agio
