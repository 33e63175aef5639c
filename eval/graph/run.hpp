#pragma once
// Running the iterative graph kernels to the end: BFS level by level from a source, connected
// components sweep by sweep until nothing changes. Each step is one kernel (GPU) or one round
// of CPU threads; the time is the steps' kernel time summed (time_job), without the host's
// reading of the "changed" flag between steps.
#include <cstdint>
#include <numeric>
#include <vector>

#include "graph/kernels.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench::graph {

// A graph's vertex-side arrays in device memory (the edge arrays come from a source).
struct device_graph {
  const std::uint64_t* row;
  std::uint32_t n;
  std::uint32_t* state;    // BFS levels or CC labels: the result
  std::uint32_t* changed;  // one word
};

struct kernel_run {
  double seconds = 0;
  std::uint32_t steps = 0;  // BFS levels or CC sweeps, the last one changing nothing
};

namespace detail_run {
// Runs make_job(step) until a step changes nothing.
template <class MakeJob>
kernel_run until_unchanged(runtime& rt, std::uint32_t threads, const device_graph& d, MakeJob&& make_job) {
  kernel_run r;
  for (;; ++r.steps) {
    const std::uint32_t zero = 0;
    rt.copy_to_device(d.changed, &zero, sizeof zero);
    r.seconds += time_job(rt, threads, make_job(r.steps));
    if (to_host(rt, d.changed, 1)[0] == 0) break;
  }
  ++r.steps;
  return r;
}
}  // namespace detail_run

// `InStep`: the lanes of a warp walk their vertices in step (bfs_job).
template <bool InStep = false, class Cols>
kernel_run run_bfs(runtime& rt, std::uint32_t threads, const device_graph& d, Cols col, std::uint32_t source) {
  std::vector<std::uint32_t> start(d.n, unvisited);
  start[source] = 0;
  rt.copy_to_device(d.state, start.data(), d.n * sizeof(std::uint32_t));
  return detail_run::until_unchanged(rt, threads, d, [&](std::uint32_t level) {
    return bfs_job<Cols, InStep>{col, d.row, d.state, d.changed, d.n, level};
  });
}

template <class Cols>
kernel_run run_cc(runtime& rt, std::uint32_t threads, const device_graph& d, Cols col) {
  std::vector<std::uint32_t> start(d.n);
  std::iota(start.begin(), start.end(), 0u);
  rt.copy_to_device(d.state, start.data(), d.n * sizeof(std::uint32_t));
  return detail_run::until_unchanged(rt, threads, d, [&](std::uint32_t) {
    return cc_job<Cols>{col, d.row, d.state, d.changed, d.n};
  });
}

}  // namespace agio::bench::graph
