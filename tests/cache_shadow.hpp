#pragma once
// The shadow-model scenarios shared by the CPU and GPU suites (tools/harness/shadow_run.hpp runs
// them): mixed cache operations from many threads against a model, with or without faults,
// stop/restart phases and short deadlines, then storage against the model.
#include <gtest/gtest.h>

#include <string>

#include "harness/shadow_run.hpp"

namespace agio::test {

// Faults of every kind: one block whose reads always fail, random read and write failures, 1 in
// 16 operations under a deadline too short for a miss, and `phases` runtimes opened on the file
// one after another (the last without write faults). `lines` gives each phase's cache size in
// turn, small and large.
inline bench::shadow_config faulty_config(bench::shadow_config c, std::uint64_t hurried_ns) {
  c.faults.failing_block = true;
  c.faults.rate = 0.0005;
  c.faults.read_rate = 0.01;
  c.faults.seed = 7;
  c.hurry_every = 16;
  c.hurried_ns = hurried_ns;
  return c;
}

// What every run must show: no wrong value, no lost write, every line free after each round,
// every fault the store injected counted by the cache, and a last flush that succeeded.
inline void expect_clean(const bench::shadow_report& r, bool faults) {
  EXPECT_EQ(r.wrong_values, 0u) << r.first_problem;
  EXPECT_EQ(r.lost_writes, 0u) << r.first_problem;
  EXPECT_EQ(r.stuck_lines, 0u) << r.first_problem;
  EXPECT_EQ(r.injected_faults, r.surfaced_faults) << "faults the store injected that the cache did not count";
  EXPECT_GT(r.tally.reads_checked, 0u);
  EXPECT_GT(r.tally.writes_acknowledged, 0u);
  EXPECT_GT(r.counters.evictions, 0u);
  if (faults) {
    EXPECT_GT(r.injected_faults, 0u);
    EXPECT_GT(r.tally.store_errors, 0u);
    EXPECT_GT(r.tally.timeouts, 0u);
  } else {
    EXPECT_EQ(r.injected_faults, 0u);
    EXPECT_EQ(r.tally.store_errors + r.tally.timeouts, 0u);
    EXPECT_EQ(r.failed_flushes, 0u);
  }
}

}  // namespace agio::test
