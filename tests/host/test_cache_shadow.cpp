// The cache against a shadow model on CPU threads (tests/cache_shadow.hpp): over a million
// mixed operations through 8 lines for 64 blocks, then a flush and a byte-for-byte check of
// storage. With a completion service, with waiters retiring their own completions (the
// BaM-style mode, whose retirement paths differ), and with a share table.
#include <gtest/gtest.h>

#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/software_cache.hpp"
#include "agio/runtime/launch.hpp"
#include "cache_shadow.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using policy = cache::lfu_da;

// The cache's lines as they are now, for a failure message.
template <class Handle>
std::string describe_lines(const Handle& h) {
  std::ostringstream out;
  for (std::uint32_t l = 0; l < h.state.line_count; ++l) {
    const std::uint32_t word = detail::load<detail::scope::device>(h.state.words[l], detail::relaxed);
    const std::uint64_t tag = detail::load<detail::scope::device>(h.state.tags[l], detail::relaxed);
    out << "\n  line " << l << ": state " << cache::state_of(word) << ", pins " << cache::pins_of(word) << ", block "
        << (tag == cache::no_tag ? -1 : static_cast<long long>(cache::tag_block(tag)));
  }
  return out.str();
}

// IO picks the completion mode: `controller` runs a completion service, `waiting_controller`
// none.
template <class Shares, class IO = controller>
void shadow_run() {
  runtime_options o = test::cpu_options();
  o.completion = IO::waiters_retire ? completion_mode::waiters : completion_mode::service;
  const test::shadow_shape shape;  // 8 threads × 131072 operations over 64 blocks
  constexpr std::uint32_t line_bytes = test::shadow_shape::line_bytes;
  runtime rt(o);
  rt.attach(device_options{"ram:" + std::to_string(shape.blocks() * line_bytes) + "?lba=512", 2, 16});
  rt.start();
  std::vector<std::uint32_t> truth(shape.blocks() * test::shadow_shape::words_per_block, 0);
  {
    // 8 lines in 2 sets of 4 ways: nearly every access evicts, or waits on a fill.
    // A share table of 16 slots for the threads' whole-block reads.
    software_cache<policy, cache::no_lock_chain, Shares, IO> cache(rt, {8 * line_bytes, line_bytes, 4, 16});
    auto* buffers = static_cast<std::uint32_t*>(rt.allocate_device(std::size_t{shape.threads} * line_bytes));
    test::shadow_failure failure{};
    run_job(rt, shape.threads, test::shadow_job<policy, Shares, IO>{cache.device(), shape, truth.data(), buffers, &failure});
    ASSERT_EQ(failure.count, 0u) << failure.describe() << "\ncache lines now:" << describe_lines(cache.device());
    cache.flush();
    const auto c = cache.counters();
    EXPECT_GT(c.evictions, 0u);
    EXPECT_GT(c.write_backs, 0u);
    EXPECT_GT(c.hits_on_busy, 0u);
    if constexpr (Shares::enabled) {
      EXPECT_GT(c.share_hits, 0u);
    }
    rt.free(buffers);
  }
  const std::vector<std::uint64_t> stored = test::read_storage(rt, shape.blocks());
  for (std::uint64_t b = 0; b < shape.blocks(); ++b) {
    const void* model = &truth[b * test::shadow_shape::words_per_block];
    ASSERT_EQ(std::memcmp(&stored[b * (line_bytes / 8)], model, line_bytes), 0) << "storage block " << b;
  }
}

TEST(CacheShadow, MillionOperationsWithACompletionService) { shadow_run<cache::no_share_table>(); }
TEST(CacheShadow, MillionOperationsWithWaitersRetiring) { shadow_run<cache::no_share_table, waiting_controller>(); }
TEST(CacheShadow, MillionOperationsWithAShareTable) { shadow_run<cache::share_table>(); }

}  // namespace
}  // namespace agio
