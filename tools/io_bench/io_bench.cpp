// agio bench io (formerly `agio bench randrw`), a fio-like benchmark: 4 KiB and 64 KiB random
// reads and writes from device threads through agio, swept over outstanding requests and
// devices, each point beside the store's ceiling: a CPU loop with the controller's thread count
// and the same total queue depth, driving the store directly (io_uring for files, memcpy and
// the profile for RAM) into pinned memory.
//
// Compiled by nvcc when CUDA is available (the jobs then run as GPU kernels) and by the host
// compiler otherwise (CPU threads).
#include "io_bench/io_bench.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <thread>
#include <tuple>

#include <fcntl.h>
#include <unistd.h>

#include "agio/portable.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/store/store.hpp"
#include "harness/backend_option.hpp"
#include "harness/controller_time.hpp"
#include "harness/json.hpp"
#include "harness/mix.hpp"
#include "harness/options.hpp"
#include "harness/progress.hpp"
#include "harness/scoped_file.hpp"
#include "harness/timing.hpp"
#include "io_bench/flag_round_trip.hpp"
#include "io_bench/trip_split.hpp"

namespace agio::bench {
namespace {

// Each device thread keeps `batch` requests in flight per round: issue them all, then wait.
// On the GPU only the first `lanes_per_warp` lanes of each warp issue requests (32: all of
// them), so that the cost of many waiting lanes sharing one warp can be told apart. IO is the
// runtime's controller type (--completion).
constexpr std::uint32_t max_batch = 64;

template <class IO>
struct random_io_job {
  IO io;
  std::uint32_t devices;
  std::uint64_t units;        // I/O units per device
  std::uint32_t unit_blocks;  // LBAs per I/O
  std::uint32_t unit_bytes;
  std::byte* buffer;
  std::uint64_t buffer_slots;
  std::uint32_t batch;
  std::uint32_t rounds;
  std::uint32_t write;
  std::uint64_t seed;
  std::uint32_t* failures;
  std::uint32_t lanes_per_warp;
  std::uint32_t requesters;  // threads that issue requests
  // With one request in flight: where the issuing thread's time goes, summed on its own clock
  // (phase_time, trip_split.hpp); null otherwise.
  std::uint64_t* phases;

  AGIO_HD void operator()(std::uint32_t thread, std::uint32_t) const {
    if (thread % 32 >= lanes_per_warp) return;
    const std::uint32_t t = thread / 32 * lanes_per_warp + thread % 32;
    if (t >= requesters) return;
    transaction tx[max_batch];
    std::uint64_t state = mix64(seed ^ (std::uint64_t{t} << 20));
    std::uint64_t submitting_ns = 0, waiting_ns = 0;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      const std::uint64_t submit_start = phases != nullptr ? now_ns() : 0;
      for (std::uint32_t k = 0; k < batch; ++k) {
        state = mix64(state + k + 1);
        const std::uint32_t dev = static_cast<std::uint32_t>(state % devices);
        const std::uint64_t unit = (state >> 8) % units;
        std::byte* slot = buffer + ((std::uint64_t{t} * batch + k) % buffer_slots) * unit_bytes;
        tx[k] = write ? io.async_write(dev, unit * unit_blocks, unit_blocks, slot)
                      : io.async_read(dev, unit * unit_blocks, unit_blocks, slot);
      }
      const std::uint64_t wait_start = phases != nullptr ? now_ns() : 0;
      for (std::uint32_t k = 0; k < batch; ++k) {
        if (!io.wait(tx[k]).ok()) portable::fetch_add<portable::scope::device>(*failures, 1u, portable::relaxed);
      }
      if (phases != nullptr) {
        submitting_ns += wait_start - submit_start;
        waiting_ns += now_ns() - wait_start;
      }
    }
    if (phases != nullptr) {
      portable::fetch_add<portable::scope::device>(phases[0], submitting_ns, portable::relaxed);
      portable::fetch_add<portable::scope::device>(phases[1], waiting_ns, portable::relaxed);
    }
  }
};

struct point {
  double iops = 0;
  double seconds = 0;
  std::uint64_t ops = 0;
  double p50_us = 0;
  double p99_us = 0;
  // Mean time per command inside agio's controller (fetch to completion posted) and in the
  // store: what the device-side latency spends outside them is the queue transport.
  double controller_us = 0;
  double store_us = 0;
  phase_time phases;   // with one request in flight
  io::trip_sums trip;  // over the run, where the runtime keeps trip stamps
};

std::vector<std::uint64_t> latency_sum(const std::vector<device_counters>& counters) {
  std::vector<std::uint64_t> sum;
  for (const auto& d : counters) {
    sum.resize(d.latency_log2_ns.size());
    for (std::size_t k = 0; k < sum.size(); ++k) sum[k] += d.latency_log2_ns[k];
  }
  return sum;
}

double quantile_us(const std::vector<std::uint64_t>& before, const std::vector<std::uint64_t>& after, double q) {
  device_counters diff;
  diff.latency_log2_ns.resize(after.size());
  for (std::size_t k = 0; k < after.size(); ++k)
    diff.latency_log2_ns[k] = after[k] - (k < before.size() ? before[k] : 0);
  return static_cast<double>(diff.latency_quantile_ns(q)) / 1000.0;
}

// One configuration's runtime, reused across the outstanding sweep.
struct agio_setup {
  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
  std::uint64_t slots = 0;
  std::uint32_t* failures = nullptr;
  std::uint64_t* phases = nullptr;  // two sums (phase_time)
  std::uint64_t units = 0;
  std::uint32_t unit_blocks = 0;
};

// `opt`: the options every series shares (backend, completion, controller threads, how lanes
// submit and wait); the series' own are set here.
agio_setup make_setup(const std::vector<std::string>& uris, runtime_options opt, data_mover mover,
                      std::uint32_t io_bytes, std::uint32_t max_outstanding, std::uint32_t queue_pairs,
                      std::uint32_t depth, bool trip_stamps) {
  opt.trip_stamps = trip_stamps;
  opt.mover = mover;
  opt.max_transfer_bytes = std::max<std::uint32_t>(io_bytes, 4096);
  opt.transaction_records = std::max<std::uint32_t>(max_outstanding + 4096,
                                                    4 * queue_pairs * depth * static_cast<std::uint32_t>(uris.size()));
  agio_setup s;
  s.rt = std::make_unique<runtime>(opt);
  for (const auto& u : uris) s.rt->attach(device_options{u, queue_pairs, depth});
  s.rt->start();
  const auto devs = s.rt->devices();
  s.unit_blocks = io_bytes / devs[0].lba_bytes;
  s.units = devs[0].capacity_blocks / s.unit_blocks;
  // One buffer slot per request in flight, up to 1 GiB; beyond that requests share slots.
  s.slots = std::min<std::uint64_t>(max_outstanding, (1ull << 30) / io_bytes);
  s.buffer = static_cast<std::byte*>(s.rt->allocate_device(s.slots * io_bytes));
  s.failures = static_cast<std::uint32_t*>(s.rt->allocate_device(sizeof(std::uint32_t)));
  s.phases = static_cast<std::uint64_t*>(s.rt->allocate_device(2 * sizeof(std::uint64_t)));
  return s;
}

point run_agio(agio_setup& s, std::uint32_t devices, std::uint32_t io_bytes, std::uint64_t outstanding, bool write,
               double target_seconds, std::uint32_t lanes_per_warp) {
  runtime& rt = *s.rt;
  const bool gpu = rt.backend() == backend::gpu;
  // On the GPU every request in flight is a thread of its own; CPU threads each keep a batch.
  const std::uint32_t threads = gpu ? static_cast<std::uint32_t>(outstanding)
                                    : static_cast<std::uint32_t>(std::min<std::uint64_t>(outstanding, 16));
  const std::uint32_t batch =
      static_cast<std::uint32_t>(std::min<std::uint64_t>(max_batch, (outstanding + threads - 1) / threads));
  const std::uint32_t lanes = gpu ? std::clamp<std::uint32_t>(lanes_per_warp, 1, 32) : 32;
  return with_io(rt, [&](const auto& io) {
    random_io_job job{io, devices,         s.units, s.unit_blocks, io_bytes, s.buffer, s.slots, batch,
                      1,  write ? 1u : 0u, 12345,   s.failures,    lanes,    threads,  nullptr};
    const std::uint32_t launched = gpu ? (threads + lanes - 1) / lanes * 32 : threads;
    // Calibrate with a short run, then size the measured run to the target time.
    const double per_round = run_job(rt, launched, job);
    job.rounds = static_cast<std::uint32_t>(std::clamp(target_seconds / std::max(per_round, 1e-6), 1.0, 100000.0));
    job.seed = 777 + outstanding;
    const bool one_in_flight = threads == 1 && batch == 1;
    if (one_in_flight) {
      const std::uint64_t zero[2] = {0, 0};
      rt.copy_to_device(s.phases, zero, sizeof zero);
      job.phases = s.phases;
    }
    const std::vector<device_counters> counters_before = rt.counters();
    const auto before = latency_sum(counters_before);
    const controller_time time_before = controller_time_sum(counters_before);
    point p;
    p.seconds = run_job(rt, launched, job);
    const std::vector<device_counters> counters_after = rt.counters();
    const auto after = latency_sum(counters_after);
    const controller_time time_after = controller_time_sum(counters_after);
    if (const std::uint64_t commands = time_after.commands - time_before.commands; commands != 0) {
      p.controller_us = static_cast<double>(time_after.controller_ns - time_before.controller_ns) / 1e3 / commands;
      p.store_us = static_cast<double>(time_after.store_ns - time_before.store_ns) / 1e3 / commands;
    }
    p.ops = std::uint64_t{threads} * batch * job.rounds;
    p.iops = static_cast<double>(p.ops) / p.seconds;
    p.p50_us = quantile_us(before, after, 0.5);
    p.p99_us = quantile_us(before, after, 0.99);
    if (one_in_flight) {
      std::uint64_t sums[2] = {0, 0};
      rt.copy_to_host(sums, s.phases, sizeof sums);
      p.phases = {static_cast<double>(sums[0]) / 1e3 / p.ops, static_cast<double>(sums[1]) / 1e3 / p.ops};
    }
    p.trip = trip_sums_between(counters_before, counters_after);
    std::uint32_t failures = 0;
    rt.copy_to_host(&failures, s.failures, sizeof failures);
    rt.check();
    if (failures != 0) throw std::runtime_error("io bench: " + std::to_string(failures) + " requests failed");
    return p;
  });
}

// The store's own ceiling: `threads` host threads, each with its own channel holding
// outstanding / threads requests, random offsets, into pinned memory.
point run_ceiling(const std::vector<std::unique_ptr<store>>& stores, std::uint32_t io_bytes, std::uint64_t outstanding,
                  bool write, unsigned threads, double seconds, const host_memory& memory) {
  threads = static_cast<unsigned>(std::min<std::uint64_t>(threads, outstanding));
  const std::uint32_t depth = static_cast<std::uint32_t>(std::max<std::uint64_t>(1, outstanding / threads));
  // Requests share buffer slots beyond this many per thread; the data is not looked at.
  const std::uint32_t slots = std::min<std::uint32_t>(depth, 256);
  std::atomic<std::uint64_t> total{0};
  std::atomic<unsigned> ready{0};
  std::atomic<std::int64_t> start_ns{0};
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      std::vector<std::unique_ptr<store_channel>> channels;
      for (auto& s : stores) channels.push_back(s->open_channel(depth));
      auto* buf = static_cast<std::byte*>(memory.allocate(std::size_t{slots} * io_bytes));
      std::mt19937_64 rng(t + 99);
      std::vector<store_result> results(depth);
      std::uint64_t done = 0;
      std::vector<std::uint32_t> inflight(channels.size(), 0);
      std::uint32_t next_slot = 0;
      // Every thread starts measuring together, once all have set up.
      if (ready.fetch_add(1) + 1 == threads) {
        start_ns = std::chrono::steady_clock::now().time_since_epoch().count();
      }
      while (start_ns.load() == 0) std::this_thread::yield();
      const auto stop_at =
          std::chrono::steady_clock::time_point(std::chrono::steady_clock::duration(start_ns.load())) +
          std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(seconds));
      while (std::chrono::steady_clock::now() < stop_at) {
        for (std::size_t c = 0; c < channels.size(); ++c) {
          // The thread's `depth` requests spread over its channels, exactly `depth` in all.
          const std::uint32_t share =
              static_cast<std::uint32_t>(depth / channels.size() + (c < depth % channels.size() ? 1 : 0));
          while (inflight[c] < share) {
            const std::uint64_t units = stores[c]->capacity_bytes() / io_bytes;
            const store_io io{write ? store_op::write : store_op::read, (rng() % units) * io_bytes, io_bytes,
                              buf + std::size_t{next_slot++ % slots} * io_bytes, 0};
            if (!channels[c]->submit(io)) break;
            ++inflight[c];
          }
          channels[c]->push();
          const std::size_t n = channels[c]->reap(results);
          for (std::size_t i = 0; i < n; ++i) {
            if (results[i].result != io_bytes) throw std::runtime_error("ceiling loop: store I/O failed");
          }
          inflight[c] -= static_cast<std::uint32_t>(n);
          done += n;
        }
      }
      for (std::size_t c = 0; c < channels.size(); ++c) {
        while (channels[c]->in_flight() != 0) {
          channels[c]->push();
          inflight[c] -= static_cast<std::uint32_t>(channels[c]->reap(results));
        }
      }
      total += done;
      channels.clear();
      memory.release(buf);
    });
  }
  for (auto& th : pool) th.join();
  point p;
  p.seconds = seconds;
  p.ops = total.load();
  p.iops = static_cast<double>(p.ops) / p.seconds;
  return p;
}

// Pinned copy bandwidth between host and device: host-to-device is the ceiling for moving reads
// into GPU memory, device-to-host the one for moving writes out of it.
double pinned_copy_gbps(runtime& rt, bool to_device) {
#if defined(__CUDACC__)
  if (rt.backend() != backend::gpu) return 0;
  const cudaMemcpyKind kind = to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
  const std::size_t bytes = 256u << 20;
  void* host = rt.allocate_host(bytes);
  void* dev = rt.allocate_device(bytes);
  const cuda_stream stream;
  const cudaStream_t s = stream.get();
  void* dst = to_device ? dev : host;
  const void* src = to_device ? host : dev;
  cudaMemcpyAsync(dst, src, bytes, kind, s);
  cudaStreamSynchronize(s);
  constexpr int reps = 8;
  const double secs = wall_seconds([&] {
    for (int i = 0; i < reps; ++i) cudaMemcpyAsync(dst, src, bytes, kind, s);
    throw_on_cuda_error(cudaStreamSynchronize(s), "pinned copy");
  });
  rt.free(host);
  rt.free(dev);
  return static_cast<double>(bytes) * reps / secs / 1e9;
#else
  (void)rt;
  (void)to_device;
  return 0;
#endif
}

// "512B", "4KiB": an I/O size for labels.
std::string size_label(std::uint32_t bytes) {
  return bytes % 1024 == 0 ? std::to_string(bytes / 1024) + "KiB" : std::to_string(bytes) + "B";
}

// Writes a file store in full once, so that reads hit the disk rather than holes.
void fill_file(const std::string& path, std::uint64_t bytes) {
  if (std::filesystem::exists(path) && std::filesystem::file_size(path) >= bytes) return;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  std::vector<char> chunk(1 << 20);
  std::mt19937_64 rng(5);
  for (std::uint64_t done = 0; done < bytes; done += chunk.size()) {
    for (std::size_t i = 0; i < chunk.size(); i += 8) {
      const std::uint64_t x = rng();
      std::memcpy(chunk.data() + i, &x, 8);
    }
    out.write(chunk.data(), static_cast<std::streamsize>(std::min<std::uint64_t>(chunk.size(), bytes - done)));
  }
  out.close();
  if (!out) throw std::runtime_error("io bench: cannot write " + path);
  // Dirty page-cache pages would make the O_DIRECT reads that follow wait for write-back.
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) throw std::runtime_error("io bench: cannot fsync " + path);
  ::close(fd);
}

struct series {
  std::string name;  // e.g. "ram", "file", "ram-profile"
  std::string kind;  // what the store is, for labels: emulation or real I/O
  std::vector<std::string> uris;
  data_mover mover;
  std::uint32_t io_bytes;
  bool write;
  std::vector<std::uint64_t> outstanding;
  bool with_ceiling;
  bool trip_stamps = false;  // the runtime keeps trip stamps: the trip is split leg by leg
};

const char* mover_name(data_mover m) { return m == data_mover::gpu_warps ? "gpu_warps" : "copy_engine"; }

// A point with one request in flight: what agio adds to the store's own time, set against the
// flag round trip, and where the trip goes: the issuing thread's two phases, and leg by leg
// where the runtime kept trip stamps (trip_split.hpp).
void report_one_in_flight(json_object& o, const point& q, double flag_us, const std::optional<trip_legs>& legs) {
  const double trip_us = q.phases.submission_us + q.phases.waiting_us;
  const double added_us = trip_us - q.store_us;
  o.set("trip_us", trip_us).set("added_us", added_us).set("added_over_flag", added_us / flag_us);
  o.set("submission_us", q.phases.submission_us).set("waiting_us", q.phases.waiting_us);
  std::printf(
      "    trip %.2f us: submission %.2f, waiting %.2f; added to the store %.2f us = %.1fx the flag round trip\n",
      trip_us, q.phases.submission_us, q.phases.waiting_us, added_us, added_us / flag_us);
  if (!legs) return;
  const trip_legs& l = *legs;
  o.set("to_controller_us", l.to_controller_us).set("in_controller_us", l.in_controller_us);
  o.set("to_retirer_us", l.to_retirer_us).set("retiring_us", l.retiring_us).set("to_waiter_us", l.to_waiter_us);
  o.set("clock_offset_error_us", l.offset_error_us);
  std::printf(
      "    legs (us): submission %.2f | to controller %.2f | controller %.2f (store %.2f) | to retirer %.2f | "
      "retiring (copy) %.2f | to waiter %.2f; crossed legs +-%.2f\n",
      l.submission_us, l.to_controller_us, l.in_controller_us, l.store_us, l.to_retirer_us, l.retiring_us,
      l.to_waiter_us, l.offset_error_us);
}

}  // namespace

int io_bench_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const bool full = opt.flag("full");
  if (opt.flag("quick") && full) throw std::invalid_argument("--quick and --full: pick one");
  const std::string out_path = opt.get("out", "results/randrw.json");
  const double seconds = opt.number("seconds", full ? 0.4 : 0.25);
  // The file: store's file: one of the caller's, kept; or a temporary one, removed at the end.
  const bool own_file = !opt.has("file");
  const std::string file_path = opt.get(
      "file",
      (std::filesystem::temp_directory_path() / ("agio-io-bench-" + std::to_string(::getpid()) + ".bin")).string());
  const std::uint64_t file_bytes = static_cast<std::uint64_t>(opt.number("file-gib", full ? 4 : 1) * (1ull << 30));
  const std::uint64_t ram_bytes = static_cast<std::uint64_t>(opt.number("ram-gib", 1) * (1ull << 30));
  const auto experiments = opt.list("experiments", "ram,file,devices,movers");
  const backend want = backend_option(opt);
  // "waiters": no completion service; waiting threads retire completions (BaM's model).
  // "on_demand": the service runs only while a job does (launched with each one).
  const completion_mode completion = completion_option(opt);
  // Queue pairs in all (shared among the devices of a series): the completion service runs one
  // warp per queue pair, so they also set how many warps retire completions and copy data.
  const std::uint32_t queue_pairs = opt.whole<std::uint32_t>("queue-pairs", 64);
  const std::uint32_t depth = opt.whole<std::uint32_t>("queue-depth", 128);
  const unsigned ctl_threads = opt.whole<unsigned>("controller-threads", 8);
  // GPU lanes per warp that issue requests (32: every lane; 1: one request thread per warp).
  const auto lanes_per_warp = opt.whole<std::uint32_t>("lanes-per-warp", 32);
  // runtime_options::lanes_per_queue, wait_together_ns, controller_copy_depth and
  // service_staging_bytes.
  runtime_options base;
  base.lanes_per_queue = opt.whole<std::uint32_t>("lanes-per-queue", base.lanes_per_queue);
  base.wait_together_ns = opt.whole<std::uint32_t>("wait-together-ns", base.wait_together_ns);
  base.controller_copy_depth = opt.whole<std::uint32_t>("controller-copy-depth", base.controller_copy_depth);
  base.service_staging_bytes = opt.whole<std::uint32_t>("service-staging-bytes", base.service_staging_bytes);
  base.backend = want;
  base.completion = completion;
  base.controller_threads = ctl_threads;
  base.wait_timeout_ms = 120'000;
  base.submit_timeout_ms = 120'000;
  // One point of the sweep, for a harness that compares against it (python -m agio.bench):
  // requests in flight, I/O sizes (ram and movers) and directions; empty: every one.
  const auto outstanding_pinned = opt.numbers("outstanding", "");
  const auto io_bytes_list = opt.numbers("io-bytes", "4096,65536");
  const auto ops = opt.list("ops", "read,write");
  opt.reject_unknown();
  if (!(seconds > 0)) throw std::invalid_argument("--seconds must be positive");
  if (ram_bytes < (1u << 20)) throw std::invalid_argument("--ram-gib is at least 1 MiB (0.001)");
  if (file_bytes < (1u << 20)) throw std::invalid_argument("--file-gib is at least 1 MiB (0.001)");
  if (queue_pairs == 0) throw std::invalid_argument("--queue-pairs must be positive");
  // Also the threads of the store's ceiling, which share its requests among them.
  if (ctl_threads == 0) throw std::invalid_argument("--controller-threads must be positive");
  if (depth < 2 || depth > 4096) throw std::invalid_argument("--queue-depth is 2 to 4096");
  if (lanes_per_warp == 0 || lanes_per_warp > 32) throw std::invalid_argument("--lanes-per-warp is 1 to 32");
  for (const std::uint64_t n : outstanding_pinned) {
    if (n == 0 || n > (1u << 20)) throw std::invalid_argument("--outstanding values are 1 to 1048576");
  }
  std::vector<std::uint32_t> io_sizes;
  for (const std::uint64_t n : io_bytes_list) {
    if (n < 512 || n > (2u << 20) || n % 512 != 0)
      throw std::invalid_argument("--io-bytes values are multiples of 512 up to 2 MiB");
    io_sizes.push_back(static_cast<std::uint32_t>(n));
  }
  std::vector<bool> directions;  // write or not
  for (const auto& op : ops) {
    if (op != "read" && op != "write") throw std::invalid_argument("--ops: 'read' or 'write', not '" + op + "'");
    directions.push_back(op == "write");
  }

  // Sizes that are not whole 4 KiB blocks go to a store of 512-byte LBAs.
  const auto ram_for = [&](std::uint32_t io_size) {
    return "ram:" + std::to_string(ram_bytes >> 20) + "M?lba=" + (io_size % 4096 == 0 ? "4096" : "512");
  };
  const std::string ram = ram_for(4096);
  const std::string file = "file:" + file_path + "?lba=4096";
  const std::string profile = "ram:" + std::to_string(std::min<std::uint64_t>(ram_bytes, 512ull << 20) >> 20) +
                              "M?lba=4096&read_gbps=3.7&write_gbps=2.2";
  const std::vector<std::uint64_t> sweep_full{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144};
  const std::vector<std::uint64_t> sweep_quick{1, 16, 256, 4096, 16384};
  const auto& sweep = !outstanding_pinned.empty() ? outstanding_pinned : full ? sweep_full : sweep_quick;
  const std::vector<std::uint64_t> file_sweep =
      !outstanding_pinned.empty() ? outstanding_pinned : std::vector<std::uint64_t>{1, 4, 16, 64, 128, 256, 1024};

  std::vector<series> plan;
  for (const auto& e : experiments) {
    if (e == "ram") {
      for (const std::uint32_t size : io_sizes)
        for (const bool w : directions)
          plan.push_back({"ram",
                          "ram: store (pinned host RAM, no profile)",
                          {ram_for(size)},
                          data_mover::gpu_warps,
                          size,
                          w,
                          sweep,
                          true});
    } else if (e == "movers") {
      for (const std::uint32_t size : io_sizes)
        for (const bool w : directions)
          plan.push_back({"ram-copy_engine",
                          "ram: store, copy-engine mover",
                          {ram_for(size)},
                          data_mover::copy_engine,
                          size,
                          w,
                          sweep,
                          false});
    } else if (e == "file") {
      for (const bool w : directions)
        plan.push_back({"file",
                        "file: store on the machine's disk (real I/O)",
                        {file},
                        data_mover::gpu_warps,
                        4096,
                        w,
                        file_sweep,
                        true});
    } else if (e == "devices") {
      for (std::uint32_t n = 1; n <= 4; ++n) {
        std::vector<std::string> uris(n, profile);
        for (const bool w : directions)
          plan.push_back({"profile-x" + std::to_string(n),
                          "ram: stores emulating a 3.7 GB/s read / 2.2 GB/s write SSD",
                          uris,
                          data_mover::gpu_warps,
                          4096,
                          w,
                          {std::uint64_t{4096} * n},
                          true});
      }
    } else if (e == "trip") {
      // One request in flight, split leg by leg, on a ram: store and on the file: store.
      for (const bool w : directions) {
        for (const auto& [name, store_kind, uri] :
             {std::tuple{"trip-ram", "ram: store (pinned host RAM, no profile)", ram},
              std::tuple{"trip-file", "file: store on the machine's disk (real I/O)", file}}) {
          plan.push_back({name, store_kind, {uri}, data_mover::gpu_warps, 4096, w, {1}, true, true});
        }
      }
    } else {
      throw std::invalid_argument("--experiments: unknown experiment '" + e + "' (ram, file, devices, movers, trip)");
    }
  }
  std::optional<scoped_file> temporary;
  const auto asked = [&](const char* e) {
    return std::find(experiments.begin(), experiments.end(), e) != experiments.end();
  };
  if (asked("file") || asked("trip")) {
    std::fprintf(stderr, "preparing %s (%.1f GiB, %s)...\n", file_path.c_str(),
                 static_cast<double>(file_bytes) / (1ull << 30),
                 own_file ? "removed at the end; --file PATH keeps one" : "kept");
    if (own_file) temporary.emplace(file_path);
    fill_file(file_path, file_bytes);
  }

  std::size_t total_points = 0;
  for (const auto& s : plan) total_points += s.outstanding.size() * (s.with_ceiling ? 2 : 1);
  progress bar(total_points);
  result_document doc;
  std::string description;
  double h2d = 0;
  double d2h = 0;
  flag_round_trip flag;

  for (const auto& s : plan) {
    const std::uint64_t max_out = *std::max_element(s.outstanding.begin(), s.outstanding.end());
    agio_setup setup = make_setup(s.uris, base, s.mover, s.io_bytes, static_cast<std::uint32_t>(max_out),
                                  std::max<std::uint32_t>(1, queue_pairs / static_cast<std::uint32_t>(s.uris.size())),
                                  depth, s.trip_stamps);
    if (description.empty()) {
      description = setup.rt->describe();
      h2d = pinned_copy_gbps(*setup.rt, true);
      d2h = pinned_copy_gbps(*setup.rt, false);
      // CPU threads pass the flag through the scheduler when the controller's threads
      // outnumber the cores: fewer trips there.
      flag = measure_flag_round_trip(*setup.rt, setup.rt->backend() == backend::gpu ? 20000 : 200);
    }
    const std::uint32_t clock_trips = setup.rt->backend() == backend::gpu ? 2000 : 100;
    host_memory memory{[&setup](std::size_t n) { return setup.rt->allocate_host(n); },
                       [&setup](void* p) { setup.rt->free(p); }};
    // The ceiling drives its own instances of the same stores, opened once per series.
    std::vector<std::unique_ptr<store>> ceiling_stores;
    if (s.with_ceiling) {
      for (const auto& u : s.uris) ceiling_stores.push_back(open_store(u, memory));
    }
    for (std::uint64_t outstanding : s.outstanding) {
      const std::string label =
          s.name + (s.write ? " write " : " read ") + size_label(s.io_bytes) + " out=" + std::to_string(outstanding);
      // The clocks' offset is taken on either side of the run: how far it drifts meanwhile
      // counts against the crossed legs.
      std::optional<flag_round_trip> clocks_before;
      if (s.trip_stamps) clocks_before = measure_flag_round_trip(*setup.rt, clock_trips);
      const point p = run_agio(setup, static_cast<std::uint32_t>(s.uris.size()), s.io_bytes, outstanding, s.write,
                               seconds, lanes_per_warp);
      std::optional<trip_legs> legs;
      if (s.trip_stamps) {
        const flag_round_trip clocks = clocks_across(*clocks_before, measure_flag_round_trip(*setup.rt, clock_trips));
        legs = split_trip(p.phases, p.store_us, p.trip, clocks);
      }
      bar.step(label);
      const auto emit = [&](const char* system, const point& q) {
        json_object o;
        o.set("series", s.name).set("store", s.kind).set("system", std::string(system));
        o.set("mover", std::string(mover_name(s.mover))).set("op", std::string(s.write ? "write" : "read"));
        o.set("io_bytes", std::int64_t{s.io_bytes}).set("devices", static_cast<std::int64_t>(s.uris.size()));
        o.set("outstanding", static_cast<std::int64_t>(outstanding)).set("iops", q.iops);
        o.set("gbps", q.iops * s.io_bytes / 1e9).set("seconds", q.seconds).set("ops", static_cast<std::int64_t>(q.ops));
        if (q.p50_us > 0) o.set("p50_us", q.p50_us).set("p99_us", q.p99_us);
        if (q.controller_us > 0) o.set("controller_us", q.controller_us).set("store_us", q.store_us);
        std::printf("%-18s %-5s %6s dev=%zu out=%-7llu %-14s %10.0f IOPS %7.2f GB/s", s.name.c_str(),
                    s.write ? "write" : "read", size_label(s.io_bytes).c_str(), s.uris.size(),
                    static_cast<unsigned long long>(outstanding), system, q.iops, q.iops * s.io_bytes / 1e9);
        if (q.controller_us > 0) std::printf("  (controller %.1f us, store %.1f us)", q.controller_us, q.store_us);
        std::printf("\n");
        if (q.phases.waiting_us > 0) report_one_in_flight(o, q, flag.round_trip_us, legs);
        doc.points.push_back(o);
      };
      emit("agio", p);
      if (s.with_ceiling) {
        const point c = run_ceiling(ceiling_stores, s.io_bytes, outstanding, s.write, ctl_threads, seconds, memory);
        bar.step(label + " ceiling");
        emit("cpu-ceiling", c);
      }
    }
    ceiling_stores.clear();
    setup.rt->stop();
  }

  doc.set_header("randrw", description, argc, argv);
  doc.config.set("profile", std::string(full ? "full" : "quick")).set("seconds_per_point", seconds);
  doc.config.set("queue_pairs", std::int64_t{queue_pairs}).set("queue_depth", std::int64_t{depth});
  doc.config.set("controller_threads", std::int64_t{ctl_threads}).set("lanes_per_warp", std::int64_t{lanes_per_warp});
  doc.config.set("lanes_per_queue", std::int64_t{base.lanes_per_queue})
      .set("wait_together_ns", std::int64_t{base.wait_together_ns})
      .set("controller_copy_depth", std::int64_t{base.controller_copy_depth})
      .set("service_staging_bytes", std::int64_t{base.service_staging_bytes});
  doc.config.set("file", file).set("ram", ram);
  doc.config.set("completion", completion_name(completion));
  doc.config.set("profile_store", profile).set("h2d_copy_gbps", h2d).set("d2h_copy_gbps", d2h);
  doc.config.set("flag_round_trip_us", flag.round_trip_us);
  doc.save(out_path);
  std::printf(
      "device: %s\npinned copies: host-to-device %.1f GB/s, device-to-host %.1f GB/s\n"
      "flag round trip (device -> host -> device through pinned memory): %.2f us\nresults: %s\n",
      description.c_str(), h2d, d2h, flag.round_trip_us, out_path.c_str());
  return 0;
}

}  // namespace agio::bench
