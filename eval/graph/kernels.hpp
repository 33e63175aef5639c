#pragma once
// The graph kernels of AGILE §4.5 and BaM's evaluation (BFS, SpMV, connected components) as
// jobs that run as GPU kernels (launch_job_kernel) or on CPU threads (run_job). Each reads the
// edge arrays through a source's per-thread reader: native_source for arrays in device memory,
// cached_source for arrays in a store read through agio's cache, so the two variants are the
// same code. Vertex arrays (row offsets, levels, labels, x, y) are always in device memory. No
// application-level optimization, as in the paper: the differences measured are the data
// path's. Each source says whether its kernels keep a warp's lanes in step
// (for_each_vertex): lanes reading through the cache share accesses that way.
#include <cstdint>

#include "agio/cache/array_view.hpp"
#include "agio/portable.hpp"
#include "graph/reference.hpp"

namespace agio::bench::graph {

template <class T>
struct native_source {
  // Plain loads gain nothing from a warp's lanes in step (for_each_vertex), and a warp held to
  // its longest row each round ran native SpMV 1.1-1.4x slower (H100, runs of 2026-11-26
  // against 2026-11-23).
  static constexpr bool walks_in_step = false;
  const T* data;
  // `holding` as for cached readers: plain loads hold nothing.
  template <class... Holding>
  AGIO_HD T at(std::uint64_t i, Holding&...) const {
    return data[i];
  }
  AGIO_HD void release() const {}
  // Plain loads keep no state: the source is its own reader.
  AGIO_HD native_source reader() const { return *this; }
};

// Element i of an array stored from element `first` of device 0 on: at() reads one element
// through the array view (a pin per element), a thread's reader walks runs of elements with a
// pin per line (agio/cache/array_reader.hpp). A failed read gives T{}, which the result check
// catches (rt.check() names the cause).
template <class T, class Policy, class IO = io_handle>
struct cached_source {
  // Lanes in step share their cache accesses (for_each_vertex).
  static constexpr bool walks_in_step = true;
  cache::array_view<T, Policy, cache::no_lock_chain, cache::no_share_table, IO> view;
  std::uint64_t first;

  AGIO_HD T at(std::uint64_t i) const {
    // A failed read leaves T{}: the evaluation checks the runtime's error record after the run.
    T v{};
    (void)view.get(0, first + i, v);
    return v;
  }

  struct reader_type {
    cache::array_reader<T, Policy, cache::no_lock_chain, cache::no_share_table, IO> elements;
    std::uint64_t first;
    // `holding`: the thread's other readers, which let go of their lines if this read must
    // wait for its own (array_reader.hpp).
    template <class... Holding>
    AGIO_HD T at(std::uint64_t i, Holding&... holding) {
      T v{};
      (void)elements.get(first + i, v, holding.elements...);
      return v;
    }
    AGIO_HD void release() { elements.release(); }
  };
  AGIO_HD reader_type reader() const { return {view.reader(0), first}; }
};

// The edges of vertex `vertex` to walk: [first, end) of the CSR arrays.
struct edge_range {
  std::uint32_t vertex;
  std::uint64_t first, end;
  AGIO_HD std::uint64_t size() const { return end - first; }
};

// Calls walk(range_of(v)) for v = t, t + threads, ... below n. With `in_step`, the lanes of a
// warp walk in step: each round starts with the lanes still in step together, so lanes whose
// edges share a cache line reach the cache at once and one access serves them all (the array
// reader's warp coalescing); lanes left to drift apart over rows of different lengths reached
// the cache 1.2 to an access. A lane whose row is far longer than the round's others (more
// than 4x their mean, plus 64) leaves the step for the rest of the job, so that a Kronecker
// graph's hubs do not hold the other lanes back round after round. Lanes in step wait for
// the round's longest row, which costs plain loads more than it gains them (native_source
// walks free); docs/RESULTS.md (hit cost) has the figures. In step, `walk` must leave its
// readers holding no line: a lane waiting for the others with a line pinned can keep a set
// full while they wait for room in it (array_reader.hpp).
template <bool in_step, class RangeOf, class Walk>
AGIO_HD void for_each_vertex(std::uint32_t t, std::uint32_t threads, std::uint32_t n, RangeOf&& range_of, Walk&& walk) {
  namespace warp = portable::warp;
  if constexpr (!in_step) {
    for (std::uint32_t v = t; v < n; v += threads) walk(range_of(v));
  } else {
    // The lanes running the job: a prefix of the warp, with consecutive t (launch_job_kernel).
    warp::lane_group step = warp::active_lanes();
    const std::uint32_t rank = warp::rank(step);
    bool stepping = true;
    for (std::uint64_t first = t - rank; first < n; first += threads) {
      const std::uint64_t v = first + rank;
      const edge_range edges = v < n ? range_of(static_cast<std::uint32_t>(v)) : edge_range{0, 0, 0};
      if (stepping) {
        // The in-step lanes meet here (the ballot waits for all of them) and size up the round.
        constexpr std::uint64_t counted = 1u << 20;  // 32 such lengths still sum within 32 bits
        const std::uint32_t length = static_cast<std::uint32_t>(edges.size() < counted ? edges.size() : counted);
        const std::uint32_t busy = warp::count(warp::ballot(step, length != 0));
        const std::uint32_t total = warp::sum(step, length);
        const bool hub = busy != 0 && length > 4 * (total / busy) + 64;
        const std::uint32_t staying = warp::ballot(step, !hub);
        if (hub) stepping = false;
        step.mask = staying;
      }
      if (v < n) walk(edges);
    }
  }
}

// Marks the unvisited targets of edges [first, end) as at level + 1 and says whether it marked
// any. Concurrent marks of one vertex all write the same value. `col` is a source's reader.
template <class Reader>
AGIO_HD bool bfs_visit(Reader& col, std::uint64_t first, std::uint64_t end, std::uint32_t* levels,
                       std::uint32_t level) {
  using portable::scope;
  bool marked = false;
  for (std::uint64_t e = first; e < end; ++e) {
    const std::uint32_t u = col.at(e);
    if (portable::load<scope::device>(levels[u], portable::relaxed) == unvisited) {
      portable::store<scope::device>(levels[u], level + 1, portable::relaxed);
      marked = true;
    }
  }
  return marked;
}

// One level of a level-synchronous BFS: vertices at `level` mark unvisited neighbours. The
// lanes of a warp walk their vertices free unless `InStep` (for_each_vertex).
template <class Cols, bool InStep = false>
struct bfs_job {
  Cols col;
  const std::uint64_t* row;
  std::uint32_t* levels;
  std::uint32_t* changed;
  std::uint32_t n;
  std::uint32_t level;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    using portable::scope;
    auto cols = col.reader();
    // Free in the graphs benchmark, native or cached: in step, the Kronecker graph's BFS through
    // a preloaded cache took 83-88 ms a run instead of 65 (H100, runs of 2026-11-26 against
    // 2026-11-23). In step above a host tier (agio-eval graph-tiers, --bfs-lanes), where lanes
    // in step copy a miss together and a lane walking free copies alone.
    for_each_vertex<InStep>(
        t, threads, n,
        [&](std::uint32_t v) {
          // Only the frontier's edges are walked.
          if (portable::load<scope::device>(levels[v], portable::relaxed) != level) return edge_range{v, 0, 0};
          return edge_range{v, row[v], row[v + 1]};
        },
        [&](const edge_range& e) {
          if (e.size() != 0 && bfs_visit(cols, e.first, e.end, levels, level))
            portable::store<scope::device>(*changed, 1u, portable::relaxed);
          // In step, a lane meets the others holding no line; the next vertex's edges lie
          // `threads` vertices on, in other lines (for_each_vertex).
          if constexpr (InStep) cols.release();
        });
  }
};

// A frontier vertex whose out-edges a CPU pipeline staged in device memory, from `first` on.
struct staged_vertex {
  std::uint64_t first;
  std::uint32_t vertex;
};

// One level of BFS over a list of frontier vertices with their edges staged (the host found
// the frontier, so there is no "changed" flag).
struct bfs_staged_job {
  const std::uint32_t* edges;
  const staged_vertex* vertices;
  std::uint32_t count;
  const std::uint64_t* row;
  std::uint32_t* levels;
  std::uint32_t level;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    native_source<std::uint32_t> staged{edges};
    for (std::uint32_t i = t; i < count; i += threads) {
      const staged_vertex s = vertices[i];
      const std::uint64_t degree = row[s.vertex + 1] - row[s.vertex];
      bfs_visit(staged, s.first, s.first + degree, levels, level);
    }
  }
};

// Scalar CSR SpMV, one row per thread: y = A x with x in device memory.
template <class Cols, class Vals>
struct spmv_job {
  Cols col;
  Vals val;
  const std::uint64_t* row;
  const float* x;
  float* y;
  std::uint32_t n;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    auto cols = col.reader();
    auto vals = val.reader();
    for_each_vertex<Cols::walks_in_step>(
        t, threads, n,
        [&](std::uint32_t r) {
          return edge_range{r, row[r], row[r + 1]};
        },
        [&](const edge_range& r) {
          float acc = 0;
          for (std::uint64_t e = r.first; e < r.end; ++e) {
            const float v = vals.at(e, cols);
            acc += v * x[cols.at(e, vals)];
          }
          y[r.vertex] = acc;
          // The next row lies `threads` rows on, in other lines (for_each_vertex).
          vals.release();
          cols.release();
        });
  }
};

// One sweep of label propagation for connected components, edges taken as undirected: each
// edge (v, u) lowers the larger of its ends' labels to the smaller. Labels start as vertex ids
// and only fall, so once a sweep lowers nothing every edge joins equal labels and each
// component carries its smallest id (cc_reference's labels). Lowering both ends gives the weak
// components of a directed graph from its out-edges alone.
template <class Cols>
struct cc_job {
  Cols col;
  const std::uint64_t* row;
  std::uint32_t* labels;
  std::uint32_t* changed;
  std::uint32_t n;

  // Atomic minimum. Lock-free: an exchange fails only because another thread lowered the label,
  // which a label can do only finitely often.
  AGIO_HD static bool lower(std::uint32_t& label, std::uint32_t to) {
    std::uint32_t seen = portable::load<portable::scope::device>(label, portable::relaxed);
    while (to < seen) {
      if (portable::compare_exchange<portable::scope::device>(label, seen, to, portable::relaxed)) return true;
    }
    return false;
  }

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    using portable::scope;
    auto cols = col.reader();
    for_each_vertex<Cols::walks_in_step>(
        t, threads, n,
        [&](std::uint32_t v) {
          return edge_range{v, row[v], row[v + 1]};
        },
        [&](const edge_range& r) {
          const std::uint32_t v = r.vertex;
          bool lowered = false;
          for (std::uint64_t e = r.first; e < r.end; ++e) {
            const std::uint32_t u = cols.at(e);
            const std::uint32_t mine = portable::load<scope::device>(labels[v], portable::relaxed);
            const std::uint32_t theirs = portable::load<scope::device>(labels[u], portable::relaxed);
            if (theirs < mine) lowered = lower(labels[v], theirs) || lowered;
            if (mine < theirs) lowered = lower(labels[u], mine) || lowered;
          }
          if (lowered) portable::store<scope::device>(*changed, 1u, portable::relaxed);
          cols.release();  // the next row lies `threads` rows on, in another line (for_each_vertex)
        });
  }
};

}  // namespace agio::bench::graph
