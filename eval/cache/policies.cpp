// cache_policies: miss ratio and kernel time of CLOCK, LFU-DA, S3-FIFO and direct-mapped on two
// skewed traces (Zipf embedding lookups, Kronecker graph neighbour targets) at cache sizes of
// 1%, 5% and 20% of the data. The data is a pattern in a ram: store (emulated storage), so
// every read is checked against a host checksum of the same trace.
//
// The headline is miss_ratio = fills / accesses (hit_rate = 1 - miss_ratio): every access
// that issued no fill was served from the cache, whether it hit at once, waited on another
// thread's fill or shared a warp-mate's access. Those three counts depend on the threads'
// timing, so hits / (hits + misses) can rank two policies opposite to their fills; the raw
// counters are in the JSON. With --threads 1 on CPU threads the run is sequential and the
// miss ratio deterministic.
#include <cmath>
#include <cstdio>
#include <numeric>
#include <random>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/policies/s3_fifo.hpp"
#include "agio/portable.hpp"
#include "agio/runtime/software_cache.hpp"
#include "cache/cache_bench.hpp"
#include "cache/zipf_blocks.hpp"
#include "harness/bench_common.hpp"
#include "harness/progress.hpp"

namespace agio::bench {
namespace {

constexpr std::uint64_t words_per_block = block_bytes / sizeof(std::uint32_t);

// An access trace: element indices (32-bit words of device 0), here and in device memory.
struct trace {
  std::string name;
  std::vector<std::uint64_t> index;
  std::uint64_t checksum = 0;  // sum of pattern_word over the trace
  std::uint64_t blocks = 0;    // blocks the trace can touch
};

void finish(trace& t) {
  for (const std::uint64_t i : t.index) t.checksum += pattern_word(i);
}

// DLRM-like embedding lookups: Zipf(alpha) blocks (zipf_blocks.hpp), a random word of each.
trace zipf_trace(std::uint64_t blocks, std::uint64_t accesses, double alpha, std::mt19937_64& rng) {
  trace t{"zipf", {}, 0, blocks};
  t.index.reserve(accesses);
  draw_zipf_blocks(blocks, accesses, alpha, rng,
                   [&](std::uint64_t block) { t.index.push_back(block * words_per_block + rng() % words_per_block); });
  finish(t);
  return t;
}

// Neighbour-list targets of a Graph500 Kronecker (R-MAT a=0.57, b=c=0.19) graph over 2^scale
// vertices, in edge order; each access reads the first word of the target's 64-byte feature.
// Power-law in-degree makes the blocks holding popular vertices hot. Vertex labels are
// permuted as in Graph500, so hot vertices do not all share the first blocks.
trace kronecker_trace(std::uint32_t scale, std::uint64_t accesses, std::mt19937_64& rng) {
  constexpr std::uint64_t words_per_vertex = 64 / sizeof(std::uint32_t);
  const std::uint64_t vertices = std::uint64_t{1} << scale;
  std::vector<std::uint64_t> label(vertices);
  std::iota(label.begin(), label.end(), 0);
  std::shuffle(label.begin(), label.end(), rng);
  std::uniform_real_distribution<double> u(0, 1);
  trace t{"kronecker", {}, 0, vertices * words_per_vertex / words_per_block};
  t.index.reserve(accesses);
  for (std::uint64_t e = 0; e < accesses; ++e) {
    std::uint64_t target = 0;
    for (std::uint32_t level = 0; level < scale; ++level) {
      // Quadrants a (0,0), b (0,1), c (1,0), d (1,1): the target bit is 1 in b and d. The
      // source is not needed: only targets are read.
      const double p = u(rng);
      const bool target_bit = (p >= 0.57 && p < 0.76) || p >= 0.95;
      target = target << 1 | (target_bit ? 1 : 0);
    }
    t.index.push_back(label[target] * words_per_vertex);
  }
  finish(t);
  return t;
}

// Each thread walks the trace positions t, t + threads, ...: the threads of a warp read
// neighbouring trace entries together, as a batched embedding lookup would.
template <class Policy>
struct trace_job {
  cache::array_view<std::uint32_t, Policy> data;
  const std::uint64_t* index;
  std::uint64_t accesses;
  std::uint64_t* sums;  // one per thread, added up on the host
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    std::uint64_t sum = 0;
    std::uint32_t failed = 0;
    for (std::uint64_t i = t; i < accesses; i += threads) {
      std::uint32_t v = 0;
      if (data.get(0, index[i], v).ok()) {
        sum += v;
      } else {
        ++failed;
      }
    }
    sums[t] = sum;
    if (failed != 0) portable::fetch_add<portable::scope::device>(*failures, failed, portable::relaxed);
  }
};

struct run_result {
  cache_counters counters;
  double seconds = 0;
  bool verified = false;
};

struct device_buffers {
  std::uint64_t* index;
  std::uint64_t* sums;
  std::uint32_t* failures;
  std::uint32_t threads;
};

// One (policy, trace, size) point: a warm-up pass fills the cache, the second pass is measured.
template <class Policy>
run_result run_policy(runtime& rt, const trace& tr, const device_buffers& buf, std::size_t cache_bytes) {
  software_cache<Policy> cache(rt, {cache_bytes, block_bytes, 8});
  const trace_job<Policy> job{cache.template array<std::uint32_t>(), buf.index, tr.index.size(), buf.sums,
                              buf.failures};
  const std::uint32_t zero = 0;
  rt.copy_to_device(buf.failures, &zero, sizeof zero);
  time_job(rt, buf.threads, job);
  cache.reset_counters();
  run_result r;
  r.seconds = time_job(rt, buf.threads, job);
  r.counters = cache.counters();
  rt.check();
  std::uint64_t sum = 0;
  for (const std::uint64_t s : to_host(rt, buf.sums, buf.threads)) sum += s;
  const auto failures = to_host(rt, buf.failures, 1);
  r.verified = failures[0] == 0 && sum == tr.checksum;
  return r;
}

}  // namespace

int cache_policies_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const backend want = backend_option(opt);
  // Small sizes for CPU threads (a smoke test) or --quick; 1 GiB of data on the GPU.
  const bool small = opt.flag("quick") || want == backend::cpu;
  const auto blocks = opt.whole<std::uint64_t>("blocks", small ? 1024 : 262144);
  const auto accesses = opt.whole<std::uint64_t>("accesses", small ? 3000 : 1 << 23);
  const double alpha = opt.number("zipf-alpha", 1.05);
  const auto fractions = opt.numbers("percent", "1,5,20");
  const auto traces = opt.list("traces", "zipf,kronecker");
  const auto policies = opt.list("policies", "clock,lfu_da,s3_fifo,direct_mapped");
  const auto seed = opt.whole<std::uint64_t>("seed", 42);
  const std::string out_path = opt.get("out", "results/cache_policies.json");
  const double threads_option = opt.number("threads", 0);  // 0: 65536 on the GPU, 4 CPU threads
  opt.reject_unknown();

  const std::string uri = ram_uri(blocks * block_bytes);
  auto rt = start_runtime(want, uri);
  // Fewer GPU threads contend less for a tiny cache; the default keeps the GPU busy.
  const auto threads = static_cast<std::uint32_t>(threads_option > 0 ? threads_option : on_gpu(*rt) ? 65536 : 4);
  write_pattern(*rt, blocks * block_bytes);

  std::mt19937_64 rng(seed);
  std::vector<trace> plan;
  for (const auto& name : traces) {
    if (name == "zipf") {
      plan.push_back(zipf_trace(blocks, accesses, alpha, rng));
    } else if (name == "kronecker") {
      // The largest graph whose 64-byte vertex features fit in the data.
      const auto scale = static_cast<std::uint32_t>(std::log2(static_cast<double>(blocks * block_bytes / 64)));
      plan.push_back(kronecker_trace(scale, accesses, rng));
    } else {
      throw std::invalid_argument("unknown trace '" + name + "' (zipf, kronecker)");
    }
  }

  device_buffers buf{static_cast<std::uint64_t*>(rt->allocate_device(accesses * sizeof(std::uint64_t))),
                     static_cast<std::uint64_t*>(rt->allocate_device(threads * sizeof(std::uint64_t))),
                     static_cast<std::uint32_t*>(rt->allocate_device(sizeof(std::uint32_t))), threads};
  result_document doc;
  progress bar(plan.size() * fractions.size() * policies.size());
  std::printf("%-10s %-14s %6s %9s %10s %10s %10s %12s %s\n", "trace", "policy", "size", "lines", "miss_ratio",
              "hit_rate", "time_ms", "Maccess/s", "check");
  bool all_verified = true;
  for (const trace& tr : plan) {
    rt->copy_to_device(buf.index, tr.index.data(), tr.index.size() * sizeof(std::uint64_t));
    for (const std::uint64_t pct : fractions) {
      // A share of the data the trace can reach (the Kronecker graph may use a bit less).
      const std::size_t bytes = std::max<std::size_t>(tr.blocks * block_bytes * pct / 100, 8 * block_bytes);
      for (const auto& policy : policies) {
        run_result r;
        if (policy == "clock") {
          r = run_policy<cache::clock>(*rt, tr, buf, bytes);
        } else if (policy == "lfu_da") {
          r = run_policy<cache::lfu_da>(*rt, tr, buf, bytes);
        } else if (policy == "s3_fifo") {
          r = run_policy<cache::s3_fifo>(*rt, tr, buf, bytes);
        } else if (policy == "direct_mapped") {
          r = run_policy<cache::direct_mapped>(*rt, tr, buf, bytes);
        } else {
          throw std::invalid_argument("unknown policy '" + policy + "' (clock, lfu_da, s3_fifo, direct_mapped)");
        }
        bar.step(tr.name + " " + policy + " " + std::to_string(pct) + "%");
        all_verified = all_verified && r.verified;
        const auto lines = static_cast<std::int64_t>(bytes / block_bytes);
        const double miss_ratio = r.counters.miss_ratio(tr.index.size());
        json_object o;
        o.set("trace", tr.name).set("policy", policy).set("cache_percent", static_cast<std::int64_t>(pct));
        o.set("cache_bytes", static_cast<std::int64_t>(bytes))
            .set("ways", std::int64_t{policy == "direct_mapped" ? 1 : 8});
        o.set("miss_ratio", miss_ratio).set("hit_rate", 1 - miss_ratio);
        o.set("hits", static_cast<std::int64_t>(r.counters.hits));
        o.set("misses", static_cast<std::int64_t>(r.counters.misses));
        o.set("hits_on_busy", static_cast<std::int64_t>(r.counters.hits_on_busy));
        o.set("coalesced_in_warp", static_cast<std::int64_t>(r.counters.coalesced_in_warp));
        o.set("evictions", static_cast<std::int64_t>(r.counters.evictions));
        o.set("seconds", r.seconds).set("accesses", static_cast<std::int64_t>(tr.index.size()));
        o.set("verified", r.verified);
        doc.points.push_back(o);
        std::printf("%-10s %-14s %5llu%% %9lld %10.4f %10.4f %10.3f %12.2f %s\n", tr.name.c_str(), policy.c_str(),
                    static_cast<unsigned long long>(pct), static_cast<long long>(lines), miss_ratio, 1 - miss_ratio,
                    r.seconds * 1e3, static_cast<double>(tr.index.size()) / r.seconds / 1e6,
                    r.verified ? "ok" : "FAILED");
      }
    }
  }
  rt->free(buf.index);
  rt->free(buf.sums);
  rt->free(buf.failures);

  doc.set_header("cache_policies", rt->describe(), argc, argv);
  doc.config.set("store", uri).set("store_kind", store_kind(uri));
  doc.config.set("blocks", static_cast<std::int64_t>(blocks)).set("block_bytes", std::int64_t{block_bytes});
  doc.config.set("accesses", static_cast<std::int64_t>(accesses)).set("zipf_alpha", alpha);
  doc.config.set("kronecker", std::string("R-MAT a=0.57 b=0.19 c=0.19, 64-byte vertex features"));
  doc.config.set("threads", std::int64_t{threads}).set("seed", static_cast<std::int64_t>(seed));
  doc.config.set("profile", std::string(small ? "quick" : "full"));
  return finish(doc, *rt, out_path, all_verified, "cache_policies: some runs read wrong data (see 'check')");
}

}  // namespace agio::bench
