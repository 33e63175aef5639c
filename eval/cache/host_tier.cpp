// host-tier: the host-memory tier below the GPU cache (agio/cache/host_tier.hpp). Warps read
// whole 4 KiB lines in a fixed random order (each warp one line after another, its lanes reading
// a line together) from:
//   hbm:           the data in GPU memory (LMB's "Ideal": everything in the fastest memory);
//   pinned:        the data in pinned host memory, read by the warps over PCIe: the physical
//                  floor of a host-tier hit; pinned_one_lane: the same read by one lane of each
//                  warp, as a tier hit's copy is made when one lane missed;
//   host_tier:     a GPU cache of --cache-mib above a host tier that holds every block
//                  (preloaded): nearly every access misses the GPU cache and hits the tier;
//   host_tier_cxl: the same with --cxl-ns added to each access to the tier (LMB's CXL memory);
//   tier_in_gpu_memory: the same with the tier's lines in GPU memory: its bookkeeping alone;
//   two_tiers:     the same GPU cache straight above the store (LMB's SSD only).
// The store is one emulated SSD (`ram:` with the agile-ssd profile) unless --store names another
// (`file:` for real I/O) of at least --data-mib.
// Then the admission policies (always, on reuse, on eviction) with a tier a quarter of the
// data: on a skewed trace, and on the skewed trace again after a scan of every block (a scan
// must not flush the tier). Every sum read is checked against the host's.
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/portable.hpp"
#include "agio/runtime/software_cache.hpp"
#include "cache/cache_bench.hpp"
#include "cache/zipf_blocks.hpp"
#include "harness/bench_common.hpp"
#include "harness/progress.hpp"
#include "harness/timing.hpp"

namespace agio::bench {
namespace {

using policy = cache::clock;
using plain_cache = software_cache<policy>;  // a GPU cache over the store, or a host tier
template <class Admission>
using cache_above =
    software_cache<policy, cache::no_lock_chain, cache::no_share_table, cache::tiered_io<policy, Admission, io_handle>>;
constexpr std::uint32_t floats_per_line = block_bytes / sizeof(float);

// Small integers: every sum of them is exact in a double, whatever the order.
float value_at(std::uint64_t block, std::uint32_t k) { return static_cast<float>((block * 31 + k) % 1000); }

// --- How a warp reads a line ----------------------------------------------------------------

// From memory the warp reads directly (GPU memory, or mapped pinned host memory).
struct memory_lines {
  const float* data;
  AGIO_HD double sum(std::uint64_t block, std::uint32_t lane, std::uint32_t lanes, status&) const {
    double s = 0;
    for (std::uint32_t k = lane; k < floats_per_line; k += lanes) s += data[block * floats_per_line + k];
    return s;
  }
};

struct alignas(16) four_floats {
  float x, y, z, w;
};

// The same memory read by one lane of the warp alone, eight 16-byte loads in flight, as a
// host-tier hit's copy is made when one lane missed: what such a copy can reach.
struct lone_lane_lines {
  const float* data;
  AGIO_HD double sum(std::uint64_t block, std::uint32_t lane, std::uint32_t, status&) const {
    if (lane != 0) return 0;
    const auto* v = reinterpret_cast<const four_floats*>(data + block * floats_per_line);
    double s = 0;
    constexpr std::uint32_t in_flight = 8;
    for (std::uint32_t i = 0; i < floats_per_line / 4; i += in_flight) {
      four_floats x[in_flight];
      for (std::uint32_t k = 0; k < in_flight; ++k) x[k] = v[i + k];
      for (std::uint32_t k = 0; k < in_flight; ++k) s += double{x[k].x} + x[k].y + x[k].z + x[k].w;
    }
    return s;
  }
};

// Through a cache: the warp acquires the line together (the first lane pins it for the warp,
// and a fill from the host tier is copied by every lane), every lane reads it, the first lets
// go once all have.
template <class Handle>
struct cached_lines {
  Handle cache;
  AGIO_HD double sum(std::uint64_t block, std::uint32_t lane, std::uint32_t lanes, status& result) const {
    std::uint32_t line = cache::no_line;
    const portable::warp::lane_group warp = lanes == 1 ? portable::warp::lane_group{} : portable::warp::whole_warp();
    const status pinned = cache.acquire_line_together(warp, 0, block, line, deadline::after_ns(cache.wait_timeout_ns));
    if (!pinned.ok()) {
      result = pinned;
      return 0;
    }
    const auto* f = reinterpret_cast<const float*>(cache.line_data(line));
    double s = 0;
    for (std::uint32_t k = lane; k < floats_per_line; k += lanes) s += f[k];
    portable::warp::sync();  // every lane has read the line before it may be evicted
    if (lane == 0) cache.unpin(line);
    return s;
  }
};

// Warp w reads trace[w * per_warp ...] in order; each thread adds up what it read.
template <class Lines>
struct lines_job {
  Lines lines;
  const std::uint64_t* trace;
  std::uint64_t per_warp;
  double* partial;         // one per thread
  std::uint32_t* failure;  // the first status::pack() that was not success
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const std::uint32_t lanes = warp_lanes();
    const std::uint64_t first = std::uint64_t{t / lanes} * per_warp;
    double s = 0;
    for (std::uint64_t k = 0; k < per_warp; ++k) {
      status st{outcome::success, 0};
      s += lines.sum(trace[first + k], t % lanes, lanes, st);
      if (!st.ok()) cache::record_failure(failure, st);
    }
    partial[t] = s;
  }
};

// --- Measuring ------------------------------------------------------------------------------

// Blocks to read, per_warp of them per warp, here and in device memory, and the sum of every
// line read.
struct trace_on_device {
  std::vector<std::uint64_t> blocks;
  std::uint64_t per_warp = 0;
  const std::uint64_t* device = nullptr;
  double sum = 0;
};

struct row {
  std::string experiment, mode;
  double seconds = 0;
  std::uint64_t accesses = 0;
  bool ok = false;
  double cache_hit_rate = -1, tier_hit_rate = -1;
  std::uint64_t store_commands = 0;  // per run
};

struct context {
  runtime& rt;
  std::uint32_t warps, threads;
  int reps;
  double* partial;
  std::uint32_t* failure;
  progress& bar;
  std::vector<row>& rows;
};

// One timed run of `lines` over `trace`; sets ok when the sums match and nothing failed.
template <class Lines>
double run_once(context& c, const Lines& lines, const trace_on_device& trace, bool& ok) {
  const std::uint32_t none = 0;
  c.rt.copy_to_device(c.failure, &none, sizeof none);
  const double seconds =
      time_job(c.rt, c.threads, lines_job<Lines>{lines, trace.device, trace.per_warp, c.partial, c.failure});
  double sum = 0;
  for (const double p : to_host(c.rt, c.partial, c.threads)) sum += p;
  std::uint32_t failed = 0;
  c.rt.copy_to_host(&failed, c.failure, sizeof failed);
  ok = failed == 0 && sum == trace.sum;
  return seconds;
}

// `reps` runs of `lines` over `trace`, their median recorded; `before` runs ahead of each,
// untimed (and must set its ok).
template <class Lines>
row measure(context& c, const std::string& experiment, const std::string& mode, const Lines& lines,
            const trace_on_device& trace, const std::function<void(bool&)>& before) {
  row r{experiment, mode};
  r.ok = true;
  std::vector<double> times;
  std::uint64_t commands = 0;
  for (int i = 0; i < c.reps; ++i) {
    bool ok = true;
    before(ok);
    r.ok = r.ok && ok;
    const std::uint64_t earlier = store_commands(c.rt);
    times.push_back(run_once(c, lines, trace, ok));
    commands += store_commands(c.rt) - earlier;
    r.ok = r.ok && ok;
  }
  c.rt.check();
  r.seconds = median(times);
  r.accesses = trace.blocks.size();
  r.store_commands = commands / static_cast<std::uint64_t>(c.reps);
  c.bar.step(experiment + " " + mode);
  return r;
}
template <class Lines>
row measure(context& c, const std::string& experiment, const std::string& mode, const Lines& lines,
            const trace_on_device& trace) {
  return measure(c, experiment, mode, lines, trace, [](bool&) {});
}

trace_on_device make_trace(runtime& rt, std::uint32_t warps, std::vector<std::uint64_t> blocks) {
  trace_on_device t;
  for (const std::uint64_t b : blocks) {
    for (std::uint32_t k = 0; k < floats_per_line; ++k) t.sum += value_at(b, k);
  }
  t.per_warp = blocks.size() / warps;
  blocks.resize(t.per_warp * warps);
  t.blocks = std::move(blocks);
  t.device = to_device(rt, t.blocks);
  return t;
}

struct sizes {
  std::uint64_t blocks, cache_bytes, tier_bytes, small_tier_bytes;
  std::uint32_t cxl_ns;
};

cache_options in_host_memory(std::uint64_t bytes) {
  cache_options o{bytes, block_bytes, 8};
  o.memory = cache_memory::host;
  return o;
}

template <class Cache>
cached_lines<typename Cache::handle> through(const Cache& cache) {
  return {cache.device()};
}

// LMB's comparison recast for a GPU (all data in HBM, host tier with CXL's latency, host tier,
// SSD only), and a host-tier hit against the floor (pinned).
void bench_tiers(context& c, const sizes& z, const std::vector<float>& data, const trace_on_device& uniform) {
  const std::uint64_t bytes = data.size() * sizeof(float);
  float* hbm = to_device(c.rt, data);
  c.rows.push_back(measure(c, "tiers", "hbm", memory_lines{hbm}, uniform));
  c.rt.free(hbm);
  auto* pinned = static_cast<float*>(c.rt.allocate_host(bytes));
  std::memcpy(pinned, data.data(), bytes);
  c.rows.push_back(measure(c, "tiers", "pinned", memory_lines{pinned}, uniform));
  c.rows.push_back(measure(c, "tiers", "pinned_one_lane", lone_lane_lines{pinned}, uniform));
  c.rt.free(pinned);
  // The tier in host memory, with and without CXL's latency; then its lines in GPU memory: the
  // tier's bookkeeping without the copy over PCIe.
  for (const cache_memory memory : {cache_memory::host, cache_memory::device}) {
    cache_options tier_options = in_host_memory(z.tier_bytes);
    tier_options.memory = memory;
    plain_cache tier(c.rt, tier_options);
    tier.preload(0, 0, z.blocks);
    const bool in_host = memory == cache_memory::host;
    for (const std::uint32_t ns : in_host ? std::vector<std::uint32_t>{0, z.cxl_ns} : std::vector<std::uint32_t>{0}) {
      const cache_above<cache::admit_always> above(c.rt, tier, {z.cache_bytes, block_bytes, 8}, host_tier_options{ns});
      tier.reset_counters();
      const std::string mode = !in_host ? "tier_in_gpu_memory" : ns == 0 ? "host_tier" : "host_tier_cxl";
      row r = measure(c, "tiers", mode, through(above), uniform);
      r.cache_hit_rate = above.counters().hit_rate();
      r.tier_hit_rate = tier.counters().share_served(above.counters().misses);
      c.rows.push_back(r);
    }
  }
  const plain_cache alone(c.rt, {z.cache_bytes, block_bytes, 8});
  row r = measure(c, "tiers", "two_tiers", through(alone), uniform);
  r.cache_hit_rate = alone.counters().hit_rate();
  c.rows.push_back(r);
}

// An admission policy with a tier of a quarter of the data: the skewed trace (runs after the
// first find the caches warm), then, on fresh caches, the skewed trace after a scan each time
// (the hit rates then count the skewed run after the last scan alone).
template <class Admission>
void bench_admission(context& c, const sizes& z, const trace_on_device& skewed, const trace_on_device& scan) {
  for (const bool scans : {false, true}) {
    plain_cache tier(c.rt, in_host_memory(z.small_tier_bytes));
    cache_above<Admission> above(c.rt, tier, {z.cache_bytes, block_bytes, 8});
    const auto lines = through(above);
    bool warmed = true;
    run_once(c, lines, skewed, warmed);
    tier.reset_counters();
    above.reset_counters();
    const auto scan_first = [&](bool& ok) {
      if (!scans) return;
      run_once(c, lines, scan, ok);
      tier.reset_counters();
      above.reset_counters();
    };
    row r = measure(c, scans ? "skewed_after_scan" : "skewed", Admission::name, lines, skewed, scan_first);
    r.ok = r.ok && warmed;
    r.cache_hit_rate = above.counters().hit_rate();
    r.tier_hit_rate = tier.counters().share_served(above.counters().misses);
    c.rows.push_back(r);
  }
}

}  // namespace

int host_tier_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const backend want = backend_option(opt);
  const bool small = opt.flag("quick") || want == backend::cpu;
  const auto data_mib = opt.whole<std::uint64_t>("data-mib", small ? 4 : 1024);
  const auto cache_mib = opt.whole<std::uint64_t>("cache-mib", small ? 0 : 64);
  const auto cxl_ns = opt.whole<std::uint32_t>("cxl-ns", 190);
  const double alpha = opt.number("zipf-alpha", 0.9);
  const int reps = static_cast<int>(opt.number("reps", small ? 2 : 3));
  const auto seed = opt.whole<std::uint64_t>("seed", 5);
  const std::string store = opt.get("store", "");
  const std::string out_path = opt.get("out", "results/host_tier.json");
  const auto experiments = opt.list("experiments", "tiers,admission");
  opt.reject_unknown();
  const auto wants = [&](const char* e) {
    return std::find(experiments.begin(), experiments.end(), e) != experiments.end();
  };

  sizes z{};
  z.blocks = (data_mib << 20) / block_bytes;
  // The GPU cache holds a sixteenth of the data unless told (CPU runs: 16 lines).
  z.cache_bytes = cache_mib != 0 ? cache_mib << 20 : std::max<std::uint64_t>(z.blocks / 16, 16) * block_bytes;
  z.tier_bytes = 2 * z.blocks * block_bytes;  // room for every block, whatever the sets
  z.small_tier_bytes = z.blocks / 4 * block_bytes;
  z.cxl_ns = cxl_ns;
  if (z.blocks < 64 || z.cache_bytes >= z.small_tier_bytes) {
    throw std::invalid_argument("host-tier: --data-mib must hold 64 blocks and 4x the GPU cache (--cache-mib)");
  }
  // One emulated SSD (the paper's) by default: LMB compares one device's tiers.
  const std::string uri = store.empty() ? "ram:" + std::to_string(data_mib) + "M?lba=4096&profile=agile-ssd" : store;
  auto rt = start_runtime(want, uri);
  std::vector<float> data(z.blocks * floats_per_line);
  for (std::uint64_t b = 0; b < z.blocks; ++b) {
    for (std::uint32_t k = 0; k < floats_per_line; ++k) data[b * floats_per_line + k] = value_at(b, k);
  }
  std::fprintf(stderr, "writing %llu MiB to %s...\n", static_cast<unsigned long long>(data_mib), uri.c_str());
  write_array(*rt, 0, data.data(), data.size() * sizeof(float));

  // Whole warps on the GPU: 1024 blocks of 256 threads, each warp 64 lines of the main traces.
  const bool gpu = on_gpu(*rt);
  const std::uint32_t threads = gpu ? 1024 * 256 : 4;
  const std::uint32_t warps = threads / (gpu ? 32 : 1);
  const std::uint64_t accesses = std::uint64_t{warps} * (gpu ? 64 : 1024);
  std::mt19937_64 rng(seed);
  std::vector<std::uint64_t> uniform_blocks(accesses);
  for (auto& b : uniform_blocks) b = rng() % z.blocks;
  std::vector<std::uint64_t> skewed_blocks;
  draw_zipf_blocks(z.blocks, accesses, alpha, rng, [&](std::uint64_t b) { skewed_blocks.push_back(b); });
  std::vector<std::uint64_t> scan_blocks(z.blocks);
  std::iota(scan_blocks.begin(), scan_blocks.end(), 0);
  const trace_on_device uniform = make_trace(*rt, warps, uniform_blocks);
  const trace_on_device skewed = make_trace(*rt, warps, skewed_blocks);
  const trace_on_device scan = make_trace(*rt, warps, scan_blocks);

  std::vector<row> rows;
  progress bar((wants("tiers") ? 7 : 0) + (wants("admission") ? 6 : 0));
  auto* partial = static_cast<double*>(rt->allocate_device(threads * sizeof(double)));
  auto* failure = static_cast<std::uint32_t*>(rt->allocate_device(sizeof(std::uint32_t)));
  context c{*rt, warps, threads, reps, partial, failure, bar, rows};
  if (wants("tiers")) bench_tiers(c, z, data, uniform);
  if (wants("admission")) {
    bench_admission<cache::admit_always>(c, z, skewed, scan);
    bench_admission<cache::admit_on_reuse>(c, z, skewed, scan);
    bench_admission<cache::admit_on_eviction>(c, z, skewed, scan);
  }

  result_document doc;
  std::printf("%-18s %-18s %10s %11s %9s %9s %9s %14s %s\n", "experiment", "mode", "time_ms", "M_lines/s", "GB/s",
              "gpu_hits", "tier_hits", "store_cmds/run", "check");
  bool all_ok = true;
  double pinned = 0, one_lane = 0, host_tier = 0, two_tiers = 0;
  for (const row& r : rows) {
    const double rate = static_cast<double>(r.accesses) / r.seconds;
    all_ok = all_ok && r.ok;
    if (r.mode == "pinned") pinned = r.seconds;
    if (r.mode == "pinned_one_lane") one_lane = r.seconds;
    if (r.mode == "host_tier") host_tier = r.seconds;
    if (r.mode == "two_tiers") two_tiers = r.seconds;
    const auto rate_or_dash = [](double v) { return v >= 0 ? std::to_string(v).substr(0, 6) : std::string("-"); };
    std::printf("%-18s %-18s %10.3f %11.3f %9.2f %9s %9s %14llu %s\n", r.experiment.c_str(), r.mode.c_str(),
                r.seconds * 1e3, rate / 1e6, rate * block_bytes / 1e9, rate_or_dash(r.cache_hit_rate).c_str(),
                rate_or_dash(r.tier_hit_rate).c_str(), static_cast<unsigned long long>(r.store_commands),
                r.ok ? "ok" : "FAILED");
    json_object o;
    o.set("experiment", r.experiment).set("mode", r.mode).set("seconds", r.seconds);
    o.set("accesses", static_cast<std::int64_t>(r.accesses)).set("lines_per_second", rate);
    o.set("gbps", rate * block_bytes / 1e9).set("verified", r.ok);
    o.set("store_commands_per_run", static_cast<std::int64_t>(r.store_commands));
    if (r.cache_hit_rate >= 0) o.set("gpu_cache_hit_rate", r.cache_hit_rate);
    if (r.tier_hit_rate >= 0) o.set("host_tier_hit_rate", r.tier_hit_rate);
    doc.points.push_back(o);
  }
  if (pinned > 0 && host_tier > 0) {
    std::printf(
        "host-tier access / pinned read by a warp: %.2fx (target <= 1.5x), by one lane: %.2fx; "
        "two tiers / three: %.2fx\n",
        host_tier / pinned, host_tier / one_lane, two_tiers / host_tier);
  }
  doc.set_header("host_tier", rt->describe(), argc, argv);
  doc.config.set("store", uri).set("store_kind", store_kind(uri));
  doc.config.set("policy", std::string("clock")).set("line_bytes", std::int64_t{block_bytes});
  doc.config.set("data_bytes", static_cast<std::int64_t>(z.blocks * block_bytes))
      .set("gpu_cache_bytes", static_cast<std::int64_t>(z.cache_bytes))
      .set("host_tier_bytes", static_cast<std::int64_t>(z.tier_bytes))
      .set("small_host_tier_bytes", static_cast<std::int64_t>(z.small_tier_bytes));
  doc.config.set("cxl_ns", std::int64_t{cxl_ns}).set("zipf_alpha", alpha).set("warps", std::int64_t{warps});
  doc.config.set("reps", std::int64_t{reps}).set("timing", std::string("median, kernel time"));
  rt->free(partial);
  rt->free(failure);
  return finish(doc, *rt, out_path, all_ok, "host-tier: some sums did not match the host's");
}

}  // namespace agio::bench
