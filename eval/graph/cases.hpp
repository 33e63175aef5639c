#pragma once
// The graph benchmarks' cases and runs, shared by the Figure 11 benchmark (graphs.cpp) and the
// host tier's graph experiment (tiers.cpp): a generated or read graph with the references its
// runs are checked against and the place of its edge arrays in a store, its vertex arrays in
// device memory, one run of a kernel over any edge source, and the median of repeated runs.
#include <cstdint>
#include <string>
#include <vector>

#include "agio/runtime/software_cache.hpp"
#include "graph/csr.hpp"
#include "graph/kernels.hpp"
#include "graph/reference.hpp"
#include "graph/run.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench::graph {

enum class kernel { bfs, spmv, cc };

kernel kernel_named(const std::string& name);
const char* name_of(kernel k);

// --- Data -----------------------------------------------------------------------------------

// A graph, what its runs are checked against, and where its edge arrays lie in the store.
struct graph_case {
  std::string name, description;
  csr g;
  std::uint32_t source = 0;
  std::vector<float> x;
  std::vector<std::uint32_t> levels, labels;
  spmv_expected spmv;
  std::uint64_t col_block = 0, col_blocks = 0, val_block = 0, val_blocks = 0;
  std::uint64_t max_degree = 0;
  // Blocks a kernel reads: the columns, and for SpMV the values next to them.
  std::uint64_t blocks_for(kernel k) const { return col_blocks + (k == kernel::spmv ? val_blocks : 0); }
};

// A case of `g` (its weights drawn from `seed` if it has none) with its references computed.
graph_case make_case(std::string name, const std::string& kind, csr g, std::uint64_t seed);

// GAP's graphs (its -g and -u): undirected, without self-loops or repeated edges. `name` is kron
// or uniform.
graph_case generated_case(const std::string& name, std::uint32_t scale, std::uint32_t edge_factor, std::uint64_t seed);

// Places the cases' edge arrays one after another (each starts on a block; columns and values
// adjacent so one preload covers SpMV's data) and returns the blocks used.
std::uint64_t lay_out(std::vector<graph_case>& cases);

// Writes every case's edge arrays to device 0 of `rt` where lay_out placed them.
void write_edges(runtime& rt, const std::vector<graph_case>& cases);

// --- Running --------------------------------------------------------------------------------

// A case's vertex arrays in one runtime's device memory.
class vertex_arrays {
 public:
  vertex_arrays(runtime& rt, const graph_case& c)
      : rt_(rt),
        row_(to_device(rt, c.g.row)),
        x_(to_device(rt, c.x)),
        y_(static_cast<float*>(rt.allocate_device(c.g.n * sizeof(float)))),
        d_{row_, c.g.n, static_cast<std::uint32_t*>(rt.allocate_device(c.g.n * sizeof(std::uint32_t))),
           static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t)))} {}
  ~vertex_arrays() {
    for (void* p : {static_cast<void*>(row_), static_cast<void*>(x_), static_cast<void*>(y_),
                    static_cast<void*>(d_.state), static_cast<void*>(d_.changed)}) {
      rt_.free(p);
    }
  }
  vertex_arrays(const vertex_arrays&) = delete;
  vertex_arrays& operator=(const vertex_arrays&) = delete;
  const device_graph& graph() const { return d_; }
  const float* x() const { return x_; }
  float* y() const { return y_; }

 private:
  runtime& rt_;
  std::uint64_t* row_;
  float* x_;
  float* y_;
  device_graph d_;
};

struct one_run {
  double seconds = 0;
  std::uint32_t steps = 0;
  bool ok = false;
};

// Runs kernel `k` once over the edge sources and checks the result; BFS's lanes walk in step
// with `BfsInStep` (bfs_job).
template <bool BfsInStep = false, class Cols, class Vals>
one_run run_kernel(runtime& rt, std::uint32_t threads, const graph_case& c, const vertex_arrays& v, kernel k, Cols cols,
                   Vals vals) {
  one_run r;
  if (k == kernel::bfs) {
    const kernel_run b = run_bfs<BfsInStep>(rt, threads, v.graph(), cols, c.source);
    r = {b.seconds, b.steps, to_host(rt, v.graph().state, c.g.n) == c.levels};
  } else if (k == kernel::cc) {
    const kernel_run b = run_cc(rt, threads, v.graph(), cols);
    r = {b.seconds, b.steps, to_host(rt, v.graph().state, c.g.n) == c.labels};
  } else {
    r.seconds = time_job(rt, threads, spmv_job<Cols, Vals>{cols, vals, v.graph().row, v.x(), v.y(), c.g.n});
    r.steps = 1;
    r.ok = spmv_matches(c.spmv, to_host(rt, v.y(), c.g.n));
  }
  return r;
}

// A run over the case's edge arrays read through `cache` (from device 0 of its runtime). The
// kernels carry only the code of the cache's I/O type: its completion mode's retirement, and a
// host tier's where there is one.
template <bool BfsInStep = false, class Cache>
one_run cached_run(runtime& rt, std::uint32_t threads, const graph_case& c, const vertex_arrays& v, kernel k,
                   const Cache& cache) {
  using handle = typename Cache::handle;
  using policy = decltype(handle::policy);
  using io_type = typename handle::io_type;
  const cached_source<std::uint32_t, policy, io_type> cols{cache.template array<std::uint32_t>(),
                                                           c.col_block * (block_bytes / sizeof(std::uint32_t))};
  const cached_source<float, policy, io_type> vals{cache.template array<float>(),
                                                   c.val_block * (block_bytes / sizeof(float))};
  return run_kernel<BfsInStep>(rt, threads, c, v, k, cols, vals);
}

// The median of a step's repetitions, whether all matched the reference, and the cache's hit
// rate over them (-1 without a cache).
struct step_result {
  bool measured = false;
  double seconds = 0;
  double seconds_per_step = 0;  // median over the runs of seconds / steps
  std::uint32_t steps = 0;      // of the last run
  bool ok = true;
  double hit_rate = -1;
  // Lanes served per cache access: an access made by one lane for the lanes of its warp that
  // want the same line serves them all (cache_counters::coalesced_in_warp). How well a kernel's
  // warps stay together at their accesses decides how many atomics its hits cost.
  double lanes_per_access = -1;
};

// Over all of a cache's accesses since its counters were reset.
double lanes_per_access(const cache_counters& n);

// With `warm_up`, one run first that is checked but not timed, so that one-time costs (first
// touches of fresh allocations, cold TLBs and L2) do not land in a timed run; a median of two
// or three runs would keep them.
template <class Once>
step_result repeat(int reps, bool warm_up, Once&& once) {
  step_result s;
  s.measured = true;
  if (warm_up) s.ok = once().ok;
  std::vector<double> times, per_step;
  for (int i = 0; i < reps; ++i) {
    const one_run r = once();
    times.push_back(r.seconds);
    per_step.push_back(r.steps != 0 ? r.seconds / r.steps : 0);
    s.steps = r.steps;
    s.ok = s.ok && r.ok;
  }
  s.seconds = median(times);
  s.seconds_per_step = median(per_step);
  return s;
}

// Kernel `k` with the case's edge arrays in device memory, plain loads (native): `reps` runs
// after an untimed one.
step_result native_step(runtime& rt, std::uint32_t threads, int reps, const graph_case& c, const vertex_arrays& v,
                        kernel k);

#if defined(__CUDACC__)
// Where the edge arrays' CUDA managed (unified) memory lives when a kernel reads it.
enum class managed_placement {
  // No advice; written from the host before each run, so that the kernel faults every page it
  // touches over to the GPU.
  migrate,
  // Preferred location host, accessed by the GPU: written from the host once, the pages stay
  // there and the kernel reads them over PCIe (data larger than GPU memory).
  host,
  // The same, moved back to the host before each run (untimed) and prefetched to the GPU
  // (cudaMemPrefetchAsync) in the run, the move timed with the kernel.
  host_prefetched,
};
const char* name_of(managed_placement where);

// Kernel `k` over managed copies of the case's edge arrays, `reps` runs. With
// `gpu_bytes_cap`, the GPU memory left to managed memory is held to that many bytes (GPU memory
// beyond it is allocated and left unused while the step runs), as a cache of that size would
// have: arrays moved to the GPU then evict one another's pages. Without it, not measured (and
// says so) where the placement moves the arrays to the GPU and they do not fit there.
step_result managed_step(runtime& rt, std::uint32_t threads, int reps, const graph_case& c, const vertex_arrays& v,
                         kernel k, managed_placement where, std::size_t gpu_bytes_cap = 0);
#endif

}  // namespace agio::bench::graph
