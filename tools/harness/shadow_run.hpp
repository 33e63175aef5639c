#pragma once
// Drives the shadow job (shadow_job.hpp) through phases over one store file: each phase opens a
// fresh runtime and cache on the file, with the phase's faults in its URI, runs rounds of the
// job (each followed by a flush), checks that no line is left pinned, BUSY or CLEANING, stops
// the runtime, and then reads the file back through a fresh runtime without faults:
//   - after a flush that succeeded, storage holds exactly the newest acknowledged values;
//   - after one that threw, each word holds a value written since the last successful flush
//     (values grow per word, so: last flushed <= stored <= newest, with the word's own tag);
// and what storage holds becomes the model of the next phase. The last phase injects no write
// faults, so its flush must succeed and the file must end exactly as the model says. Used by
// the CPU and GPU suites and by `agio soak`; include it from a .cu file on the GPU backend.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "agio/runtime/software_cache.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/chunk_job.hpp"
#include "harness/shadow_job.hpp"

namespace agio::bench {

struct shadow_faults {
  double rate = 0;             // fault=random@: each read and write fails with this probability
  double read_rate = 0;        // fault=random_read@: reads fail with this probability besides
  bool failing_block = false;  // fault=eio@ on the last shared block: its every read fails
  std::uint64_t seed = 1;
};

struct shadow_config {
  shadow_shape shape;                      // ops_per_thread is per round
  std::vector<std::uint32_t> cache_lines;  // lines of each phase's cache, taken in turn
  std::uint32_t ways = 4;
  std::uint32_t host_tier_lines = 0;  // lines of the host tier below the cache, in runs that have one
  std::uint32_t share_slots = 16;
  std::uint32_t phases = 1;  // runtimes opened on the file one after another
  std::uint32_t rounds = 1;  // job runs per phase, each followed by a flush
  shadow_faults faults;
  std::uint32_t hurry_every = 0;  // 1 in hurry_every operations gets the short deadline
  std::uint64_t hurried_ns = 0;   // the short deadline
  std::string path;               // the store file, created or overwritten
  runtime_options options;
  std::uint32_t queue_pairs = 2;
  std::uint32_t queue_depth = 16;
  std::uint32_t verify_threads = 4;  // threads that read the file back between phases
};

struct shadow_report {
  shadow_tally tally{};
  std::uint64_t words_compared = 0;   // stored words checked against the model between phases
  std::uint64_t wrong_values = 0;     // wrong reads, unexpected statuses, words storage made up
  std::uint64_t lost_writes = 0;      // stored words older than what was acknowledged and flushed
  std::uint64_t injected_faults = 0;  // commands the store failed
  std::uint64_t surfaced_faults = 0;  // fills and write-backs the cache counted as failed
  std::uint64_t flushes = 0;
  std::uint64_t failed_flushes = 0;  // flushes that threw io_error
  std::uint64_t stuck_lines = 0;     // lines with live pins, BUSY or CLEANING after a round
  cache_counters counters{};
  cache_counters host_tier_counters{};  // in runs with a host tier
  std::string first_problem;
  double seconds = 0;

  bool clean() const {
    return wrong_values == 0 && lost_writes == 0 && stuck_lines == 0 && injected_faults == surfaced_faults;
  }
  void problem(const std::string& what) {
    if (first_problem.empty()) first_problem = what;
  }
};

namespace shadow_detail {

inline std::string fault_uri(const shadow_config& config, std::uint32_t phase, bool last) {
  std::string uri = "file:" + config.path + "?lba=512";
  const shadow_faults& f = config.faults;
  const std::uint32_t lbas = shadow_shape::line_bytes / 512;
  if (f.failing_block) uri += "&fault=eio@" + std::to_string((config.shape.shared_blocks - 1) * lbas);
  const std::string seed = std::to_string(f.seed * 1000 + phase);
  if (f.rate > 0 && !last) uri += "&fault=random@" + std::to_string(f.rate) + ":" + seed;
  if (f.read_rate > 0) uri += "&fault=random_read@" + std::to_string(f.read_rate) + ":" + seed;
  return uri;
}

// The file holds every word's stamp-0 value before the first phase.
inline void write_initial_file(const shadow_config& config, std::vector<std::uint32_t>& model) {
  for (std::uint64_t w = 0; w < model.size(); ++w) model[w] = shadow_value(w, 0);
  std::ofstream out(config.path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(model.data()), static_cast<std::streamsize>(model.size() * 4));
  if (!out) throw std::runtime_error("shadow: cannot write " + config.path);
}

// The file's words, read through a fresh runtime without faults.
inline std::vector<std::uint32_t> read_back(const shadow_config& config, std::uint64_t words) {
  runtime rt(config.options);
  rt.attach(device_options{"file:" + config.path + "?lba=512", config.queue_pairs, config.queue_depth});
  rt.start();
  const std::uint64_t bytes = words * 4;
  auto* data = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(4));
  const std::uint32_t none = 0;
  rt.copy_to_device(failures, &none, 4);
  with_io(rt, [&](const auto& io) {
    run_job(rt, config.verify_threads,
            chunk_job{io, 0, 0, data, shadow_shape::line_bytes, static_cast<std::uint32_t>(config.shape.blocks()),
                      failures});
  });
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, 4);
  std::vector<std::uint32_t> stored(words);
  rt.copy_to_host(stored.data(), data, bytes);
  rt.free(data);
  rt.free(failures);
  rt.stop();
  if (failed != 0)
    throw std::runtime_error("shadow: " + std::to_string(failed) + " reads of the file failed without faults");
  return stored;
}

// Storage against the model: `flushed` is what the last successful flush wrote (or what storage
// held before the phase), `newest` what was acknowledged since; `exact` when the phase's last
// flush succeeded. Storage becomes the next phase's model.
inline void compare(shadow_report& report, const std::vector<std::uint32_t>& stored,
                    std::vector<std::uint32_t>& flushed, std::vector<std::uint32_t>& newest, bool exact) {
  for (std::uint64_t w = 0; w < stored.size(); ++w) {
    const std::uint32_t s = stored[w];
    const bool own_tag = s == shadow_value(w, s >> 8);
    const std::string where = "storage word " + std::to_string(w) + " (block " +
                              std::to_string(w / shadow_shape::words_per_block) + ") holds " + std::to_string(s) + ", ";
    if (!own_tag || s > newest[w]) {
      ++report.wrong_values;
      report.problem(where + "no write stored that (newest acknowledged: " + std::to_string(newest[w]) + ")");
    } else if (s < flushed[w] || (exact && s != newest[w])) {
      ++report.lost_writes;
      report.problem(where + "acknowledged and flushed: " + std::to_string(exact ? newest[w] : flushed[w]));
    }
    newest[w] = s;
    flushed[w] = s;
  }
  report.words_compared += stored.size();
}

// Lines a finished round left pinned, BUSY or CLEANING.
inline std::uint64_t stuck_lines(const cache_audit& a) { return std::uint64_t{a.live_pins} + a.busy + a.cleaning; }

// When waiters retire completions, the completions nobody waits for any more (see below) wait
// for the next waiter of their device: this job is one.
template <class IO>
struct retire_pending_job {
  IO io;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const { io.help_retire(0); }
};

// Lines still pinned, BUSY or CLEANING once the I/O that the job left behind has landed: the
// fills of requesters that gave up and of prefetches may still be in flight when the job ends,
// so a line counts as stuck only if it stays so for `patience`.
template <class Cache, class IO>
std::uint64_t lines_stuck_after(runtime& rt, const Cache& cache, const IO& io, std::chrono::milliseconds patience) {
  const auto give_up = std::chrono::steady_clock::now() + patience;
  for (;;) {
    const std::uint64_t stuck = stuck_lines(cache.audit());
    if (stuck == 0 || std::chrono::steady_clock::now() > give_up) return stuck;
    if constexpr (IO::waiters_retire) run_job(rt, 1, retire_pending_job<IO>{io});
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

inline std::uint64_t store_errors(const runtime& rt) {
  std::uint64_t errors = 0;
  for (const device_counters& d : rt.counters()) errors += d.errors;
  return errors;
}

// A phase's device memory: the model, each thread's buffer, the first failure and the tallies.
struct phase_memory {
  std::uint32_t* truth = nullptr;
  std::uint32_t* buffers = nullptr;
  shadow_failure* failure = nullptr;
  shadow_tally* tallies = nullptr;
};

// The model and counts a phase carries from round to round.
struct phase_progress {
  std::uint32_t& first_stamp;
  std::vector<std::uint32_t>& flushed;
  std::vector<std::uint32_t>& newest;
  shadow_report& report;
};

// The cache of a phase: with `Admission` void, over the stores; else over a host tier of
// config.host_tier_lines lines (the same policy, in pinned host memory) that admits blocks so.
template <class Policy, class Shares, class IO, class Admission>
struct phase_caches;
template <class Policy, class Shares, class IO>
struct phase_caches<Policy, Shares, IO, void> {
  software_cache<Policy, cache::no_lock_chain, Shares, IO> cache;
  phase_caches(runtime& rt, const shadow_config&, const cache_options& options) : cache(rt, options) {}
  cache_counters host_tier_counters() const { return {}; }
};
template <class Policy, class Shares, class IO, class Admission>
struct phase_caches {
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> tier;
  software_cache<Policy, cache::no_lock_chain, Shares, cache::tiered_io<Policy, Admission, IO>> cache;
  phase_caches(runtime& rt, const shadow_config& config, const cache_options& options)
      : tier(rt, tier_options(config, options)), cache(rt, tier, options) {}
  static cache_options tier_options(const shadow_config& config, cache_options options) {
    options.bytes = std::size_t{config.host_tier_lines} * options.line_bytes;
    options.memory = cache_memory::host;
    return options;
  }
  cache_counters host_tier_counters() const { return tier.counters(); }
};

// A phase's rounds through a cache on the started runtime `rt`, whose I/O handle is `io`.
// Returns whether the last flush succeeded. Its own template, one per I/O handle type, because
// each instantiation compiles the shadow job into a kernel, which takes nvcc minutes:
// shadow_runs.hpp names the instantiations compiled once, in translation units of their own.
// With `Admission` not void, the cache is above a host tier (phase_caches).
template <class Policy, class Shares, class IO, class Admission = void>
bool run_rounds(runtime& rt, const IO& io, const shadow_config& config, std::uint32_t phase, const phase_memory& m,
                const phase_progress& p) {
  const shadow_shape& shape = config.shape;
  constexpr std::uint32_t line_bytes = shadow_shape::line_bytes;
  const std::uint64_t model_bytes = p.newest.size() * 4;
  const std::uint32_t lines = config.cache_lines[phase % config.cache_lines.size()];
  phase_caches<Policy, Shares, IO, Admission> caches(
      rt, config, {std::size_t{lines} * line_bytes, line_bytes, config.ways, config.share_slots});
  auto& cache = caches.cache;
  using cache_io = typename std::decay_t<decltype(cache)>::handle::io_type;
  auto hurried = cache.device();
  hurried.wait_timeout_ns = config.hurried_ns;
  const std::uint64_t block = shape.shared_blocks - 1;
  shadow_report& report = p.report;
  bool flushed_last = false;
  for (std::uint32_t round = 0; round < config.rounds; ++round) {
    const shadow_failure none{};
    rt.copy_to_device(m.failure, &none, sizeof none);
    run_job(rt, shape.threads,
            shadow_job<Policy, Shares, cache_io>{cache.device(), hurried, config.hurry_every, shape, p.first_stamp,
                                                 config.faults.failing_block ? block : no_block, m.truth, m.buffers,
                                                 m.failure, m.tallies});
    p.first_stamp += static_cast<std::uint32_t>(shape.ops_per_thread);
    shadow_failure first{};
    rt.copy_to_host(&first, m.failure, sizeof first);
    std::vector<shadow_tally> t(shape.threads);
    rt.copy_to_host(t.data(), m.tallies, t.size() * sizeof(shadow_tally));
    for (const shadow_tally& one : t) report.tally += one;
    rt.copy_to_host(p.newest.data(), m.truth, model_bytes);
    const std::string where = "phase " + std::to_string(phase) + ", round " + std::to_string(round) + ": ";
    if (first.count != 0) {
      report.wrong_values += first.count;
      report.problem(where + first.describe());
    }
    std::uint64_t stuck = lines_stuck_after(rt, cache, io, std::chrono::seconds(5));
    if constexpr (!std::is_void_v<Admission>) stuck += lines_stuck_after(rt, caches.tier, io, std::chrono::seconds(5));
    if (stuck != 0) {
      report.stuck_lines += stuck;
      report.problem(where + std::to_string(stuck) + " lines left pinned, BUSY or CLEANING");
    }
    ++report.flushes;
    try {
      cache.flush();
      p.flushed = p.newest;
      flushed_last = true;
      std::uint32_t unwritten = cache.audit().modified + cache.audit().failed;
      if constexpr (!std::is_void_v<Admission>) unwritten += caches.tier.audit().modified + caches.tier.audit().failed;
      if (unwritten != 0) {
        report.stuck_lines += unwritten;
        report.problem(where + "a flush succeeded but left lines MODIFIED or FAILED");
      }
    } catch (const io_error&) {
      ++report.failed_flushes;
      flushed_last = false;
    }
  }
  const cache_counters c = cache.counters();
  const cache_counters below = caches.host_tier_counters();
  report.counters += c;
  report.host_tier_counters += below;
  report.surfaced_faults += c.fill_failures + c.write_back_failures + below.fill_failures + below.write_back_failures;
  report.injected_faults += store_errors(rt);
  return flushed_last;
}

// One phase: a runtime on the file with the phase's faults, its rounds, and the runtime's stop.
// Returns whether the phase's last flush succeeded.
template <class Policy, class Shares, class Admission>
bool run_phase(const shadow_config& config, std::uint32_t phase, const phase_progress& p) {
  const bool last = phase + 1 == config.phases;
  runtime rt(config.options);
  rt.attach(device_options{fault_uri(config, phase, last), config.queue_pairs, config.queue_depth});
  rt.start();
  const std::uint64_t model_bytes = p.newest.size() * 4;
  const std::uint32_t threads = config.shape.threads;
  phase_memory m;
  m.truth = static_cast<std::uint32_t*>(rt.allocate_device(model_bytes));
  m.buffers = static_cast<std::uint32_t*>(rt.allocate_device(std::size_t{threads} * shadow_shape::line_bytes));
  m.failure = static_cast<shadow_failure*>(rt.allocate_device(sizeof(shadow_failure)));
  m.tallies = static_cast<shadow_tally*>(rt.allocate_device(threads * sizeof(shadow_tally)));
  rt.copy_to_device(m.truth, p.newest.data(), model_bytes);
  const bool flushed_last = with_io(rt, [&](const auto& io) {
    return run_rounds<Policy, Shares, std::decay_t<decltype(io)>, Admission>(rt, io, config, phase, m, p);
  });
  rt.free(m.truth);
  rt.free(m.buffers);
  rt.free(m.failure);
  rt.free(m.tallies);
  try {
    rt.stop();
  } catch (const io_error&) {
    // The requests that failed were counted above; what reached the file is checked next.
  }
  return flushed_last;
}

}  // namespace shadow_detail

// Runs the phases; the report says what went wrong (shadow_report::clean() when nothing did).
// With `Admission` not void, the cache is above a host tier of config.host_tier_lines lines
// that admits blocks by that policy (cache/host_tier.hpp).
template <class Policy, class Shares = cache::no_share_table, class Admission = void>
shadow_report run_shadow(const shadow_config& config) {
  if (config.cache_lines.empty() || config.phases == 0 || config.rounds == 0) {
    throw std::invalid_argument("shadow: needs cache sizes, phases and rounds");
  }
  if (!std::is_void_v<Admission> && config.host_tier_lines == 0) {
    throw std::invalid_argument("shadow: a run above a host tier needs host_tier_lines");
  }
  if (config.shape.threads == 0 || config.shape.shared_slots() == 0 || config.shape.private_blocks_per_thread == 0) {
    throw std::invalid_argument("shadow: every thread needs a word of the shared blocks and a private block");
  }
  const std::uint64_t stamps = std::uint64_t{config.phases} * config.rounds * config.shape.ops_per_thread;
  if (stamps >= (std::uint64_t{1} << shadow_stamp_bits)) {
    throw std::invalid_argument("shadow: " + std::to_string(stamps) + " operations per thread exceed the " +
                                std::to_string(shadow_stamp_bits) + "-bit write stamps; use more threads");
  }
  const auto start = std::chrono::steady_clock::now();
  shadow_report report;
  std::vector<std::uint32_t> newest(config.shape.blocks() * shadow_shape::words_per_block);
  shadow_detail::write_initial_file(config, newest);
  std::vector<std::uint32_t> flushed = newest;
  std::uint32_t first_stamp = 0;
  for (std::uint32_t phase = 0; phase < config.phases; ++phase) {
    const bool exact =
        shadow_detail::run_phase<Policy, Shares, Admission>(config, phase, {first_stamp, flushed, newest, report});
    shadow_detail::compare(report, shadow_detail::read_back(config, newest.size()), flushed, newest, exact);
    if (report.wrong_values != 0 || report.lost_writes != 0) break;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return report;
}

}  // namespace agio::bench
