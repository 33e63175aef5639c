// The lock-chain debugger on CPU threads: cycles of lock waits are reported (directly through
// lock_chain, and through a deliberately cyclic cache policy) instead of hanging, and runs that
// take locks in one order report nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "agio/runtime/lock_chain_recorder.hpp"
#include "agio/runtime/software_cache.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using namespace std::chrono_literals;
using test::run_threads;

// "Compiles away": the default lock type carries no state, and the debugger's is a plain value.
static_assert(std::is_empty_v<cache::no_lock_chain>);
static_assert(std::is_trivially_copyable_v<cache::lock_chain>);

runtime_options short_options() {
  runtime_options o;
  o.backend = backend::cpu;
  o.max_transfer_bytes = 16 * 1024;
  o.wait_timeout_ms = 1'500;  // the cyclic tests retry until this passes
  o.submit_timeout_ms = 2'000;
  o.stop_timeout_ms = 5'000;
  return o;
}

void wait_for_all(std::atomic<unsigned>& arrived, unsigned count) {
  arrived.fetch_add(1);
  while (arrived.load() < count) std::this_thread::yield();
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// --- lock_chain on its own ---------------------------------------------------------------------

// Thread i takes policy lock i, then policy lock (i + 1) % n: a cycle of n waits.
void run_ring(unsigned n) {
  runtime rt(short_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  cache::lock_chain_recorder recorder(rt, 64);
  const cache::lock_chain locks = recorder.locks();
  auto* words = static_cast<std::uint32_t*>(rt.allocate_device(n * sizeof(std::uint32_t)));
  const std::vector<std::uint32_t> zero(n, 0);
  rt.copy_to_device(words, zero.data(), n * sizeof(std::uint32_t));

  std::vector<std::atomic<std::uint32_t>> index(n);
  std::vector<std::atomic<int>> second(n);
  std::atomic<unsigned> arrived{0};
  const auto start = std::chrono::steady_clock::now();
  run_threads(n, [&](unsigned i) {
    index[i] = detail::thread_index();
    const cache::lock_name mine{cache::lock_kind::policy, i};
    const cache::lock_name next{cache::lock_kind::policy, (i + 1) % n};
    ASSERT_TRUE(locks.acquire(words[i], mine, deadline::after_ms(10'000)).ok());
    wait_for_all(arrived, n);
    const status s = locks.acquire(words[(i + 1) % n], next, deadline::after_ms(10'000));
    second[i] = static_cast<int>(s.result);
    if (s.ok()) locks.release(words[(i + 1) % n], next);
    locks.release(words[i], mine);
  });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 5s) << "the cycle was not broken before the deadlines";

  unsigned deadlocks = 0;
  for (unsigned i = 0; i < n; ++i) {
    const auto result = static_cast<outcome>(second[i].load());
    EXPECT_TRUE(result == outcome::success || result == outcome::deadlock) << describe(result);
    if (result == outcome::deadlock) ++deadlocks;
  }
  EXPECT_GE(deadlocks, 1u);
  EXPECT_GE(recorder.deadlocks(), deadlocks);

  const auto report = recorder.report();
  ASSERT_TRUE(report.has_value());
  EXPECT_TRUE(contains(*report, "lock cycle: ")) << *report;
  for (unsigned i = 0; i < n; ++i) {
    const std::string entry = "thread " + std::to_string(index[i].load()) + " holds policy lock " + std::to_string(i) +
                              " and waits for policy lock " + std::to_string((i + 1) % n);
    EXPECT_TRUE(contains(*report, entry)) << "missing \"" << entry << "\" in: " << *report;
  }
  rt.free(words);
}

TEST(LockChain, TwoThreadCycleIsReported) { run_ring(2); }
TEST(LockChain, ThreeThreadCycleIsReported) { run_ring(3); }

// Threads take lock 0 then lock 1, contended but always in the same order: no cycle.
TEST(LockChain, SameOrderReportsNothing) {
  runtime rt(short_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  cache::lock_chain_recorder recorder(rt, 64);
  const cache::lock_chain locks = recorder.locks();
  auto* words = static_cast<std::uint32_t*>(rt.allocate_device(2 * sizeof(std::uint32_t)));
  const std::uint32_t zero[2] = {0, 0};
  rt.copy_to_device(words, zero, sizeof zero);
  std::uint64_t counter = 0;  // guarded by the two locks
  std::atomic<int> failures{0};
  constexpr unsigned threads = 4;
  constexpr unsigned rounds = 300;
  run_threads(threads, [&](unsigned) {
    const cache::lock_name first{cache::lock_kind::cache_set, 0};
    const cache::lock_name second{cache::lock_kind::policy, 1};
    for (unsigned r = 0; r < rounds; ++r) {
      if (!locks.acquire(words[0], first, deadline::after_ms(10'000)).ok()) {
        ++failures;
        continue;
      }
      if (locks.acquire(words[1], second, deadline::after_ms(10'000)).ok()) {
        ++counter;
        if (r % 64 == 0) std::this_thread::sleep_for(50us);  // let the others queue up
        locks.release(words[1], second);
      } else {
        ++failures;
      }
      locks.release(words[0], first);
    }
  });
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(counter, std::uint64_t{threads} * rounds);
  EXPECT_FALSE(recorder.report().has_value()) << *recorder.report();
  EXPECT_EQ(recorder.deadlocks(), 0u);
  rt.free(words);
}

// A value-initialized lock_chain (what software_cache<P, lock_chain> holds) is a plain lock.
TEST(LockChain, WithoutRecordsIsAPlainLock) {
  const cache::lock_chain plain{};
  std::uint32_t word = 0;
  const cache::lock_name name{cache::lock_kind::cache_set, 0};
  ASSERT_TRUE(plain.acquire(word, name, deadline::after_ms(100)).ok());
  EXPECT_EQ(word, detail::thread_index() + 1);
  std::thread other([&] { EXPECT_EQ(plain.acquire(word, name, deadline::after_ms(20)).result, outcome::timeout); });
  other.join();
  plain.release(word, name);
  EXPECT_EQ(word, 0u);
}

// --- Through the cache -------------------------------------------------------------------------

std::atomic<int> policy_deadlocks{0};
std::atomic<int> policy_other_failures{0};
std::atomic<int> in_victim{0};

// A deliberately broken policy: while the cache holds its set's lock, victim() takes the lock of
// the next set too. Two threads missing on adjacent sets at once wait for each other.
class cyclic_policy : public cache::cache_policy<cyclic_policy> {
 public:
  static constexpr std::uint32_t fixed_ways = 1;

  template <class Evictable, class Locks>
  std::uint32_t victim(const cache::cache_state& c, std::uint32_t set, Evictable&& evictable,
                       const Locks& locks) const {
    const std::uint32_t next = (set + 1) % c.set_count;
    const cache::lock_name name{cache::lock_kind::cache_set, next};
    // Both threads hold their own set lock before either takes the other's (on the first try;
    // later tries race freely), with a short sleep so that they interleave.
    in_victim.fetch_add(1);
    const auto until = std::chrono::steady_clock::now() + 1s;
    while (in_victim.load() < 2 && std::chrono::steady_clock::now() < until) std::this_thread::yield();
    std::this_thread::sleep_for(2ms);
    const status s = locks.acquire(c.set_locks[next], name, deadline::after_ms(3'000));
    if (!s.ok()) {
      // The cache only sees no_line; the recorder has the cycle.
      ++(s.result == outcome::deadlock ? policy_deadlocks : policy_other_failures);
      return cache::no_line;
    }
    locks.release(c.set_locks[next], name);
    const std::uint32_t line = first_line(c, set);
    return evictable(line) ? line : cache::no_line;
  }
};

// Takes one policy lock (in the policy's state) inside victim(): every thread takes its set lock
// then policy lock 0, always in that order.
class ordered_policy : public cache::cache_policy<ordered_policy> {
 public:
  static constexpr std::uint32_t fixed_ways = 1;
  static std::size_t state_bytes(std::uint32_t, std::uint32_t) { return sizeof(std::uint32_t); }

  template <class Evictable, class Locks>
  std::uint32_t victim(const cache::cache_state& c, std::uint32_t set, Evictable&& evictable,
                       const Locks& locks) const {
    std::uint32_t& word = *static_cast<std::uint32_t*>(c.policy_state);
    const cache::lock_name name{cache::lock_kind::policy, 0};
    if (!locks.acquire(word, name, deadline::after_ms(3'000)).ok()) {
      ++policy_other_failures;
      return cache::no_line;
    }
    std::this_thread::sleep_for(200us);
    locks.release(word, name);
    const std::uint32_t line = first_line(c, set);
    return evictable(line) ? line : cache::no_line;
  }
};

TEST(LockChain, CyclicPolicyIsReportedNotHung) {
  policy_deadlocks = 0;
  policy_other_failures = 0;
  in_victim = 0;
  runtime rt(short_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  cache::lock_chain_recorder recorder(rt, 64);
  software_cache<cyclic_policy, cache::lock_chain> cache(rt, {2 * 4096, 4096, 1});  // sets 0 and 1
  auto h = cache.device();
  h.locks = recorder.locks();

  std::atomic<std::uint32_t> index[2];
  std::atomic<unsigned> arrived{0};
  const auto start = std::chrono::steady_clock::now();
  run_threads(2, [&](unsigned i) {
    index[i] = detail::thread_index();
    wait_for_all(arrived, 2);
    // Block i lives in set i; both miss and deadlock in victim() until one gets through or the
    // deadline passes: either ends the call.
    std::uint8_t byte = 0;
    const status s = h.read_bytes(0, i, 0, 1, &byte, deadline::after_ns(h.wait_timeout_ns));
    EXPECT_TRUE(s.ok() || s.result == outcome::timeout) << describe(s.result);
  });
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, 6s);
  EXPECT_GE(policy_deadlocks.load(), 1);
  EXPECT_EQ(policy_other_failures.load(), 0);
  EXPECT_GE(recorder.deadlocks(), 1u);

  const auto report = recorder.report();
  ASSERT_TRUE(report.has_value());
  std::printf("%s\n", report->c_str());
  for (unsigned i = 0; i < 2; ++i) {
    const std::string entry = "thread " + std::to_string(index[i].load()) + " holds cache set " + std::to_string(i) +
                              " and waits for cache set " + std::to_string(1 - i);
    EXPECT_TRUE(contains(*report, entry)) << "missing \"" << entry << "\" in: " << *report;
  }
}

TEST(LockChain, OrderedPolicyReportsNothing) {
  policy_other_failures = 0;
  runtime rt(short_options());
  rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
  rt.start();
  cache::lock_chain_recorder recorder(rt, 64);
  software_cache<ordered_policy, cache::lock_chain> cache(rt, {4 * 4096, 4096, 1});
  auto h = cache.device();
  h.locks = recorder.locks();
  std::atomic<int> failures{0};
  run_threads(4, [&](unsigned i) {
    for (std::uint64_t b = i; b < 64; b += 4) {  // misses on every set, evicting as it goes
      std::uint8_t byte = 0;
      if (!h.read_bytes(0, b, 0, 1, &byte, deadline::after_ms(10'000)).ok()) ++failures;
    }
  });
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(policy_other_failures.load(), 0);
  EXPECT_FALSE(recorder.report().has_value()) << *recorder.report();
  EXPECT_EQ(recorder.deadlocks(), 0u);
}

}  // namespace
}  // namespace agio
