// overlap (AGILE Figure 4): how much of the I/O time a block hides behind its computation when
// it reads asynchronously. One block of threads (1024 on the GPU) runs rounds; in each round
// `commands` of its threads read one 4 KiB block each and then every thread computes on the
// round's data. Sync issues a round's reads and waits for them before computing; async issues
// round r + 1's reads once round r's have landed, so they travel while round r is computed. The compute per word is a
// chain of integer multiply-adds whose length sets the computation-to-communication ratio (CTC): compute-only time over
// the time of a round of I/O alone. The paper's Equation 1 gives the ideal speedup, 1 + CTC up to 1 and 1 + 1 / CTC
// above.
//
// Every point checks its data: the sum of every word the threads read is compared with the sum
// of the store's pattern over the same blocks.
#include <algorithm>
#include <barrier>
#include <cstdio>
#include <memory>

#include "agio/portable.hpp"
#include "agio/runtime/launch.hpp"
#include "harness/bench_common.hpp"
#include "harness/controller_time.hpp"
#include "harness/progress.hpp"
#include "overlap/overlap.hpp"

namespace agio::bench {
namespace {

constexpr std::uint32_t words_per_block = block_bytes / sizeof(std::uint32_t);

enum class mode : std::uint32_t { sync, async, compute_only };

// Waits for every thread of the block: __syncthreads on the GPU, a std::barrier on CPU threads.
struct block_barrier {
  std::barrier<>* host = nullptr;
  AGIO_HD void wait() const {
#if defined(__CUDA_ARCH__)
    __syncthreads();
#else
    host->arrive_and_wait();
#endif
  }
};

// The block a round's command reads: scattered over the store, the same in every mode.
AGIO_HD inline std::uint64_t block_of(std::uint64_t round, std::uint32_t command, std::uint32_t commands,
                                      std::uint64_t blocks) {
  return mix64(round * commands + command + 0x5eed) % blocks;
}

template <class IO>
struct overlap_job {
  IO io;
  std::uint32_t* buffers;  // two rounds' data: 2 * commands blocks
  std::uint64_t blocks;    // in the store
  std::uint32_t commands;
  std::uint32_t rounds;
  std::uint32_t steps;  // multiply-adds per word: the computation's length
  mode how;
  block_barrier barrier;
  std::uint64_t* sums;     // per thread: the words it read, added up
  std::uint32_t* results;  // per thread: the computation's result, so it cannot be skipped
  std::uint32_t* failures;
  std::uint64_t* phase_ns;  // per issuing thread: its time issuing, then waiting, summed over rounds

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    const std::uint32_t lbas = block_bytes / io.lba_bytes(0);
    const bool issues = t < commands && how != mode::compute_only;
    transaction pending{};
    std::uint32_t failed = 0;
    std::uint64_t issuing_ns = 0;
    std::uint64_t waiting_ns = 0;
    const auto issue = [&](std::uint32_t round) {
      if (!issues) return;
      const std::uint64_t start = now_ns();
      std::uint32_t* dst = buffers + (std::uint64_t{round % 2} * commands + t) * words_per_block;
      pending = io.async_read(0, block_of(round, t, commands, blocks) * lbas, lbas, dst);
      issuing_ns += now_ns() - start;
    };
    const auto land = [&] {
      if (!issues) return;
      const std::uint64_t start = now_ns();
      if (!io.wait(pending).ok()) ++failed;
      waiting_ns += now_ns() - start;
    };
    std::uint64_t sum = 0;
    std::uint32_t acc = 0;
    if (how == mode::async) issue(0);
    for (std::uint32_t round = 0; round < rounds; ++round) {
      if (how == mode::sync) issue(round);
      land();
      barrier.wait();  // round's data is in its buffer for every thread
      // Async: the next round travels while this one is computed. Issued only once the whole
      // round has landed, so one round is in flight at a time in both modes and the difference
      // is the overlap with computation alone (no two rounds' I/O overlap each other).
      if (how == mode::async && round + 1 < rounds) issue(round + 1);
      const std::uint32_t* data = buffers + std::uint64_t{round % 2} * commands * words_per_block;
      for (std::uint32_t w = t; w < commands * words_per_block; w += threads) {
        std::uint32_t v = data[w];
        sum += v;
        for (std::uint32_t s = 0; s < steps; ++s) v = v * 1664525u + 1013904223u;
        acc ^= v;
      }
      barrier.wait();  // nobody reads this buffer any more: round + 2 may fill it
    }
    sums[t] = sum;
    results[t] = acc;
    if (issues) {
      phase_ns[2 * t] = issuing_ns;
      phase_ns[2 * t + 1] = waiting_ns;
    }
    if (failed != 0) portable::fetch_add<portable::scope::device>(*failures, failed, portable::relaxed);
  }
};

#if defined(__CUDACC__)
template <class Job>
__global__ void __launch_bounds__(1024, 1) one_block_kernel(Job job) {
  job(threadIdx.x, blockDim.x);
}
#endif

struct setup {
  runtime& rt;
  std::uint32_t threads;
  std::uint32_t commands;
  std::uint32_t rounds;
  std::uint64_t blocks;
  std::uint32_t* buffers;
  std::uint64_t* sums;
  std::uint32_t* results;
  std::uint32_t* failures;
  std::uint64_t* phase_ns;
};

struct run_result {
  double seconds = 0;
  double issue_us = 0;  // per round, the slowest issuing thread's time in async_read
  double wait_us = 0;   // per round, the slowest issuing thread's time in wait
  double store_us = 0;  // per command, inside the controller's store
  bool verified = false;
};

// One run of the block in `how` with `steps` per word; I/O runs are checked against `expected`.
run_result run_block(const setup& s, mode how, std::uint32_t steps, std::uint64_t expected) {
  const std::uint32_t zero = 0;
  s.rt.copy_to_device(s.failures, &zero, sizeof zero);
  const std::vector<std::uint64_t> no_time(std::size_t{2} * s.commands);
  s.rt.copy_to_device(s.phase_ns, no_time.data(), no_time.size() * sizeof(std::uint64_t));
  std::barrier<> host_barrier(s.threads);
  const controller_time before = controller_time_sum(s.rt.counters());
  run_result r;
  r.seconds = with_io(s.rt, [&](const auto& io) {
    const overlap_job job{io,  s.buffers,       s.blocks, s.commands, s.rounds,   steps,
                          how, {&host_barrier}, s.sums,   s.results,  s.failures, s.phase_ns};
#if defined(__CUDACC__)
    if (on_gpu(s.rt)) {
      return time_kernel([&](cudaStream_t stream) { one_block_kernel<<<1, s.threads, 0, stream>>>(job); });
    }
#endif
    return run_job(s.rt, s.threads, job);
  });
  s.rt.check();
  const controller_time after = controller_time_sum(s.rt.counters());
  if (after.commands > before.commands) {
    r.store_us = static_cast<double>(after.store_ns - before.store_ns) / 1e3 /
                 static_cast<double>(after.commands - before.commands);
  }
  const auto phases = to_host(s.rt, s.phase_ns, std::size_t{2} * s.commands);
  for (std::uint32_t c = 0; c < s.commands; ++c) {
    r.issue_us = std::max(r.issue_us, static_cast<double>(phases[2 * c]) / 1e3 / s.rounds);
    r.wait_us = std::max(r.wait_us, static_cast<double>(phases[2 * c + 1]) / 1e3 / s.rounds);
  }
  std::uint64_t sum = 0;
  for (const std::uint64_t v : to_host(s.rt, s.sums, s.threads)) sum += v;
  r.verified = to_host(s.rt, s.failures, 1)[0] == 0 && (how == mode::compute_only || sum == expected);
  return r;
}

// Equation 1 of the paper.
double ideal_speedup(double ctc) { return ctc <= 1 ? 1 + ctc : 1 + 1 / ctc; }

}  // namespace

int overlap_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const backend want = backend_option(opt);
  const bool quick = opt.flag("quick");
  const std::string store = opt.get("store", "ram:256M?lba=4096&profile=agile-ssd");
  const auto targets_option = opt.list("ctc", quick ? "0,0.5,1,2" : "0,0.25,0.5,0.75,0.9,1,1.25,1.5,1.75,2");
  const auto reps = opt.whole<std::uint32_t>("reps", quick ? 1 : 3);
  const double rounds_option = opt.number("rounds", 0);
  const std::string completion = opt.get("completion", "service");
  const std::string out_path = opt.get("out", "results/overlap.json");
  runtime_options ro;
  ro.lanes_per_queue = opt.whole<std::uint32_t>("lanes-per-queue", ro.lanes_per_queue);
  ro.wait_together_ns = opt.whole<std::uint32_t>("wait-together-ns", ro.wait_together_ns);
  opt.reject_unknown();
  if (completion != "service" && completion != "waiters") {
    throw std::invalid_argument("--completion is service or waiters");
  }

  ro.backend = want;
  ro.wait_timeout_ms = 120'000;
  ro.completion = completion == "waiters" ? completion_mode::waiters : completion_mode::service;
  runtime rt(ro);
  rt.attach(device_options{store, 4, 256});
  rt.start();
  const bool gpu = on_gpu(rt);
  // The paper's block: 1024 threads, 64 commands per round. CPU threads: a small block.
  const std::uint32_t threads = gpu ? 1024 : 16;
  const std::uint32_t commands = gpu ? 64 : 8;
  const auto rounds = static_cast<std::uint32_t>(rounds_option > 0 ? rounds_option : gpu ? (quick ? 100 : 200) : 20);
  const std::uint64_t blocks = rt.devices()[0].capacity_blocks * rt.devices()[0].lba_bytes / block_bytes;
  if (blocks == 0) throw std::invalid_argument("the store holds no 4 KiB block");
  write_pattern(rt, blocks * block_bytes);
  std::uint64_t expected = 0;
  for (std::uint32_t r = 0; r < rounds; ++r) {
    for (std::uint32_t c = 0; c < commands; ++c) {
      const std::uint64_t first_word = block_of(r, c, commands, blocks) * words_per_block;
      for (std::uint32_t w = 0; w < words_per_block; ++w) expected += pattern_word(first_word + w);
    }
  }

  const setup s{rt,
                threads,
                commands,
                rounds,
                blocks,
                static_cast<std::uint32_t*>(rt.allocate_device(std::size_t{2} * commands * block_bytes)),
                static_cast<std::uint64_t*>(rt.allocate_device(threads * sizeof(std::uint64_t))),
                static_cast<std::uint32_t*>(rt.allocate_device(threads * sizeof(std::uint32_t))),
                static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t))),
                static_cast<std::uint64_t*>(rt.allocate_device(std::size_t{2} * commands * sizeof(std::uint64_t)))};

  // Calibration: a round of I/O alone (sync, no computation), and the computation's cost per
  // step, from which each target CTC gets its number of steps.
  bool all_verified = true;
  std::vector<double> io_alone;
  for (std::uint32_t k = 0; k < 3; ++k) {
    const run_result r = run_block(s, mode::sync, 0, expected);
    all_verified = all_verified && r.verified;
    io_alone.push_back(r.seconds);
  }
  const double io_seconds = median(io_alone);
  // Computation time is a fixed part (barriers, reading the words) plus a part per step: two
  // probes give both, so the longest targets are reached too.
  constexpr std::uint32_t probe_steps = 2048;
  const double fixed_seconds = run_block(s, mode::compute_only, 0, expected).seconds;
  const double per_step =
      std::max((run_block(s, mode::compute_only, probe_steps, expected).seconds - fixed_seconds) / probe_steps, 1e-12);

  result_document doc;
  progress bar(targets_option.size() * reps);
  std::printf("%-8s %6s %6s %10s %8s %8s %7s %6s %8s  %-23s %-23s %s\n", "ctc_goal", "steps", "ctc", "compute_ms",
              "sync_ms", "async_ms", "speedup", "ideal", "of_ideal", "sync issue/wait/store us",
              "async issue/wait/store us", "check");
  for (const auto& target_text : targets_option) {
    const double target = std::stod(target_text);
    const auto steps = static_cast<std::uint32_t>(std::max(0.0, target * io_seconds - fixed_seconds) / per_step + 0.5);
    std::vector<double> compute, sync, async;
    run_result sync_phases, async_phases;  // from the last repetition
    bool verified = true;
    for (std::uint32_t k = 0; k < reps; ++k) {
      const run_result c = run_block(s, mode::compute_only, steps, expected);
      const run_result sy = run_block(s, mode::sync, steps, expected);
      const run_result as = run_block(s, mode::async, steps, expected);
      verified = verified && c.verified && sy.verified && as.verified;
      compute.push_back(c.seconds);
      sync.push_back(sy.seconds);
      async.push_back(as.seconds);
      sync_phases = sy;
      async_phases = as;
      bar.step("ctc " + target_text);
    }
    all_verified = all_verified && verified;
    const double ctc = median(compute) / io_seconds;
    const double speedup = median(sync) / median(async);
    const double ideal = ideal_speedup(ctc);
    json_object o;
    o.set("ctc_target", target).set("steps", static_cast<std::int64_t>(steps)).set("ctc", ctc);
    o.set("compute_seconds", median(compute)).set("sync_seconds", median(sync)).set("async_seconds", median(async));
    o.set("io_seconds", io_seconds).set("speedup", speedup).set("ideal", ideal).set("of_ideal", speedup / ideal);
    o.set("sync_issue_us", sync_phases.issue_us).set("sync_wait_us", sync_phases.wait_us);
    o.set("sync_store_us", sync_phases.store_us).set("async_issue_us", async_phases.issue_us);
    o.set("async_wait_us", async_phases.wait_us).set("async_store_us", async_phases.store_us);
    o.set("verified", verified);
    doc.points.push_back(o);
    std::printf("%-8s %6u %6.3f %10.3f %8.3f %8.3f %7.3f %6.3f %8.3f  %7.1f %7.1f %7.1f %7.1f %7.1f %7.1f  %s\n",
                target_text.c_str(), steps, ctc, median(compute) * 1e3, median(sync) * 1e3, median(async) * 1e3,
                speedup, ideal, speedup / ideal, sync_phases.issue_us, sync_phases.wait_us, sync_phases.store_us,
                async_phases.issue_us, async_phases.wait_us, async_phases.store_us, verified ? "ok" : "FAILED");
  }
  rt.free(s.buffers);
  rt.free(s.sums);
  rt.free(s.results);
  rt.free(s.failures);
  rt.free(s.phase_ns);

  doc.set_header("overlap", rt.describe(), argc, argv);
  doc.config.set("store", store).set("store_kind", store_kind(store));
  doc.config.set("threads", std::int64_t{threads}).set("commands_per_round", std::int64_t{commands});
  doc.config.set("rounds", std::int64_t{rounds}).set("io_seconds", io_seconds).set("completion", completion);
  doc.config.set("lanes_per_queue", std::int64_t{ro.lanes_per_queue})
      .set("wait_together_ns", std::int64_t{ro.wait_together_ns});
  doc.config.set("reps", std::int64_t{reps}).set("profile", std::string(quick ? "quick" : "full"));
  return finish(doc, rt, out_path, all_verified, "overlap: some runs read wrong data (see 'check')");
}

}  // namespace agio::bench
