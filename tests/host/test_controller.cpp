// The proxy controller's PRP handling and the IOVA table, driven through raw commands.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "proxy/controller.hpp"
#include "proxy/iova_table.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

TEST(IovaTable, TranslatesInsideRegionsOnlyAndRejectsOverlaps) {
  proxy::iova_table table;
  table.add({0x10000, 0x1000, proxy::region_kind::host});
  table.add({0x20000, 0x2000, proxy::region_kind::device});
  EXPECT_THROW(table.add({0x20800, 0x100, proxy::region_kind::host}), std::invalid_argument);
  proxy::iova_table::reader reader(table);
  EXPECT_EQ(reader.translate(0x10000, 0x1000)->kind, proxy::region_kind::host);
  EXPECT_EQ(reader.translate(0x21000, 0x1000)->kind, proxy::region_kind::device);
  EXPECT_FALSE(reader.translate(0x10800, 0x1000)) << "runs off the end of its region";
  EXPECT_FALSE(reader.translate(0x0f000, 0x10));
  EXPECT_FALSE(reader.translate(0x30000, 0x10));
  table.remove(0x10000);
  EXPECT_FALSE(reader.translate(0x10000, 0x10)) << "a reader sees removals";
}

// A cache of registrations may leave a freed buffer registered: whatever is registered later over
// its addresses replaces it, and only it.
TEST(IovaTable, AReplaceableRegionGivesWayToALaterOne) {
  proxy::iova_table table;
  table.add({0x10000, 0x2000, proxy::region_kind::host, true});
  table.add({0x20000, 0x1000, proxy::region_kind::host});
  EXPECT_TRUE(table.holds(0x10800, 0x800));
  table.add({0x11000, 0x4000, proxy::region_kind::device});
  EXPECT_FALSE(table.holds(0x10000, 0x10)) << "the replaceable region is gone, all of it";
  EXPECT_TRUE(table.holds(0x11000, 0x4000));
  EXPECT_THROW(table.add({0x14000, 0x1000, proxy::region_kind::host, true}), std::invalid_argument);
  proxy::iova_table::reader reader(table);
  EXPECT_EQ(reader.translate(0x12000, 0x1000)->kind, proxy::region_kind::device);
  table.add({0x30000, 0x1000, proxy::region_kind::host});
  table.remove_replaceable(0x30000);
  EXPECT_TRUE(table.holds(0x30000, 0x1000)) << "only a replaceable region is removed that way";
}

class RawCommands : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.max_transfer_bytes = 64 * 1024;
    rt = std::make_unique<runtime>(opt);
    rt->attach("ram:1M?lba=4096");
    rt->start();
    pages = static_cast<std::byte*>(rt->allocate_host(16 * 4096));
    data = test::random_bytes(4 * 4096, 17);
    auto* src = static_cast<std::byte*>(rt->allocate_host(data.size()));
    std::memcpy(src, data.data(), data.size());
    ASSERT_TRUE(rt->io().write(0, 8, 4, src).ok());
  }
  std::uint64_t page(int i) const { return reinterpret_cast<std::uint64_t>(pages + std::size_t(i) * 4096); }
  // The four blocks written in SetUp landed in these pages, in this order.
  void expect_pages(const int (&order)[4]) const {
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(0, std::memcmp(pages + order[k] * 4096, data.data() + k * 4096, 4096)) << "page " << k;
    }
  }
  status read_with(std::uint64_t prp1, std::uint64_t prp2) const {
    const auto cmd = spec::make_rw(spec::opcode::read, 0, 1, 8, 4, prp1, prp2);
    return rt->io().wait(rt->io().async_passthrough(0, cmd, nullptr, 4 * 4096));
  }

  std::unique_ptr<runtime> rt;
  std::byte* pages = nullptr;
  std::vector<std::byte> data;
};

// A PRP list may name pages anywhere; the controller scatters the data into each in order.
TEST_F(RawCommands, PrpListScattersIntoNonContiguousPages) {
  auto* list = reinterpret_cast<std::uint64_t*>(pages + 15 * 4096);
  list[0] = page(9);
  list[1] = page(2);
  list[2] = page(6);
  ASSERT_TRUE(read_with(page(4), reinterpret_cast<std::uint64_t>(list)).ok());
  expect_pages({4, 9, 2, 6});
}

// When a list page is full, its last entry points to the next list page (NVMe Base 2.0
// §4.1.1). A list starting 16 bytes before a page boundary holds one entry, then the chain.
TEST_F(RawCommands, PrpListChainsAcrossAPageBoundary) {
  std::byte* list_start = pages + 13 * 4096 - 16;
  auto* first = reinterpret_cast<std::uint64_t*>(list_start);
  auto* next = reinterpret_cast<std::uint64_t*>(pages + 11 * 4096);
  first[0] = page(1);
  first[1] = reinterpret_cast<std::uint64_t>(next);  // last entry of the page: the chain
  next[0] = page(3);
  next[1] = page(5);
  ASSERT_TRUE(read_with(page(0), reinterpret_cast<std::uint64_t>(list_start)).ok());
  expect_pages({0, 1, 3, 5});
}

TEST_F(RawCommands, ListEntriesWithAnOffsetAreInvalid) {
  auto* list = reinterpret_cast<std::uint64_t*>(pages + 15 * 4096);
  list[0] = page(9) + 8;
  list[1] = page(2);
  list[2] = page(6);
  EXPECT_EQ(read_with(page(4), reinterpret_cast<std::uint64_t>(list)).nvme_status,
            spec::make_status(spec::status_type::generic, spec::generic::prp_offset_invalid));
}

TEST(Counters, LatencyQuantilesComeFromTheHistogram) {
  device_counters c;
  c.latency_log2_ns.assign(40, 0);
  c.latency_log2_ns[10] = 90;  // [1024, 2048) ns
  c.latency_log2_ns[20] = 10;  // [1 Mi, 2 Mi) ns
  EXPECT_EQ(c.latency_quantile_ns(0.5), 2048u);
  EXPECT_EQ(c.latency_quantile_ns(0.95), 2u << 20);
  EXPECT_EQ(device_counters{}.latency_quantile_ns(0.5), 0u);
}

TEST(Counters, LatencyIsRecordedForEveryCompletion) {
  runtime_options opt;
  opt.backend = backend::cpu;
  runtime rt(opt);
  rt.attach("ram:1M?read_us=300");
  rt.start();
  auto* buf = rt.allocate_device(4096);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(rt.io().read(0, 0, 8, buf).ok());
  rt.stop();
  const auto c = rt.counters()[0];
  std::uint64_t recorded = 0;
  for (auto n : c.latency_log2_ns) recorded += n;
  EXPECT_EQ(recorded, 5u);
  EXPECT_GE(c.latency_quantile_ns(0.5), 300'000u) << "the profile's 300 us latency is part of every request";
  EXPECT_EQ(c.bytes, 5u * 4096);
}

// The threads of this process whose name starts with `prefix`, by their /proc task folder.
std::vector<std::filesystem::path> threads_named(const std::string& prefix) {
  std::vector<std::filesystem::path> found;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    if (std::getline(comm, name) && name.rfind(prefix, 0) == 0) found.push_back(task.path());
  }
  return found;
}

TEST(ControllerThreads, AreNamedAndSleepWithAOneMicrosecondTimerSlack) {
  runtime_options opt;
  opt.backend = backend::cpu;
  opt.controller_threads = 3;
  runtime rt(opt);
  rt.attach("ram:1M");
  rt.start();
  auto* buf = rt.allocate_device(4096);
  ASSERT_TRUE(rt.io().read(0, 0, 8, buf).ok());
  // A thread names itself as it starts: give the others a moment.
  std::vector<std::filesystem::path> named;
  for (int tries = 0; tries < 500 && named.size() < 3; ++tries) {
    named = threads_named("agio-ctl-");
    if (named.size() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  ASSERT_EQ(named.size(), 3u) << "one named thread per controller thread";
  for (const auto& task : named) {
    // Linux lists a thread's timer slack under /proc/<tid>, not under its task folder.
    std::ifstream slack(std::filesystem::path("/proc") / task.filename() / "timerslack_ns");
    std::uint64_t ns = 0;
    ASSERT_TRUE(slack >> ns) << task;
    EXPECT_EQ(ns, proxy::controller_timer_slack_ns) << task;
  }
  rt.stop();
  EXPECT_TRUE(threads_named("agio-ctl-").empty()) << "the threads end with the runtime's stop";
}

}  // namespace
}  // namespace agio
