// agio bench gather: N random rows of R bytes gathered from a table F times the size of the
// cache, through the cache, by cache::row_gather_job (cache/row_access.hpp), the code agio.Array
// runs: the C++ side of the comparison with Python's gathers. The indices are drawn and put in
// device memory before anything is timed; each timed repeat is one job over all of them, timed
// by the wall clock around its launch and wait (what a caller of the job, Python's included,
// waits for).
//
// Warm-up rule, which a Python measurement must follow to compare: one untimed gather of the
// same indices first (it fills the cache), then --repeats timed gathers of the same indices,
// each after resetting the counters; the median is reported, and the counters of every repeat.
//
// Compiled by nvcc when CUDA is available (the gathers then run as GPU kernels) and by the host
// compiler otherwise (CPU threads). The gathers of each policy are in a file of their own
// (gather_run.hpp).
#include "gather_bench/gather_bench.hpp"

#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/policies/s3_fifo.hpp"
#include "agio/cache/row_access.hpp"
#include "gather_bench/gather_run.hpp"
#include "harness/backend_option.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench {

int gather_bench_main(int argc, char** argv, int first) {
  const options opt(argc, argv, first);
  gather_config c;
  c.rows = opt.whole<std::uint64_t>("rows", std::uint64_t{1} << 20);
  c.row_bytes = opt.bytes("row-bytes", "512");
  c.offset = opt.bytes("offset", "0");
  c.cache.bytes = opt.bytes("cache", "64M");
  c.cache.line_bytes = static_cast<std::uint32_t>(opt.bytes("line-bytes", "4096"));
  c.cache.ways = opt.whole<std::uint32_t>("ways", 8);
  const double factor = opt.number("table-factor", 4);
  c.policy = opt.get("policy", "clock");
  c.repeats = opt.whole<std::uint32_t>("repeats", 5);
  c.seed = opt.whole<std::uint64_t>("seed", 1);
  const std::uint32_t queue_pairs = opt.whole<std::uint32_t>("queue-pairs", 4);
  const std::uint32_t queue_depth = opt.whole<std::uint32_t>("queue-depth", 256);
  runtime_options ro = bench_runtime_options(backend_option(opt));
  ro.completion = completion_option(opt);
  const std::string out_path = opt.get("out", "results/gather.json");
  if (c.row_bytes == 0 || c.rows == 0 || c.repeats == 0 || factor <= 0) {
    throw std::invalid_argument("--rows, --row-bytes, --repeats and --table-factor must be above 0");
  }
  c.table_rows = static_cast<std::uint64_t>(factor * static_cast<double>(c.cache.bytes)) / c.row_bytes;
  const std::uint64_t table_bytes = c.table_rows * c.row_bytes;
  const std::string store = opt.get("store", ram_uri(c.offset + table_bytes));
  opt.reject_unknown();
  if (c.policy != "clock" && c.policy != "lfu_da" && c.policy != "s3_fifo" && c.policy != "direct_mapped") {
    throw std::invalid_argument("--policy is clock, lfu_da, s3_fifo or direct_mapped, not '" + c.policy + "'");
  }
  const bool emulated = store.rfind("ram:", 0) == 0;

  runtime rt(ro);
  rt.attach(device_options{store, queue_pairs, queue_depth});
  rt.start();
  write_pattern(rt, c.offset + table_bytes);

  std::vector<std::uint64_t> picks(c.rows);
  std::mt19937_64 random(c.seed);
  for (auto& p : picks) p = random() % c.table_rows;
  auto* indices = to_device(rt, picks);
  auto* out = static_cast<std::byte*>(rt.allocate_device(c.rows * c.row_bytes));
  auto* failure = static_cast<cache::row_failure*>(rt.allocate_device(sizeof(cache::row_failure)));
  const gather_buffers buffers{picks, indices, out, failure};
  bool verified = false;
  std::vector<repeat_result> results;
  if (c.policy == "clock") {
    results = gather_with<cache::clock>(rt, c, buffers, verified);
  } else if (c.policy == "lfu_da") {
    results = gather_with<cache::lfu_da>(rt, c, buffers, verified);
  } else if (c.policy == "s3_fifo") {
    results = gather_with<cache::s3_fifo>(rt, c, buffers, verified);
  } else {
    results = gather_with<cache::direct_mapped>(rt, c, buffers, verified);
  }
  rt.free(indices);
  rt.free(out);
  rt.free(failure);

  result_document doc;
  std::vector<double> seconds;
  for (std::size_t r = 0; r < results.size(); ++r) {
    const repeat_result& x = results[r];
    seconds.push_back(x.seconds);
    json_object o;
    o.set("repeat", static_cast<std::int64_t>(r)).set("seconds", x.seconds);
    o.set("rows_per_s", static_cast<double>(c.rows) / x.seconds);
    o.set("gbps", static_cast<double>(c.rows * c.row_bytes) / x.seconds / 1e9);
    o.set("hits", static_cast<std::int64_t>(x.counters.hits))
        .set("misses", static_cast<std::int64_t>(x.counters.misses));
    o.set("hits_on_busy", static_cast<std::int64_t>(x.counters.hits_on_busy));
    o.set("evictions", static_cast<std::int64_t>(x.counters.evictions));
    doc.points.push_back(o);
  }
  const double mid = median(seconds);
  const std::string kind = store_kind(store);
  doc.set_header("gather", rt.describe(), argc, argv);
  doc.config.set("rows", static_cast<std::int64_t>(c.rows)).set("row_bytes", static_cast<std::int64_t>(c.row_bytes));
  doc.config.set("offset", static_cast<std::int64_t>(c.offset));
  doc.config.set("table_rows", static_cast<std::int64_t>(c.table_rows));
  doc.config.set("table_bytes", static_cast<std::int64_t>(table_bytes)).set("table_factor", factor);
  doc.config.set("cache_bytes", static_cast<std::int64_t>(c.cache.bytes));
  doc.config.set("line_bytes", std::int64_t{c.cache.line_bytes}).set("ways", std::int64_t{c.cache.ways});
  doc.config.set("policy", c.policy).set("store", store).set("store_kind", kind).set("emulation", emulated);
  doc.config.set("completion", completion_name(ro.completion));
  doc.config.set("queue_pairs", std::int64_t{queue_pairs}).set("queue_depth", std::int64_t{queue_depth});
  doc.config.set("threads", std::int64_t{cache::row_job_threads(c.rows, on_gpu(rt))});
  doc.config.set("repeats", std::int64_t{c.repeats}).set("seed", static_cast<std::int64_t>(c.seed));
  doc.config.set("warm_up", std::string("one untimed gather of the same indices"));
  doc.config.set("median_seconds", mid).set("median_rows_per_s", static_cast<double>(c.rows) / mid);
  doc.config.set("median_gbps", static_cast<double>(c.rows * c.row_bytes) / mid / 1e9).set("verified", verified);
  std::printf("gather: %llu random rows of %llu B from a table of %.1f MiB (%gx a %.1f MiB %s cache), %s\n",
              static_cast<unsigned long long>(c.rows), static_cast<unsigned long long>(c.row_bytes),
              static_cast<double>(table_bytes) / (1 << 20), factor, static_cast<double>(c.cache.bytes) / (1 << 20),
              c.policy.c_str(), kind.c_str());
  for (const repeat_result& x : results) {
    std::printf("  %8.3f ms  %12.0f rows/s  %7.2f GB/s  hits %llu  misses %llu  hits on busy %llu\n", x.seconds * 1e3,
                static_cast<double>(c.rows) / x.seconds, static_cast<double>(c.rows * c.row_bytes) / x.seconds / 1e9,
                static_cast<unsigned long long>(x.counters.hits), static_cast<unsigned long long>(x.counters.misses),
                static_cast<unsigned long long>(x.counters.hits_on_busy));
  }
  std::printf("median: %.3f ms, %.0f rows/s, %.2f GB/s%s\n", mid * 1e3, static_cast<double>(c.rows) / mid,
              static_cast<double>(c.rows * c.row_bytes) / mid / 1e9, emulated ? " (emulation)" : "");
  return finish(doc, rt, out_path, verified, "gathered rows differ from the store");
}

}  // namespace agio::bench
