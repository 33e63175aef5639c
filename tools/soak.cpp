// `agio soak`: mixed operations (element, whole-block, partial, share-table and prefetch
// accesses, flushes) from many GPU or CPU threads through a small and a large cache, against
// the shadow model, with injected store faults, short deadlines and stop/restart cycles. It
// prints and writes (JSON) the operations verified, wrong values and lost acknowledged writes
// (both must be 0), and the faults the store injected beside those the cache surfaced; the exit
// status is non-zero when any check failed.
#include "soak.hpp"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <unistd.h>

#include "agio/cache/policies/lfu_da.hpp"
#include "harness/backend_option.hpp"
#include "harness/json.hpp"
#include "harness/options.hpp"
#include "harness/scoped_file.hpp"
#include "harness/shadow_runs.hpp"

namespace agio::tools {
namespace {

struct soak_settings {
  bool gpu = false;
  std::uint64_t ops = 0;  // per run
  double seconds = 0;     // runs repeat until this much time has passed
  std::uint32_t threads = 0;
  bool faults = true;
  std::uint32_t cycles = 0;
  std::string json;
  std::string directory;  // where each run's store file goes
};

// One run: `cycles` runtimes on one file, caches small and large by turns, two rounds each.
// Odd runs go through a share table.
bench::shadow_config run_config(const soak_settings& s, const runtime_options& options, std::uint32_t run) {
  bench::shadow_config c;
  c.options = options;
  c.options.completion = run % 4 == 2 ? completion_mode::waiters : completion_mode::service;
  c.phases = s.cycles;
  c.rounds = 2;
  c.shape.threads = s.threads;
  const std::uint64_t per_round = std::uint64_t{s.threads} * c.phases * c.rounds;
  c.shape.ops_per_thread = std::max<std::uint64_t>(1, (s.ops + per_round - 1) / per_round);
  // Every thread owns at least one word of the shared blocks.
  c.shape.shared_blocks = std::max<std::uint64_t>(
      16, (s.threads + bench::shadow_shape::words_per_block - 1) / bench::shadow_shape::words_per_block);
  c.shape.private_blocks_per_thread = s.gpu ? 2 : 6;
  const std::uint64_t blocks = c.shape.blocks();
  // Small: a sixteenth of the blocks (two sets at least), so most accesses miss or wait on a
  // fill; large: every block fits.
  const std::uint32_t ways = 8;
  const auto small = static_cast<std::uint32_t>(std::max<std::uint64_t>(ways * 2, blocks / 16 / ways * ways));
  const auto large = static_cast<std::uint32_t>((blocks + ways - 1) / ways * ways);
  c.cache_lines = {small, large};
  c.ways = ways;
  c.share_slots = s.gpu ? 1024 : 16;
  c.queue_pairs = s.gpu ? 8 : 2;
  c.queue_depth = s.gpu ? 256 : 16;
  c.verify_threads = s.gpu ? 512 : 4;
  c.path = (std::filesystem::path(s.directory) /
            ("agio-soak-" + std::to_string(::getpid()) + "-" + std::to_string(run) + ".bin"))
               .string();
  if (s.faults) {
    c.faults.failing_block = true;
    c.faults.rate = s.gpu ? 0.00002 : 0.0005;
    c.faults.read_rate = s.gpu ? 0.0005 : 0.005;
    c.faults.seed = 1 + run;
    c.hurry_every = 32;
    c.hurried_ns = s.gpu ? 2'000 : 20'000;
  }
  return c;
}

bench::shadow_report run_once(const bench::shadow_config& c, std::uint32_t run) {
  using policy = cache::lfu_da;
  // The run's store file goes whether the run passes, fails or throws.
  const bench::scoped_file cleanup{c.path};
  return run % 2 == 1 ? bench::run_shadow<policy, cache::share_table>(c)
                      : bench::run_shadow<policy, cache::no_share_table>(c);
}

bench::json_object describe(const bench::shadow_report& r) {
  bench::json_object o;
  const auto n = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  o.set("verified_operations", n(r.tally.operations()))
      .set("reads_checked", n(r.tally.reads_checked))
      .set("writes_acknowledged", n(r.tally.writes_acknowledged))
      .set("prefetches", n(r.tally.prefetches))
      .set("store_errors", n(r.tally.store_errors))
      .set("timeouts", n(r.tally.timeouts))
      .set("stored_words_compared", n(r.words_compared))
      .set("wrong_values", n(r.wrong_values))
      .set("lost_writes", n(r.lost_writes))
      .set("injected_faults", n(r.injected_faults))
      .set("faults_surfaced", n(r.surfaced_faults))
      .set("stuck_lines", n(r.stuck_lines))
      .set("flushes", n(r.flushes))
      .set("failed_flushes", n(r.failed_flushes))
      .set("fill_failures", n(r.counters.fill_failures))
      .set("write_back_failures", n(r.counters.write_back_failures))
      .set("evictions", n(r.counters.evictions))
      .set("write_backs", n(r.counters.write_backs))
      .set("seconds", r.seconds);
  if (!r.first_problem.empty()) o.set("first_problem", r.first_problem);
  return o;
}

}  // namespace

int soak_main(int argc, char** argv, int first) {
  bench::options opt(argc, argv, first);
  runtime_options options;
  options.backend = bench::backend_option(opt);
  options.max_transfer_bytes = 64 * 1024;
  options.wait_timeout_ms = 60'000;
  std::string device;
  {
    const runtime probe(options);
    options.backend = probe.backend();
    device = probe.describe();
  }
  soak_settings s;
  s.gpu = options.backend == backend::gpu;
  // --quick: a tenth of the operations and two cycles, a check that takes seconds.
  const bool quick = opt.flag("quick");
  s.ops = opt.whole<std::uint64_t>("ops", static_cast<std::uint64_t>((s.gpu ? 1e8 : 1e6) / (quick ? 10 : 1)));
  s.seconds = opt.number("seconds", 0);
  s.threads = opt.whole<std::uint32_t>("threads", s.gpu ? 8192 : 8);
  const std::string faults = opt.get("faults", "on");
  if (faults != "on" && faults != "off") throw std::invalid_argument("--faults must be on or off");
  s.faults = faults == "on";
  s.cycles = opt.whole<std::uint32_t>("cycles", quick ? 2 : 4);
  s.json = opt.get("json", "");
  s.directory = opt.get("dir", std::filesystem::temp_directory_path().string());
  opt.reject_unknown();
  if (s.threads == 0 || s.cycles == 0 || s.ops == 0)
    throw std::invalid_argument("--threads, --cycles and --ops must be positive");

  std::printf(
      "soak on %s: %u threads, %llu operations per run, %u stop/restart cycles, faults %s\n"
      "store files: %s/agio-soak-%d-*.bin, each removed when its run ends\n",
      device.c_str(), s.threads, static_cast<unsigned long long>(s.ops), s.cycles, s.faults ? "on" : "off",
      s.directory.c_str(), static_cast<int>(::getpid()));
  bench::result_document doc;
  doc.set_header("soak", device, argc, argv);
  doc.config.set("threads", static_cast<std::int64_t>(s.threads))
      .set("ops_per_run", static_cast<std::int64_t>(s.ops))
      .set("cycles", static_cast<std::int64_t>(s.cycles))
      .set("faults", s.faults)
      .set("seconds", s.seconds);
  bench::shadow_report total;
  bool clean = true;
  std::uint32_t run = 0;
  do {
    const bench::shadow_config c = run_config(s, options, run);
    const bench::shadow_report r = run_once(c, run);
    std::printf(
        "run %u (%s, %s): %llu operations verified in %.1f s, %llu wrong values, %llu lost writes, "
        "%llu/%llu faults surfaced, %llu store errors, %llu timeouts, %llu of %llu flushes failed\n",
        run, c.options.completion == completion_mode::waiters ? "waiters retire" : "completion service",
        run % 2 == 1 ? "share table" : "no share table", static_cast<unsigned long long>(r.tally.operations()),
        r.seconds, static_cast<unsigned long long>(r.wrong_values), static_cast<unsigned long long>(r.lost_writes),
        static_cast<unsigned long long>(r.surfaced_faults), static_cast<unsigned long long>(r.injected_faults),
        static_cast<unsigned long long>(r.tally.store_errors), static_cast<unsigned long long>(r.tally.timeouts),
        static_cast<unsigned long long>(r.failed_flushes), static_cast<unsigned long long>(r.flushes));
    if (!r.clean()) std::printf("  first problem: %s\n", r.first_problem.c_str());
    doc.points.push_back(describe(r).set("run", static_cast<std::int64_t>(run)));
    clean = clean && r.clean();
    total.tally += r.tally;
    total.counters += r.counters;
    total.words_compared += r.words_compared;
    total.wrong_values += r.wrong_values;
    total.lost_writes += r.lost_writes;
    total.injected_faults += r.injected_faults;
    total.surfaced_faults += r.surfaced_faults;
    total.stuck_lines += r.stuck_lines;
    total.flushes += r.flushes;
    total.failed_flushes += r.failed_flushes;
    total.seconds += r.seconds;
    if (total.first_problem.empty()) total.first_problem = r.first_problem;
    ++run;
  } while (clean && total.seconds < s.seconds);

  const double rate = total.seconds > 0 ? static_cast<double>(total.tally.operations()) / total.seconds : 0;
  std::printf(
      "soak %s: %llu operations verified in %.1f s (%.3g per second), %llu wrong values, %llu lost writes, "
      "%llu injected faults, %llu surfaced\n",
      clean ? "passed" : "FAILED", static_cast<unsigned long long>(total.tally.operations()), total.seconds, rate,
      static_cast<unsigned long long>(total.wrong_values), static_cast<unsigned long long>(total.lost_writes),
      static_cast<unsigned long long>(total.injected_faults), static_cast<unsigned long long>(total.surfaced_faults));
  if (!s.json.empty()) {
    bench::json_object summary = describe(total);
    summary.set("runs", static_cast<std::int64_t>(run)).set("passed", clean).set("device", device);
    summary.set("commit", bench::source_commit());
    doc.points.insert(doc.points.begin(), summary.set("run", std::string("all")));
    doc.save(s.json);
  }
  return clean ? 0 : 1;
}

}  // namespace agio::tools
