// cache_overhead (AGILE §4.5): vector mean, BFS and SpMV, each measured three ways:
//   native: the data in HBM, plain loads;
//   cache:  the same kernel reading through agio's cache, everything preloaded (the cache holds
//           all of it), kernel time only: the cost of the cache API;
//   cold:   a fresh, empty cache: every line comes from storage: the cost of the I/O path.
// Warp runs (BaM's Figure 6) read the same bytes as 8-byte elements, each warp runs of 1024
// contiguous ones, through the array view and through array readers, in agio's I/O model and
// in the BaM-style one (on a runtime of its own).
// Vector mean reads element by element through the array view (a pin per element; its
// threads' elements lie a grid apart), again in a kernel capped at 64 registers per thread,
// and in a whole-line variant (warps pin groups of 4 KiB
// lines, lanes read them coalesced); BFS and SpMV walk their edge lists with array readers
// (a pin per line).
// Every result is checked against a host reference.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <optional>
#include <random>

#include "agio/cache/policies/clock.hpp"
#include "agio/portable.hpp"
#include "agio/runtime/software_cache.hpp"
#include "baselines/io_model.hpp"
#include "cache/cache_bench.hpp"
#include "cache/whole_cache.hpp"
#include "graph/generate.hpp"
#include "graph/kernels.hpp"
#include "graph/run.hpp"
#include "harness/bench_common.hpp"
#include "harness/progress.hpp"

namespace agio::bench {
namespace {

using namespace graph;
using policy = cache::clock;
using cache_type = software_cache<policy>;

// --- Kernels --------------------------------------------------------------------------------

template <class Source>
struct mean_job {
  Source x;
  std::uint64_t n;
  double* partial;  // one per thread, added up on the host
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    double s = 0;
    for (std::uint64_t i = t; i < n; i += threads) s += x.at(i);
    partial[t] = s;
  }
};

// The same through the array view in a kernel capped at 64 registers per thread (launch.hpp):
// the cache's miss path sets the kernel's register peak, and under the cap it spills there
// while the hit path runs more warps per SM.
struct capped_mean_job : mean_job<cached_source<float, policy>> {
  static constexpr unsigned max_registers = 64;
};

// Warp w sums lines w, w + warps, ...: one pin per line, lanes read consecutive floats. The
// cache's per-line cost is a chain of dependent memory accesses (find the tag, pin, check the
// tag again); one lane per line runs those chains side by side for a group of lines, so a warp
// pays one chain per group instead of one per line. `threads` must be a multiple of 32 on the
// GPU so every warp is whole.
struct mean_lines_job {
  cache::cache_handle<policy> cache;
  std::uint64_t first_block;
  std::uint64_t n;
  double* partial;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    constexpr std::uint64_t per_line = block_bytes / sizeof(float);
    const std::uint32_t lanes = warp_lanes();
    const std::uint32_t lane = t % lanes;
    const std::uint32_t group = lanes == 1 ? 1 : 8;  // lines pinned together by one warp
    const std::uint64_t lines = (n + per_line - 1) / per_line;
    const std::uint64_t warps = threads / lanes;
    double s = 0;
    for (std::uint64_t base = t / lanes; base < lines; base += warps * group) {
      // Lane j < group pins line base + j * warps.
      const std::uint64_t mine = base + std::uint64_t{lane} * warps;
      const bool pins = lane < group && mine < lines;
      std::uint32_t line = cache::no_line;
      const status pinned =
          pins ? cache.acquire_line(0, first_block + mine, line, deadline::after_ns(cache.wait_timeout_ns))
               : status{outcome::pending, 0};
      for (std::uint32_t j = 0; j < group; ++j) {
        const std::uint64_t index = base + std::uint64_t{j} * warps;
        if (index >= lines) break;
        // Lane j's pin, seen by every lane (a whole-warp group led by lane j).
        const portable::warp::lane_group from_j{0xffffffffu, j};
        const std::uint32_t held = portable::warp::from_leader(from_j, line);
        if (!status::unpack(portable::warp::from_leader(from_j, pinned.pack())).ok()) continue;
        const std::uint64_t count = n - index * per_line < per_line ? n - index * per_line : per_line;
        const auto* f = reinterpret_cast<const float*>(cache.line_data(held));
        for (std::uint64_t k = lane; k < count; k += lanes) s += f[k];
      }
      portable::warp::sync();  // every lane has read the group's lines before they may be evicted
      if (pinned.ok()) cache.unpin(line);
    }
    partial[t] = s;
  }
};

// BaM's Figure 6 workload: warp w reads runs of 1024 contiguous 8-byte elements, runs w,
// w + warps, ..., its lanes coalesced (lane k reads elements k, k + 32, ... of a run). Through
// the cache element by element (the array view: a pin per warp access) or with a reader (a pin
// per line). The sums are taken modulo 2^64: exact in any order.
template <class Source, bool with_reader>
struct warp_runs_job {
  static constexpr std::uint64_t run = 1024;
  Source x;
  std::uint64_t n;
  std::uint64_t* partial;  // one per thread
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const std::uint32_t lanes = warp_lanes();
    const std::uint64_t warps = threads / lanes;
    auto elements = x.reader();
    std::uint64_t s = 0;
    for (std::uint64_t first = t / lanes * run; first < n; first += warps * run) {
      const std::uint64_t end = first + run < n ? first + run : n;
      for (std::uint64_t i = first + t % lanes; i < end; i += lanes) {
        if constexpr (with_reader) {
          s += elements.at(i);
        } else {
          s += x.at(i);
        }
      }
    }
    partial[t] = s;
  }
};

// --- Data -----------------------------------------------------------------------------------

// Whole warps on the GPU (the warp-line kernel needs them): 1024 blocks of 256.
std::uint32_t threads_on(const runtime& rt) { return on_gpu(rt) ? 1024 * 256 : 4; }

// Where each array lives in the store (blocks of device 0). col and val are adjacent so one
// preload covers SpMV's data.
struct layout {
  std::uint64_t vec = 0, vec_blocks = 0, col = 0, col_blocks = 0, val = 0, val_blocks = 0;
  std::uint64_t total() const { return val + val_blocks; }
};

// --- Measuring ------------------------------------------------------------------------------

struct row_result {
  std::string kernel, mode, access;
  double seconds = 0;
  bool ok = false;
  int registers = -1;
  double hit_rate = -1;
};

struct context {
  runtime& rt;
  std::uint32_t threads;
  int reps;
  progress& bar;
  std::vector<row_result>& rows;
};

// Runs `once` (which returns the measured seconds of one run and checks its result) `reps`
// times and records the median. `cache` (null for native) gives the run's hit rate.
template <class Cache>
void measure(context& c, row_result r, Cache* cache, const std::function<double(bool&)>& once) {
  std::vector<double> times;
  r.ok = true;
  if (cache != nullptr) cache->reset_counters();
  for (int i = 0; i < c.reps; ++i) {
    bool ok = false;
    times.push_back(once(ok));
    r.ok = r.ok && ok;
  }
  c.rt.check();
  r.seconds = median(times);
  if (cache != nullptr) r.hit_rate = cache->counters().hit_rate();
  c.bar.step(r.kernel + " " + r.mode + " " + r.access);
  c.rows.push_back(r);
}

// `measure` of a run without a cache.
void measure(context& c, const row_result& r, const std::function<double(bool&)>& once) {
  measure<cache_type>(c, r, nullptr, once);
}

// Runs `measure` for the cache modes: "cache" on one preloaded cache, "cold" on a fresh cache
// per repetition (created outside the timed part). `once(cache, ok)` runs on a cache whose I/O
// handle is IO (the runtime's completion mode's).
template <class IO = io_handle, class Once>
void measure_cached(context& c, const row_result& base, std::uint64_t first, std::uint64_t blocks, Once&& once) {
  auto warm = whole_cache<policy, IO>(c.rt, blocks);
  warm->preload(0, first, blocks);
  row_result r = base;
  r.mode = "cache";
  measure(c, r, warm.get(), [&](bool& ok) { return once(*warm, ok); });
  warm.reset();
  r.mode = "cold";
  std::vector<double> times;
  r.ok = true;
  cache_counters sum{};
  for (int i = 0; i < c.reps; ++i) {
    auto cold = whole_cache<policy, IO>(c.rt, blocks);
    bool ok = false;
    times.push_back(once(*cold, ok));
    r.ok = r.ok && ok;
    const cache_counters k = cold->counters();
    sum.hits += k.hits;
    sum.misses += k.misses;
  }
  c.rt.check();
  r.seconds = median(times);
  r.hit_rate = sum.hit_rate();
  c.bar.step(r.kernel + " cold " + r.access);
  c.rows.push_back(r);
}

void bench_mean(context& c, const std::vector<float>& x, const layout& l) {
  double reference = 0;
  for (const float v : x) reference += v;
  auto* partial = static_cast<double*>(c.rt.allocate_device(c.threads * sizeof(double)));
  const auto check = [&](bool& ok) {
    double sum = 0;
    for (const double p : to_host(c.rt, partial, c.threads)) sum += p;
    ok = std::fabs(sum - reference) <= 1e-6 * (std::fabs(reference) + static_cast<double>(x.size()));
  };
  const std::uint64_t n = x.size();
  float* dx = to_device(c.rt, x);
  const mean_job<native_source<float>> native{{dx}, n, partial};
  measure(c, {"vector_mean", "native", "plain", 0, false, registers_of<decltype(native)>(c.rt), -1}, [&](bool& ok) {
    const double s = time_job(c.rt, c.threads, native);
    check(ok);
    return s;
  });
  c.rt.free(dx);
  // Element by element through the array view, in a kernel of ptxas's register choice and in
  // one capped at 64 (capped_mean_job).
  const auto through_view = [&](const char* access, auto job) {
    using job_type = decltype(job);
    measure_cached(c, {"vector_mean", "", access, 0, false, registers_of<job_type>(c.rt), -1}, l.vec, l.vec_blocks,
                   [&](cache_type& cache, bool& ok) {
                     job.x = {cache.array<float>(), l.vec * (block_bytes / 4)};
                     const double s = time_job(c.rt, c.threads, job);
                     check(ok);
                     return s;
                   });
  };
  through_view("array_view", mean_job<cached_source<float, policy>>{{}, n, partial});
  through_view("array_view_capped", capped_mean_job{{{}, n, partial}});
  measure_cached(c, {"vector_mean", "", "warp_lines", 0, false, registers_of<mean_lines_job>(c.rt), -1}, l.vec,
                 l.vec_blocks, [&](cache_type& cache, bool& ok) {
                   const double s = time_job(c.rt, c.threads, mean_lines_job{cache.device(), l.vec, n, partial});
                   check(ok);
                   return s;
                 });
  c.rt.free(partial);
}

// The vector's bytes as 8-byte elements and their sum modulo 2^64.
struct warp_runs_data {
  std::vector<std::uint64_t> words;
  std::uint64_t sum = 0;
  explicit warp_runs_data(const std::vector<float>& x) : words(x.size() * sizeof(float) / sizeof(std::uint64_t)) {
    std::memcpy(words.data(), x.data(), words.size() * sizeof(std::uint64_t));
    for (const std::uint64_t w : words) sum += w;
  }
};

// BaM's Figure 6 pattern over `data`: natively (with `native`), then through the array view and
// through array readers over a cache whose I/O handle is IO; `model` prefixes the cached rows'
// access.
template <class IO>
void bench_warp_runs(context& c, const warp_runs_data& data, const layout& l, bool native, const std::string& model) {
  const std::uint64_t n = data.words.size();
  auto* partial = static_cast<std::uint64_t*>(c.rt.allocate_device(c.threads * sizeof(std::uint64_t)));
  const auto check = [&](bool& ok) {
    std::uint64_t sum = 0;
    for (const std::uint64_t p : to_host(c.rt, partial, c.threads)) sum += p;
    ok = sum == data.sum;
  };
  if (native) {
    std::uint64_t* dx = to_device(c.rt, data.words);
    using native_job = warp_runs_job<native_source<std::uint64_t>, false>;
    measure(c, {"warp_runs", "native", "plain", 0, false, registers_of<native_job>(c.rt), -1}, [&](bool& ok) {
      const double s = time_job(c.rt, c.threads, native_job{{dx}, n, partial});
      check(ok);
      return s;
    });
    c.rt.free(dx);
  }
  const auto through = [&](const std::string& access, auto job) {
    using job_type = decltype(job);
    measure_cached<IO>(c, {"warp_runs", "", model + access, 0, false, registers_of<job_type>(c.rt), -1}, l.vec,
                       l.vec_blocks, [&](auto& cache, bool& ok) {
                         job.x = {cache.template array<std::uint64_t>(), l.vec * (block_bytes / sizeof(std::uint64_t))};
                         const double s = time_job(c.rt, c.threads, job);
                         check(ok);
                         return s;
                       });
  };
  using cached = cached_source<std::uint64_t, policy, IO>;
  through("array_view", warp_runs_job<cached, false>{{}, n, partial});
  through("array_reader", warp_runs_job<cached, true>{{}, n, partial});
  c.rt.free(partial);
}

// The same in the BaM-style I/O model (baselines/io_model.hpp), on a runtime of its own: no
// completion service shares the GPU with it. Stopped before the other runtime starts.
void bench_warp_runs_bam_style(backend want, const std::string& uri, const std::vector<float>& x,
                               const warp_runs_data& data, const layout& l, int reps, progress& bar,
                               std::vector<row_result>& rows) {
  auto rt = start_runtime(runtime_options_for(io_model::bam_style, bench_runtime_options(want)), uri);
  write_array(*rt, l.vec, x.data(), x.size() * sizeof(float));
  context c{*rt, threads_on(*rt), reps, bar, rows};
  bench_warp_runs<waiting_io_handle>(c, data, l, false, "bam_style_");
  rt->stop();
}

// Runs BFS from vertex 0; returns the summed kernel time, sets ok on a match.
template <class Cols>
double run_bfs(context& c, const std::vector<std::uint32_t>& reference, const device_graph& d, Cols col, bool& ok) {
  const double seconds = graph::run_bfs(c.rt, c.threads, d, col, 0).seconds;
  ok = to_host(c.rt, d.state, d.n) == reference;
  return seconds;
}

void bench_bfs(context& c, const csr& g, const layout& l) {
  const auto reference = bfs_reference(g, 0);
  std::uint64_t* row = to_device(c.rt, g.row);
  const device_graph d{row, g.n, static_cast<std::uint32_t*>(c.rt.allocate_device(g.n * sizeof(std::uint32_t))),
                       static_cast<std::uint32_t*>(c.rt.allocate_device(sizeof(std::uint32_t)))};
  std::uint32_t* col = to_device(c.rt, g.col);
  using native_cols = native_source<std::uint32_t>;
  measure(c, {"bfs", "native", "plain", 0, false, registers_of<bfs_job<native_cols>>(c.rt), -1},
          [&](bool& ok) { return run_bfs(c, reference, d, native_cols{col}, ok); });
  c.rt.free(col);
  using cached_cols = cached_source<std::uint32_t, policy>;
  measure_cached(c, {"bfs", "", "array_reader", 0, false, registers_of<bfs_job<cached_cols>>(c.rt), -1}, l.col,
                 l.col_blocks, [&](cache_type& cache, bool& ok) {
                   const cached_cols cols{cache.array<std::uint32_t>(), l.col * (block_bytes / 4)};
                   return run_bfs(c, reference, d, cols, ok);
                 });
  c.rt.free(row);
  c.rt.free(d.state);
  c.rt.free(d.changed);
}

void bench_spmv(context& c, const csr& g, const layout& l, std::mt19937_64& rng) {
  std::vector<float> x(g.n);
  std::uniform_real_distribution<float> u(-1, 1);
  for (float& v : x) v = u(rng);
  const spmv_expected reference = spmv_reference(g, x);
  std::uint64_t* row = to_device(c.rt, g.row);
  float* dx = to_device(c.rt, x);
  auto* y = static_cast<float*>(c.rt.allocate_device(g.n * sizeof(float)));
  const auto check = [&](bool& ok) { ok = spmv_matches(reference, to_host(c.rt, y, g.n)); };
  std::uint32_t* col = to_device(c.rt, g.col);
  float* val = to_device(c.rt, g.val);
  using native_job = spmv_job<native_source<std::uint32_t>, native_source<float>>;
  measure(c, {"spmv", "native", "plain", 0, false, registers_of<native_job>(c.rt), -1}, [&](bool& ok) {
    const double s = time_job(c.rt, c.threads, native_job{{col}, {val}, row, dx, y, g.n});
    check(ok);
    return s;
  });
  c.rt.free(col);
  c.rt.free(val);
  using cached_job = spmv_job<cached_source<std::uint32_t, policy>, cached_source<float, policy>>;
  measure_cached(c, {"spmv", "", "array_reader", 0, false, registers_of<cached_job>(c.rt), -1}, l.col,
                 l.col_blocks + l.val_blocks, [&](cache_type& cache, bool& ok) {
                   const cached_job job{{cache.array<std::uint32_t>(), l.col * (block_bytes / 4)},
                                        {cache.array<float>(), l.val * (block_bytes / 4)},
                                        row,
                                        dx,
                                        y,
                                        g.n};
                   const double s = time_job(c.rt, c.threads, job);
                   check(ok);
                   return s;
                 });
  c.rt.free(row);
  c.rt.free(dx);
  c.rt.free(y);
}

}  // namespace

int cache_overhead_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const backend want = backend_option(opt);
  const bool small = opt.flag("quick") || want == backend::cpu;
  const auto vector_mib = opt.number("vector-mib", small ? 1 : 512);
  const auto vertices = opt.whole<std::uint32_t>("vertices", small ? 1 << 13 : 1 << 22);
  const auto degree = opt.whole<std::uint32_t>("degree", small ? 8 : 16);
  const int reps = static_cast<int>(opt.number("reps", small ? 2 : 5));
  const std::string store = opt.get("store", "");
  const auto seed = opt.whole<std::uint64_t>("seed", 7);
  const std::string out_path = opt.get("out", "results/cache_overhead.json");
  const auto kernels = opt.list("kernels", "vector_mean,warp_runs,bfs,spmv");
  opt.reject_unknown();
  const auto wants = [&](const char* k) { return std::find(kernels.begin(), kernels.end(), k) != kernels.end(); };

  std::mt19937_64 rng(seed);
  std::vector<float> x(static_cast<std::size_t>(vector_mib * (1 << 20)) / sizeof(float));
  std::uniform_real_distribution<float> u(0, 1);
  for (float& v : x) v = u(rng);
  std::fprintf(stderr, "generating a random graph of %u vertices, degree %u...\n", vertices, degree);
  csr g = build_csr(uniform_edges(vertices, std::uint64_t{vertices} * degree, seed));
  random_weights(g, seed);
  layout l;
  l.vec_blocks = blocks_of(x.size() * sizeof(float));
  l.col = l.vec + l.vec_blocks;
  l.col_blocks = blocks_of(g.col.size() * sizeof(std::uint32_t));
  l.val = l.col + l.col_blocks;
  l.val_blocks = blocks_of(g.val.size() * sizeof(float));

  const std::string uri = store.empty() ? ram_uri(l.total() * block_bytes) : store;
  // Vector mean: native, then the cache and cold runs of three accesses; warp runs: of two, in
  // each I/O model; BFS, SpMV: native, cache, cold.
  progress bar((wants("vector_mean") ? 7 : 0) + (wants("warp_runs") ? 9 : 0) + (wants("bfs") ? 3 : 0) +
               (wants("spmv") ? 3 : 0));
  std::vector<row_result> rows;
  std::optional<warp_runs_data> runs;
  if (wants("warp_runs")) {
    runs.emplace(x);
    bench_warp_runs_bam_style(want, uri, x, *runs, l, reps, bar, rows);
  }
  auto rt = start_runtime(want, uri);
  if (rt->devices()[0].capacity_blocks * rt->devices()[0].lba_bytes < l.total() * block_bytes) {
    throw std::invalid_argument("cache_overhead: " + uri + " is smaller than the data");
  }
  std::fprintf(stderr, "writing %.1f MiB of data to %s...\n", static_cast<double>(l.total() * block_bytes) / (1 << 20),
               uri.c_str());
  write_array(*rt, l.vec, x.data(), x.size() * sizeof(float));
  write_array(*rt, l.col, g.col.data(), g.col.size() * sizeof(std::uint32_t));
  write_array(*rt, l.val, g.val.data(), g.val.size() * sizeof(float));

  const std::uint32_t threads = threads_on(*rt);
  context c{*rt, threads, reps, bar, rows};
  if (wants("vector_mean")) bench_mean(c, x, l);
  if (wants("warp_runs")) bench_warp_runs<io_handle>(c, *runs, l, true, "");
  if (wants("bfs")) bench_bfs(c, g, l);
  if (wants("spmv")) bench_spmv(c, g, l, rng);

  result_document doc;
  std::printf("%-12s %-7s %-22s %11s %8s %9s %5s %s\n", "kernel", "mode", "access", "time_ms", "x_native", "hit_rate",
              "regs", "check");
  bool all_ok = true;
  // Warp runs read the vector's whole 8-byte elements once: their rate is a bandwidth.
  const auto vector_bytes = static_cast<double>(x.size() * sizeof(float) / 8 * 8);
  for (const row_result& r : rows) {
    double native = 0;
    for (const row_result& n : rows) {
      if (n.kernel == r.kernel && n.mode == "native") native = n.seconds;
    }
    const double ratio = native > 0 ? r.seconds / native : 0;
    all_ok = all_ok && r.ok;
    // Native rows have no hit rate, and CPU threads no register count: print "-" there.
    const std::string hits = r.hit_rate >= 0 ? std::to_string(r.hit_rate).substr(0, 6) : "-";
    const std::string regs = r.registers >= 0 ? std::to_string(r.registers) : "-";
    std::printf("%-12s %-7s %-22s %11.3f %8.2f %9s %5s %s\n", r.kernel.c_str(), r.mode.c_str(), r.access.c_str(),
                r.seconds * 1e3, ratio, hits.c_str(), regs.c_str(), r.ok ? "ok" : "FAILED");
    json_object o;
    o.set("kernel", r.kernel).set("mode", r.mode).set("access", r.access).set("seconds", r.seconds);
    o.set("ratio_to_native", ratio).set("verified", r.ok).set("registers", std::int64_t{r.registers});
    if (r.hit_rate >= 0) o.set("hit_rate", r.hit_rate);
    if (r.kernel == "warp_runs") o.set("gbps", vector_bytes / r.seconds / 1e9);
    doc.points.push_back(o);
    if (r.kernel == "vector_mean" && r.mode == "cache" && r.access == "warp_lines") {
      std::printf("%-12s target: cache-API time <= 1.3x native: %s\n", "", ratio <= 1.3 ? "met" : "MISSED");
    }
    if (r.kernel == "warp_runs" && r.mode != "cold") {
      std::printf("%-12s %s %s: %.1f GB/s%s\n", "", r.mode.c_str(), r.access.c_str(), vector_bytes / r.seconds / 1e9,
                  r.mode == "cache" ? " from the hot cache (target >= 1000 GB/s on the H100)" : "");
    }
  }
  doc.set_header("cache_overhead", rt->describe(), argc, argv);
  doc.config.set("store", uri).set("store_kind", store_kind(uri));
  doc.config.set("policy", std::string("clock"))
      .set("ways", std::int64_t{8})
      .set("line_bytes", std::int64_t{block_bytes});
  doc.config.set("vector_floats", static_cast<std::int64_t>(x.size())).set("vertices", std::int64_t{vertices});
  doc.config.set("edges", static_cast<std::int64_t>(g.col.size()))
      .set("graph", std::string("uniform random, directed"));
  doc.config.set("threads", std::int64_t{threads}).set("reps", std::int64_t{reps}).set("timing", std::string("median"));
  doc.config.set("profile", std::string(small ? "quick" : "full"));
  return finish(doc, *rt, out_path, all_ok, "cache_overhead: some results did not match the host reference");
}

}  // namespace agio::bench
