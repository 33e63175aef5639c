#pragma once
// The controller's time counters (runtime::counters(), per queue pair) summed over devices and
// queue pairs: with the counts before and after a run, the mean time a command spent in the
// controller and in its store.
#include <cstdint>
#include <vector>

#include "agio/runtime/runtime.hpp"

namespace agio::bench {

struct controller_time {
  std::uint64_t commands = 0;
  std::uint64_t controller_ns = 0;
  std::uint64_t store_ns = 0;
};

inline controller_time controller_time_sum(const std::vector<device_counters>& counters) {
  controller_time sum;
  for (const auto& d : counters) {
    for (const auto& q : d.queue_pairs) {
      sum.commands += q.commands;
      sum.controller_ns += q.controller_ns;
      sum.store_ns += q.store_ns;
    }
  }
  return sum;
}

}  // namespace agio::bench
