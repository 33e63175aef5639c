// graph-tiers: the graph kernels (BFS, SpMV, CC) with their edge arrays four times the GPU
// cache and smaller than the host tier, the edges read from (one row each):
//   hbm:                the edge arrays in GPU memory (LMB's Ideal);
//   three_tiers:        a GPU cache of a quarter of the edges above a host tier that holds them
//                       all (preloaded), above the store: one emulated SSD (`ram:` with the
//                       agile-ssd profile) unless --store names another (`file:` for real I/O);
//   two_tiers:          the same GPU cache straight above that store;
//   ram_store:          the same GPU cache above a `ram:` store without a profile: the edges in
//                       host memory behind agio's software controller;
//   gpu_cache_holds_all: a GPU cache large enough for every edge, preloaded: every access a hit,
//                       so no tiering below the GPU cache can run faster than this row (a bound
//                       the other rows are judged against: the cache's hit path alone);
//   managed_host:       CUDA managed memory, preferred location host, accessed by the GPU: the
//                       kernels read the pages over PCIe where they are;
//   managed_prefetched: the same, prefetched to the GPU before each run, the move timed;
//   managed_prefetched_capped: the same with the GPU memory left to managed memory held to the
//                       GPU cache's size, so that, as for the cache, the edges are four times
//                       what GPU memory holds of them.
// The cached rows run once untimed before the timed runs, so each starts from the GPU cache its
// warm-up left. BFS's lanes walk in step in every cached row, so that the lanes of a warp copy
// a miss together (on the H100 the uniform graph's BFS over three tiers took 49 ms a run in
// step against 85 walking free), or free with --bfs-lanes free. Every run is checked against the host
// reference.
#include "graph/tiers.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "graph/cases.hpp"
#include "harness/bench_common.hpp"
#include "harness/progress.hpp"

namespace agio::bench {
namespace {

using namespace graph;
using policy = cache::clock;
using plain_cache = software_cache<policy>;  // a GPU cache over the store, or the host tier
using cache_above = software_cache<policy, cache::no_lock_chain, cache::no_share_table,
                                   cache::tiered_io<policy, cache::admit_always, io_handle>>;
constexpr std::uint32_t ways = 8;

struct settings {
  backend want = backend::automatic;
  std::uint32_t scale = 0, edge_factor = 0;
  std::vector<std::string> graph_names;
  std::vector<kernel> kernels;
  double cache_share = 0.25;  // the GPU cache's size, a share of the edges a kernel reads
  bool bfs_in_step = true;    // the cached rows' BFS keeps a warp's lanes in step (bfs_job)
  int reps = 3;
  std::uint64_t seed = 0;
  std::string store;  // below the tiers; empty: one emulated SSD
  std::string out_path;
};

struct row {
  std::string graph, mode;
  kernel k = kernel::bfs;
  step_result step{};
  double tier_served = -1;          // the share of the GPU cache's misses the host tier served
  double store_reads_per_run = -1;  // commands sent to the store, per timed run
  std::uint64_t cache_bytes = 0, data_bytes = 0;
  std::uint64_t managed_gpu_bytes = 0;  // the GPU memory managed memory was held to (0: all)
};

struct context {
  const settings& s;
  std::uint32_t threads;
  progress& bar;
  std::vector<row>& rows;
};

// Whole sets of lines, at least one per way.
std::uint64_t lines_for(double blocks) {
  const auto lines = static_cast<std::uint64_t>(blocks);
  return std::max<std::uint64_t>(ways, (lines + ways - 1) / ways * ways);
}

// A cache of lines_for(blocks) lines.
cache_options options_holding(double blocks) { return {lines_for(blocks) * block_bytes, block_bytes, ways}; }

// The GPU cache of the tiered modes: cache_share of `blocks`.
cache_options gpu_cache_options(const settings& s, std::uint64_t blocks) {
  return options_holding(static_cast<double>(blocks) * s.cache_share);
}

// A row through `cache`: one untimed run, then the timed ones, with the GPU cache's hit rate
// and the store's commands over the timed runs. `timed` runs between the two (a tier resets its
// counters there).
template <class Cache>
row cached_row(
    const context& x, runtime& rt, const graph_case& c, const vertex_arrays& v, kernel k, Cache& cache,
    const std::string& mode, const std::function<void()>& timed = [] {}) {
  row r{c.name, mode, k};
  const auto run = [&] {
    return x.s.bfs_in_step ? cached_run<true>(rt, x.threads, c, v, k, cache)
                           : cached_run<false>(rt, x.threads, c, v, k, cache);
  };
  const bool warm_ok = run().ok;
  cache.reset_counters();
  timed();
  const std::uint64_t before = store_commands(rt);
  r.step = repeat(x.s.reps, false, run);
  r.step.ok = r.step.ok && warm_ok;
  r.step.hit_rate = cache.counters().hit_rate();
  r.store_reads_per_run = static_cast<double>(store_commands(rt) - before) / x.s.reps;
  r.data_bytes = c.blocks_for(k) * block_bytes;
  r.cache_bytes = cache.line_count() * std::uint64_t{block_bytes};
  rt.check();
  x.bar.step(c.name + " " + name_of(k) + " " + mode);
  return r;
}

// Runs body(case, vertex arrays, kernel) for every case and kernel on `rt`.
void each_kernel(runtime& rt, const context& x, const std::vector<graph_case>& cases,
                 const std::function<void(const graph_case&, const vertex_arrays&, kernel)>& body) {
  for (const graph_case& c : cases) {
    const vertex_arrays v(rt, c);
    for (const kernel k : x.s.kernels) body(c, v, k);
  }
}

// A runtime over `uri` with every case's edge arrays written to it.
std::unique_ptr<runtime> runtime_with_edges(const settings& s, const std::string& uri,
                                            const std::vector<graph_case>& cases) {
  auto rt = start_runtime(s.want, uri);
  std::fprintf(stderr, "\nwriting the edges to %s...\n", uri.c_str());
  write_edges(*rt, cases);
  return rt;
}

// The edges in GPU memory and in managed memory, on `rt`, a runtime without a completion service
// (so that no service kernel shares the GPU with them).
void run_uncached(const context& x, const std::vector<graph_case>& cases, std::unique_ptr<runtime> rt) {
  each_kernel(*rt, x, cases, [&](const graph_case& c, const vertex_arrays& v, kernel k) {
    row r{c.name, "hbm", k};
    r.step = native_step(*rt, x.threads, x.s.reps, c, v, k);
    r.data_bytes = c.blocks_for(k) * block_bytes;
    x.rows.push_back(r);
    x.bar.step(c.name + " " + name_of(k) + " hbm");
#if defined(__CUDACC__)
    if (!on_gpu(*rt)) return;
    // Prefetched as is, the edges fit the GPU's memory; held to the GPU cache's size, managed
    // memory has the GPU memory the cached modes have.
    const std::size_t cache_bytes = gpu_cache_options(x.s, c.blocks_for(k)).bytes;
    const struct {
      const char* mode;
      managed_placement where;
      std::size_t gpu_bytes_cap;
    } managed_modes[] = {{"managed_host", managed_placement::host, 0},
                         {"managed_prefetched", managed_placement::host_prefetched, 0},
                         {"managed_prefetched_capped", managed_placement::host_prefetched, cache_bytes}};
    for (const auto& m : managed_modes) {
      row managed{c.name, m.mode, k};
      managed.step = managed_step(*rt, x.threads, x.s.reps, c, v, k, m.where, m.gpu_bytes_cap);
      managed.data_bytes = r.data_bytes;
      managed.managed_gpu_bytes = m.gpu_bytes_cap;
      x.rows.push_back(managed);
      x.bar.step(c.name + " " + name_of(k) + " " + m.mode);
    }
#endif
  });
  rt->check();
  rt->stop();
}

// Three tiers and two over the store at `uri`.
void run_over_store(const context& x, const std::vector<graph_case>& cases, const std::string& uri) {
  auto rt = runtime_with_edges(x.s, uri, cases);
  each_kernel(*rt, x, cases, [&](const graph_case& c, const vertex_arrays& v, kernel k) {
    const std::uint64_t blocks = c.blocks_for(k);
    {
      cache_options in_host = options_holding(static_cast<double>(blocks));
      in_host.memory = cache_memory::host;
      plain_cache tier(*rt, in_host);  // consecutive blocks in consecutive sets: it holds them all
      tier.preload(0, c.col_block, blocks);
      cache_above above(*rt, tier, gpu_cache_options(x.s, blocks));
      row r = cached_row(x, *rt, c, v, k, above, "three_tiers", [&] { tier.reset_counters(); });
      r.tier_served = tier.counters().share_served(above.counters().misses);
      x.rows.push_back(r);
    }
    plain_cache alone(*rt, gpu_cache_options(x.s, blocks));
    x.rows.push_back(cached_row(x, *rt, c, v, k, alone, "two_tiers"));
  });
  rt->stop();
}

// The GPU cache above a `ram:` store at host memory speed, and a GPU cache holding every edge.
void run_over_ram(const context& x, const std::vector<graph_case>& cases, const std::string& uri) {
  auto rt = runtime_with_edges(x.s, uri, cases);
  each_kernel(*rt, x, cases, [&](const graph_case& c, const vertex_arrays& v, kernel k) {
    const std::uint64_t blocks = c.blocks_for(k);
    {
      plain_cache alone(*rt, gpu_cache_options(x.s, blocks));
      x.rows.push_back(cached_row(x, *rt, c, v, k, alone, "ram_store"));
    }
    plain_cache holding_all(*rt, options_holding(static_cast<double>(blocks)));
    holding_all.preload(0, c.col_block, blocks);  // consecutive blocks in consecutive sets: all fit
    x.rows.push_back(cached_row(x, *rt, c, v, k, holding_all, "gpu_cache_holds_all"));
  });
  rt->stop();
}

settings parse(const options& opt) {
  settings s;
  s.want = backend_option(opt);
  const bool quick = opt.flag("quick");
  s.scale = opt.whole<std::uint32_t>("scale", s.want == backend::cpu ? 10 : quick ? 18 : 22);
  s.edge_factor = opt.whole<std::uint32_t>("edge-factor", s.want == backend::cpu ? 8 : 16);
  s.graph_names = opt.list("graphs", "uniform,kron");
  const auto kernel_names = opt.list("kernels", "bfs,spmv,cc");
  s.cache_share = opt.number("cache-share", 0.25);
  const std::string bfs_lanes = opt.get("bfs-lanes", "in-step");
  s.reps = static_cast<int>(opt.number("reps", 3));
  s.seed = opt.whole<std::uint64_t>("seed", 27491095);  // GAP's default seed, as the graphs benchmark
  s.store = opt.get("store", "");
  s.out_path = opt.get("out", "results/graph_tiers.json");
  opt.reject_unknown();
  for (const auto& k : kernel_names) s.kernels.push_back(kernel_named(k));
  if (bfs_lanes != "free" && bfs_lanes != "in-step")
    throw std::invalid_argument("--bfs-lanes: free or in-step, not '" + bfs_lanes + "'");
  s.bfs_in_step = bfs_lanes == "in-step";
  if (s.reps < 1) throw std::invalid_argument("--reps must be at least 1");
  if (!(s.cache_share > 0 && s.cache_share < 1)) throw std::invalid_argument("--cache-share must be in (0, 1)");
  return s;
}

std::string ms_or_dash(const step_result& s) {
  if (!s.measured) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.3f", s.seconds * 1e3);
  return text;
}
std::string share_or_dash(double v) {
  if (v < 0) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

const row* find(const std::vector<row>& rows, const std::string& graph, kernel k, const char* mode) {
  for (const row& r : rows) {
    if (r.graph == graph && r.k == k && r.mode == mode && r.step.measured) return &r;
  }
  return nullptr;
}

// other's time over row's, as "1.23x"; "-" where either was not measured.
std::string speedup(const row* r, const row* other) {
  if (r == nullptr || other == nullptr) return "-";
  char text[32];
  std::snprintf(text, sizeof text, "%.2fx", other->step.seconds / r->step.seconds);
  return text;
}

// The rows, and per graph and kernel the ratios the host tier is judged by.
bool print(const std::vector<graph_case>& cases, const settings& s, const std::vector<row>& rows) {
  bool all_ok = true;
  for (const graph_case& c : cases) {
    std::printf("\n%s: %s\n", c.name.c_str(), c.description.c_str());
    std::printf("%-6s %-19s %11s %9s %10s %13s %6s %s\n", "kernel", "mode", "time_ms", "gpu_hits", "tier_share",
                "store_cmds/run", "steps", "check");
    for (const kernel k : s.kernels) {
      for (const row& r : rows) {
        if (r.graph != c.name || r.k != k) continue;
        all_ok = all_ok && r.step.ok;
        std::printf(
            "%-6s %-19s %11s %9s %10s %13s %6u %s\n", name_of(k), r.mode.c_str(), ms_or_dash(r.step).c_str(),
            share_or_dash(r.step.hit_rate).c_str(), share_or_dash(r.tier_served).c_str(),
            r.store_reads_per_run >= 0 ? std::to_string(static_cast<long long>(r.store_reads_per_run)).c_str() : "-",
            r.step.steps,
            !r.step.measured ? "skipped"
            : r.step.ok      ? "ok"
                             : "FAILED");
      }
      // How much faster `mode` ran than `other`, as text.
      const auto faster = [&](const char* mode, const char* other) {
        return speedup(find(rows, c.name, k, mode), find(rows, c.name, k, other));
      };
      const auto against = [&](const char* other) { return faster("three_tiers", other); };
      std::printf(
          "%-6s three tiers faster than: two tiers %s (target >= 2x), managed host %s, managed prefetched %s, "
          "the same held to the GPU cache's memory %s (target >= 1.5x), ram store %s, hbm %s\n",
          name_of(k), against("two_tiers").c_str(), against("managed_host").c_str(),
          against("managed_prefetched").c_str(), against("managed_prefetched_capped").c_str(),
          against("ram_store").c_str(), against("hbm").c_str());
      // The most any tiering below this GPU cache could reach: a cache that never misses.
      const auto bound_against = [&](const char* other) { return faster("gpu_cache_holds_all", other); };
      std::printf(
          "%-6s a GPU cache holding every edge (the bound) faster than: managed host %s, managed prefetched "
          "%s, the same held to the GPU cache's memory %s, hbm %s\n",
          name_of(k), bound_against("managed_host").c_str(), bound_against("managed_prefetched").c_str(),
          bound_against("managed_prefetched_capped").c_str(), bound_against("hbm").c_str());
    }
  }
  return all_ok;
}

}  // namespace

int graph_tiers_main(int argc, char** argv, int first) {
  const settings s = parse(options(argc, argv, first));
  std::vector<graph_case> cases;
  for (const auto& name : s.graph_names) cases.push_back(generated_case(name, s.scale, s.edge_factor, s.seed));
  const std::uint64_t blocks = lay_out(cases);
  const std::string ram = ram_uri(blocks * block_bytes);
  const std::string below = s.store.empty() ? ram + "&profile=agile-ssd" : s.store;

  runtime_options plain = bench_runtime_options(s.want);
  plain.completion = completion_mode::waiters;
  auto uncached = start_runtime(plain, ram_uri(1));
  const bool gpu = on_gpu(*uncached);
  const std::string device = uncached->describe();
  const std::uint32_t threads = gpu ? 1024 * 256 : 4;
  const std::size_t modes = 1 + (gpu ? 3 : 0) + 4;
  progress bar(cases.size() * s.kernels.size() * modes);
  std::vector<row> rows;
  const context x{s, threads, bar, rows};
  run_uncached(x, cases, std::move(uncached));
  run_over_store(x, cases, below);
  run_over_ram(x, cases, ram);

  const bool all_ok = print(cases, s, rows);
  result_document doc;
  for (const row& r : rows) {
    json_object o;
    o.set("graph", r.graph).set("kernel", std::string(name_of(r.k))).set("mode", r.mode);
    o.set("measured", r.step.measured).set("verified", r.step.ok);
    if (r.step.measured) o.set("seconds", r.step.seconds).set("steps", std::int64_t{r.step.steps});
    o.set("data_bytes", static_cast<std::int64_t>(r.data_bytes));
    if (r.cache_bytes != 0) o.set("gpu_cache_bytes", static_cast<std::int64_t>(r.cache_bytes));
    if (r.managed_gpu_bytes != 0) o.set("managed_gpu_memory_bytes", static_cast<std::int64_t>(r.managed_gpu_bytes));
    if (r.step.hit_rate >= 0) o.set("gpu_cache_hit_rate", r.step.hit_rate);
    if (r.tier_served >= 0) o.set("host_tier_share_of_misses", r.tier_served);
    if (r.store_reads_per_run >= 0) o.set("store_commands_per_run", r.store_reads_per_run);
    doc.points.push_back(o);
  }
  doc.set_header("graph_tiers", device, argc, argv);
  doc.config.set("store_below_tiers", below).set("store_below_tiers_kind", store_kind(below));
  doc.config.set("ram_store", ram).set("ram_store_kind", store_kind(ram));
  doc.config.set("policy", std::string("clock")).set("ways", std::int64_t{ways});
  doc.config.set("line_bytes", std::int64_t{block_bytes}).set("gpu_cache_share_of_edges", s.cache_share);
  doc.config.set("bfs_lanes", std::string(s.bfs_in_step ? "in-step" : "free"));
  doc.config.set("host_tier", std::string("holds every edge block (preloaded), admits always"));
  for (const graph_case& c : cases) doc.config.set(c.name, c.description);
  doc.config.set("scale", std::int64_t{s.scale}).set("edge_factor", std::int64_t{s.edge_factor});
  doc.config.set("seed", static_cast<std::int64_t>(s.seed)).set("threads", std::int64_t{threads});
  doc.config.set("reps", std::int64_t{s.reps})
      .set("timing", std::string("median of reps; BFS and CC: kernel time summed over steps; cached modes after one "
                                 "untimed run; managed_prefetched(_capped): the prefetch's time added"));
  doc.save(s.out_path);
  std::printf("results: %s\n", s.out_path.c_str());
  if (!all_ok) std::fprintf(stderr, "graph-tiers: some results did not match the host reference\n");
  return all_ok ? 0 : 1;
}

}  // namespace agio::bench
