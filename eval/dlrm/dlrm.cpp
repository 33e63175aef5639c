// dlrm (AGILE §4.4, Figures 7-10): DLRM inference with the embedding tables on storage. Each
// batch gathers its samples' embedding rows, then runs the bottom MLP, the interaction and the
// top MLP (cuBLAS on the GPU). The rows come, per mode:
//   hbm:          from the tables in GPU memory: the reference every other mode must match,
//                 and the time the workload takes when nothing is on storage;
//   async:        through agio's cache; batch b + 1's blocks are prefetched (on a second stream)
//                 while batch b computes, and the gather waits late;
//   sync:         through agio's cache, each miss read and waited for in the gather;
//   bam_style:    sync, in the re-creation of BaM's design (baselines/io_model.hpp);
//   cpu_pipeline: host threads read each batch's blocks into pinned memory, the GPU copies them
//                 in, double-buffered against compute (cpu_pipeline.hpp): no agio at all;
//   cufile:       cuFile's batch API reads each batch's blocks from file: stores straight into
//                 GPU memory, double-buffered against compute (baselines/cufile_reader.hpp): no
//                 agio either; asked for with --modes, never run by default;
//   async_host_tier, sync_host_tier: async and sync with a host tier of --host-tier-mib below
//                 the cache (three tiers: cache/host_tier.hpp), empty at the start too; asked
//                 for with --modes; async_host_tier_direct, sync_host_tier_direct: the same, a
//                 row the GPU cache misses and the tier holds read where it lies in the tier
//                 (embedding.hpp, tier_direct_rows) rather than its line copied up;
//   managed, managed_prefetched, managed_prefetched_capped: the tables in CUDA managed memory
//                 (baselines/managed_memory.hpp) in host memory, the gather reading rows where
//                 they lie; or moved back to host memory before each run and prefetched to the
//                 GPU in it, the move timed; or the same with the GPU memory left to managed
//                 memory held to the cache's size. No agio; asked for with --modes.
// Every mode starts from an empty cache and runs the same batches (with --warm, the async and sync
// modes, tiered or not, and managed memory read in host memory run them once untimed first: the
// steady state of a serving system); every output is compared with the hbm run's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "baselines/cufile_reader.hpp"
#include "baselines/double_buffer.hpp"
#include "baselines/io_model.hpp"
#include "baselines/managed_memory.hpp"
#include "dlrm/batch_plan.hpp"
#include "dlrm/cpu_pipeline.hpp"
#include "workloads/criteo.hpp"
#include "dlrm/dlrm.hpp"
#include "dlrm/embedding.hpp"
#include "dlrm/network.hpp"
#include "harness/bench_common.hpp"
#include "harness/progress.hpp"
#include "harness/registers.hpp"
#if defined(__CUDACC__)
#include "dlrm/cublas_ops.hpp"
#endif

namespace agio::bench {
namespace {

using namespace dlrm;
using policy = cache::clock;  // the paper keeps clock for every mode
// The cache of an I/O model: its controller type carries that model's retirement code only.
template <class IO>
using cache_for = software_cache<policy, cache::no_lock_chain, cache::no_share_table, IO>;
template <class IO>
using handle_for = typename cache_for<IO>::handle;
// The cache above a host tier (three tiers: GPU memory, pinned host memory, the stores).
template <class Admission>
using tiered_cache =
    software_cache<policy, cache::no_lock_chain, cache::no_share_table, cache::tiered_io<policy, Admission, io_handle>>;

// --- Where jobs and network run: two streams on the GPU, the calling thread on the CPU -------

class executor {
 public:
  explicit executor(runtime& rt) : rt_(rt) {
#if defined(__CUDACC__)
    if (on_gpu(rt)) {
      streams_ = std::make_unique<stream_pair>();
      ops_ = std::make_unique<cublas_ops>(streams_->compute());
      return;
    }
#endif
    ops_ = std::make_unique<host_ops>();
  }
  executor(const executor&) = delete;
  executor& operator=(const executor&) = delete;

  tensor_ops& ops() { return *ops_; }

  // Runs the network once on zeros, before the runtime starts: cuBLAS loads a kernel when it
  // first runs it, and loading one waits for every running kernel, which the completion
  // service's never stops being.
  void warm_up([[maybe_unused]] const network_shape& s, [[maybe_unused]] std::uint32_t n) {
#if defined(__CUDACC__)
    if (!gpu()) return;
    std::vector<void*> held;
    const auto zeros = [&](std::size_t floats) {
      void* p = nullptr;
      throw_on_cuda_error(cudaMalloc(&p, std::max<std::size_t>(1, floats) * sizeof(float)), "cudaMalloc (warm-up)");
      cudaMemset(p, 0, std::max<std::size_t>(1, floats) * sizeof(float));
      held.push_back(p);
      return static_cast<float*>(p);
    };
    std::vector<const float*> layers;
    for (const auto& l : s.bottom) layers.push_back(zeros(std::size_t{l.in} * l.out + l.out));
    for (const auto& l : s.top) layers.push_back(zeros(std::size_t{l.in} * l.out + l.out));
    const forward_buffers b{&layers,
                            zeros(std::size_t{n} * s.vectors() * s.dim),
                            zeros(std::size_t{n} * s.vectors() * s.vectors()),
                            zeros(std::size_t{s.top_input()} * n),
                            zeros(std::size_t{s.widest()} * n),
                            zeros(std::size_t{s.widest()} * n)};
    forward(*ops_, s, b, zeros(std::size_t{s.dense} * n), n, zeros(n));
    const cudaError_t ran = cudaStreamSynchronize(streams_->compute());
    for (void* p : held) cudaFree(p);
    throw_on_cuda_error(ran, "warming cuBLAS up");
#endif
  }
  bool gpu() const { return on_gpu(rt_); }
  // Threads for a job over `items`: one per item on the GPU (whole warps), a few on the CPU.
  std::uint32_t threads_for(std::uint32_t items) const {
    return gpu() ? (items + 31) / 32 * 32 : std::min<std::uint32_t>(items, 8);
  }

  // Runs `job` after the compute stream's earlier work.
  template <class Job>
  void compute(std::uint32_t items, const Job& job) {
    launch(items, job, false);
  }
  // Runs `job` on the I/O stream, after what the compute stream has queued so far, so it
  // overlaps the compute stream's later work.
  template <class Job>
  void io(std::uint32_t items, const Job& job) {
    launch(items, job, true);
  }
#if defined(__CUDACC__)
  cudaStream_t compute_stream() const { return streams_->compute(); }
#endif

  // Seconds from the start of `body` until everything it queued on both streams has finished.
  template <class Body>
  double timed(Body&& body) {
#if defined(__CUDACC__)
    if (gpu()) return streams_->timed(body, "DLRM batches");
#endif
    return wall_seconds(body);
  }

 private:
  template <class Job>
  void launch(std::uint32_t items, const Job& job, [[maybe_unused]] bool on_io) {
    const std::uint32_t threads = threads_for(items);
    if (threads == 0) return;
#if defined(__CUDACC__)
    if (gpu()) {
      launch_job(rt_, threads, job, on_io ? streams_->io_after_compute() : streams_->compute());
      return;
    }
#endif
    run_job(rt_, threads, job);
  }

  runtime& rt_;
#if defined(__CUDACC__)
  std::unique_ptr<stream_pair> streams_;  // declared before ops_: the cuBLAS handle goes first
#endif
  std::unique_ptr<tensor_ops> ops_;
};

// --- The workload ----------------------------------------------------------------------------

struct settings {
  std::vector<std::string> stores;  // the tables are striped over them (embedding.hpp)
  data_mover bam_mover;
  std::uint32_t dim, bottom_width, top_width, batches, queue_pairs, queue_depth, reps;
  std::uint64_t cache_bytes;
  std::uint64_t host_tier_bytes;       // the host tier of the *_host_tier modes
  std::uint32_t host_tier_latency_ns;  // added to each of its accesses (emulated CXL)
  std::string host_tier_admission;     // "always", "on_reuse" or "on_eviction" (cache/host_tier.hpp)
  bool warm;                           // async and sync modes timed after an untimed run
  double alpha;
  std::uint64_t seed;
  std::string criteo_file;
  std::vector<std::string> modes;
  bool wants(const std::string& mode) const { return std::find(modes.begin(), modes.end(), mode) != modes.end(); }
};

// The modes that read the tables from CUDA managed memory (run_managed).
constexpr const char* managed_modes[] = {"managed", "managed_prefetched", "managed_prefetched_capped"};

// The batches' inputs on the host: dense features (13 per sample) and lookups (26 per sample).
struct batch_inputs {
  std::uint32_t batch = 0, batches = 0;
  std::vector<float> dense;
  std::vector<std::uint32_t> indices;
};

batch_inputs make_inputs(const settings& s, const std::vector<std::uint32_t>& vocab, std::uint32_t batch) {
  batch_inputs in;
  in.batch = batch;
  in.batches = s.batches;
  std::vector<criteo::sample> samples(std::size_t{batch} * s.batches);
  if (!s.criteo_file.empty()) {
    criteo::tsv_loader loader(s.criteo_file, vocab);
    const std::size_t got = loader.read(samples);
    if (got < samples.size()) {
      throw std::invalid_argument("dlrm: " + s.criteo_file + " holds " + std::to_string(got) + " samples, " +
                                  std::to_string(samples.size()) + " needed (--batches x --batch)");
    }
  } else {
    criteo::generator gen(vocab, s.alpha, s.seed);
    gen.fill(samples);
  }
  for (const criteo::sample& x : samples) {
    in.dense.insert(in.dense.end(), x.dense.begin(), x.dense.end());
    in.indices.insert(in.indices.end(), x.sparse.begin(), x.sparse.end());
  }
  return in;
}

// Device copies of a point's inputs, weights and buffers, freed with it.
struct device_point {
  runtime& rt;
  network_shape shape;
  std::uint32_t batch, batches, lookups;  // lookups per batch
  std::vector<void*> owned;
  std::vector<const float*> layers;
  float* dense = nullptr;
  std::uint32_t* indices = nullptr;
  std::uint64_t* first_block = nullptr;
  std::uint64_t* zero_first_block = nullptr;  // the CPU pipeline's slots start at block 0
  float* outputs = nullptr;                   // batches x batch probabilities
  std::uint32_t* failures = nullptr;
  forward_buffers buffers{};

  device_point(runtime& r, const network_shape& s, const table_layout& layout, const batch_inputs& in,
               std::uint64_t seed)
      : rt(r), shape(s), batch(in.batch), batches(in.batches), lookups(in.batch * s.tables) {
    for (const auto& w : network_weights(s, seed)) layers.push_back(keep(to_device(rt, w)));
    dense = keep(to_device(rt, in.dense));
    indices = keep(to_device(rt, in.indices));
    first_block = keep(to_device(rt, layout.first_block));
    zero_first_block = keep(to_device(rt, std::vector<std::uint64_t>(s.tables, 0)));
    outputs = alloc<float>(std::size_t{batches} * batch);
    failures = alloc<std::uint32_t>(1);
    buffers = {&layers,
               alloc<float>(std::size_t{batch} * s.vectors() * s.dim),
               alloc<float>(std::size_t{batch} * s.vectors() * s.vectors()),
               alloc<float>(std::size_t{s.top_input()} * batch),
               alloc<float>(std::size_t{s.widest()} * batch),
               alloc<float>(std::size_t{s.widest()} * batch)};
  }
  ~device_point() {
    for (void* p : owned) rt.free(p);
  }
  device_point(const device_point&) = delete;
  device_point& operator=(const device_point&) = delete;

  lookup_map map(std::uint32_t b, const table_layout& layout) const {
    return {first_block, indices + std::size_t{b} * lookups, shape.tables, layout.dim, layout.rows_per_block};
  }
  void clear_failures() {
    const std::uint32_t zero = 0;
    rt.copy_to_device(failures, &zero, sizeof zero);
  }
  std::uint32_t failed() const { return to_host(rt, failures, 1)[0]; }
  std::vector<float> probabilities() const { return to_host(rt, outputs, std::size_t{batches} * batch); }

 private:
  template <class T>
  T* keep(T* p) {
    owned.push_back(const_cast<std::remove_const_t<T>*>(p));
    return p;
  }
  template <class T>
  T* alloc(std::size_t n) {
    return keep(static_cast<T*>(rt.allocate_device(std::max<std::size_t>(1, n) * sizeof(T))));
  }
};

// Runs every batch: the gather of its rows through `rows`, then the network. `after_gather(b)`
// runs once batch b's gather is queued (the async mode prefetches batch b + 1 there); `start`,
// timed with the batches, before them.
template <class Rows, class AfterGather>
double run_batches(executor& ex, device_point& p, const table_layout& layout, const Rows& rows,
                   AfterGather&& after_gather, const std::function<void()>& start = {}) {
  p.clear_failures();
  return ex.timed([&] {
    if (start) start();
    for (std::uint32_t b = 0; b < p.batches; ++b) {
      ex.compute(p.lookups, gather_job<Rows>{rows, p.map(b, layout), p.lookups, p.buffers.t, p.failures});
      after_gather(b);
      forward(ex.ops(), p.shape, p.buffers, p.dense + std::size_t{b} * p.batch * p.shape.dense, p.batch,
              p.outputs + std::size_t{b} * p.batch);
    }
  });
}

struct mode_run {
  double seconds = 0;
  std::vector<float> probabilities;
  std::uint32_t failures = 0;
  double hit_rate = -1;
  double host_tier_hit_rate = -1;
  std::int64_t tier_direct_reads = -1;  // the *_host_tier_direct modes: rows read in the tier
};

// A run that took `seconds`, with what it left in `p`: its failures and its outputs.
mode_run finished_run(const device_point& p, double seconds) {
  mode_run r;
  r.seconds = seconds;
  r.failures = p.failed();
  r.probabilities = p.probabilities();
  return r;
}

// One run of an agio mode through `cache`, empty at the start (`warm`: after an untimed run),
// reading rows through `rows` and prefetching (async) with the jobs `prefetch_of(map)` makes.
template <class Cache, class Rows, class PrefetchOf>
mode_run run_rows(executor& ex, runtime& rt, device_point& p, const table_layout& layout, io_model model, Cache& cache,
                  const Rows& rows, PrefetchOf&& prefetch_of, bool warm) {
  // Async: batch b + 1's blocks are prefetched on the I/O stream once batch b's rows are
  // gathered, so they travel while batch b computes. (Batch 0 has nothing to hide behind.) A
  // batch whose lookups could fill more than half the cache is not prefetched: its prefetched
  // lines would evict each other before use, each eviction a read done twice: prefetching
  // regardless, async ran at 0.21x, 0.71x and 0.70x sync's speed with 1, 16 and 128 MiB caches
  // (configuration 1, batch 2048, H100, 2026-11-22). Such batches run as in sync.
  const bool batch_fits = std::uint64_t{p.lookups} * 2 <= cache.line_count();
  const auto prefetch = [&](std::uint32_t b) {
    if (model != io_model::async || !batch_fits || b + 1 >= p.batches) return;
    ex.io(p.lookups, prefetch_of(p.map(b + 1, layout)));
  };
  // Warm: the batches once untimed first, so that the timed run starts from what the stream
  // left in the caches (a serving system's steady state) rather than from empty caches.
  if (warm) run_batches(ex, p, layout, rows, prefetch);
  const double seconds = run_batches(ex, p, layout, rows, prefetch);
  rt.check();
  mode_run r = finished_run(p, seconds);
  r.hit_rate = cache.counters().hit_rate();
  return r;
}

// The same with every row through the cache (cached_rows, prefetch_job).
template <class Cache>
mode_run run_through(executor& ex, runtime& rt, device_point& p, const table_layout& layout, io_model model,
                     Cache& cache, bool warm) {
  using handle = typename Cache::handle;
  const striping stripes{static_cast<std::uint32_t>(rt.devices().size())};
  return run_rows(
      ex, rt, p, layout, model, cache, cached_rows<handle>{cache.device(), stripes},
      [&](const lookup_map& map) {
        return prefetch_job<handle>{cache.device(), stripes, map, p.lookups, p.failures};
      },
      warm);
}

// From an empty cache of `cache_bytes`; IO is waiting_io_handle for the BaM-style model,
// controller otherwise.
template <class IO>
mode_run run_agio(executor& ex, runtime& rt, device_point& p, const table_layout& layout, io_model model,
                  std::uint64_t cache_bytes, bool warm = false) {
  cache_for<IO> cache(rt, cache_options{cache_bytes, block_bytes, 8});
  return run_through(ex, rt, p, layout, model, cache, warm);
}

// The same above an empty host tier of `s.host_tier_bytes`, admitting blocks by `Admission`;
// `direct`: rows the GPU cache misses and the tier holds read in the tier (tier_direct_rows).
template <class Admission>
mode_run run_agio_above_host_tier(executor& ex, runtime& rt, device_point& p, const table_layout& layout,
                                  io_model model, std::uint64_t cache_bytes, const settings& s, bool direct) {
  cache_options below{s.host_tier_bytes, block_bytes, 8};
  below.memory = cache_memory::host;
  cache_for<io_handle> tier(rt, below);
  tiered_cache<Admission> cache(rt, tier, cache_options{cache_bytes, block_bytes, 8},
                                host_tier_options{s.host_tier_latency_ns});
  if (!direct) {
    mode_run r = run_through(ex, rt, p, layout, model, cache, s.warm);
    r.host_tier_hit_rate = tier.counters().share_served(cache.counters().misses);
    return r;
  }
  using handle = typename tiered_cache<Admission>::handle;
  const striping stripes{static_cast<std::uint32_t>(rt.devices().size())};
  std::uint32_t* direct_reads = to_device(rt, std::vector<std::uint32_t>{0});
  const std::vector<std::uint64_t> no_tags(cache.line_count(), cache::no_tag);
  std::uint64_t* seen = to_device(rt, no_tags);
  cache::admit_on_reuse promote;
  promote.uses(seen, no_tags.size());
  mode_run r = run_rows(
      ex, rt, p, layout, model, cache, tier_direct_rows<handle>{{cache.device(), stripes}, promote, direct_reads},
      [&](const lookup_map& map) {
        return prefetch_job<handle, true>{cache.device(), stripes, map, p.lookups, p.failures};
      },
      s.warm);
  r.tier_direct_reads = to_host(rt, direct_reads, 1).front();  // the untimed run's too
  rt.free(direct_reads);
  rt.free(seen);
  // A row read in the tier missed the GPU cache, which counted no miss for it.
  const cache_counters c = cache.counters();
  r.hit_rate = static_cast<double>(c.hits) / static_cast<double>(c.hits + c.misses + r.tier_direct_reads);
  return r;
}

// The same with the admission policy that s.host_tier_admission names.
mode_run run_above_host_tier(executor& ex, runtime& rt, device_point& p, const table_layout& layout, io_model model,
                             std::uint64_t cache_bytes, const settings& s, bool direct) {
  if (s.host_tier_admission == "on_reuse") {
    return run_agio_above_host_tier<cache::admit_on_reuse>(ex, rt, p, layout, model, cache_bytes, s, direct);
  }
  if (s.host_tier_admission == "on_eviction") {
    return run_agio_above_host_tier<cache::admit_on_eviction>(ex, rt, p, layout, model, cache_bytes, s, direct);
  }
  return run_agio_above_host_tier<cache::admit_always>(ex, rt, p, layout, model, cache_bytes, s, direct);
}

// Writes the tables into `tables` (memory the runtime's threads address) with its threads.
void fill_tables(executor& ex, runtime& rt, const table_layout& layout, float* tables) {
  std::uint64_t* first = to_device(rt, layout.first_block);
  std::uint32_t* v = to_device(rt, layout.vocab);
  const table_contents contents{first, v, layout.tables(), layout.dim, layout.rows_per_block};
  run_job(rt, ex.threads_for(1u << 20), table_fill_job{contents, tables, layout.bytes() / sizeof(float)});
  rt.free(first);
  rt.free(v);
}

mode_run run_hbm(executor& ex, device_point& p, const table_layout& layout, const float* tables) {
  return finished_run(p, run_batches(ex, p, layout, hbm_rows{tables}, [](std::uint32_t) {}));
}

#if defined(__CUDACC__)
// One batch's buffers in the baselines without agio (baselines/double_buffer.hpp takes two in
// turn): the batch's blocks in GPU memory (with pinned staging for them where the host reads
// them) and its slot indices, staged in pinned memory and copied in.
struct batch_set {
  std::byte* host_blocks = nullptr;  // only with host staging
  std::byte* blocks = nullptr;
  std::uint32_t* staged_indices = nullptr;
  std::uint32_t* slot_indices = nullptr;

  batch_set(runtime& rt, std::uint32_t lookups, bool host_staging) {
    const std::size_t index_bytes = std::size_t{lookups} * sizeof(std::uint32_t);
    if (host_staging) host_blocks = static_cast<std::byte*>(rt.allocate_host(capacity(lookups)));
    blocks = static_cast<std::byte*>(rt.allocate_device(capacity(lookups)));
    staged_indices = static_cast<std::uint32_t*>(rt.allocate_host(index_bytes));
    slot_indices = static_cast<std::uint32_t*>(rt.allocate_device(index_bytes));
  }
  void free(runtime& rt) const {
    if (host_blocks != nullptr) rt.free(host_blocks);
    rt.free(blocks);
    rt.free(staged_indices);
    rt.free(slot_indices);
  }
  // Bytes for a batch's blocks: at most one block per lookup.
  static std::size_t capacity(std::uint32_t lookups) { return std::size_t{lookups} * block_bytes; }
};

// Gathers a baseline's batch's rows from the blocks in `set` (on the compute stream).
void gather_rows(executor& ex, device_point& p, const table_layout& layout, const batch_set& set) {
  const lookup_map map{p.zero_first_block, set.slot_indices, p.shape.tables, layout.dim, layout.rows_per_block};
  ex.compute(p.lookups, gather_job<hbm_rows>{hbm_rows{reinterpret_cast<const float*>(set.blocks)}, map, p.lookups,
                                             p.buffers.t, p.failures});
}

// A host-driven mode's timed run: batch 0 read before the clock starts, then the host reads
// batch b + 1 into one set while the GPU computes batch b from the other. `what` names the
// mode in the message of a CUDA error.
template <class Read, class Compute>
mode_run run_pipelined(executor& ex, device_point& p, double_buffer<batch_set>& buffers, const Read& read_batch,
                       const Compute& compute_batch, const char* what) {
  p.clear_failures();
  read_batch(0, buffers.refill(0, what));
  return finished_run(p, ex.timed([&] { buffers.run(p.batches, compute_batch, read_batch, what); }));
}

// The CPU-driven pipeline (GPU only): the host reads batch b + 1 while the GPU works on b.
// A set is released once its pinned buffers have been copied in.
mode_run run_cpu_pipeline(executor& ex, runtime& rt, device_point& p, const table_layout& layout,
                          const cpu_pipeline_reader& reader, const batch_inputs& in) {
  double_buffer<batch_set> buffers(rt, p.lookups, true);
  const cudaStream_t stream = ex.compute_stream();
  std::size_t ready = 0;  // blocks of the batch last read
  const auto read_batch = [&](std::size_t b, batch_set& set) {
    const batch_plan plan = plan_batch(layout, in.indices.data() + b * p.lookups, p.lookups);
    reader.read(plan.blocks, set.host_blocks);
    std::copy(plan.slot_indices.begin(), plan.slot_indices.end(), set.staged_indices);
    ready = plan.blocks.size();
  };
  const auto compute_batch = [&](std::size_t k, batch_set& set) {
    const auto b = static_cast<std::uint32_t>(k);
    cudaMemcpyAsync(set.blocks, set.host_blocks, ready * block_bytes, cudaMemcpyHostToDevice, stream);
    cudaMemcpyAsync(set.slot_indices, set.staged_indices, std::size_t{p.lookups} * sizeof(std::uint32_t),
                    cudaMemcpyHostToDevice, stream);
    buffers.release(k, stream);
    gather_rows(ex, p, layout, set);
    forward(ex.ops(), p.shape, p.buffers, p.dense + std::size_t{b} * p.batch * p.shape.dense, p.batch,
            p.outputs + std::size_t{b} * p.batch);
  };
  return run_pipelined(ex, p, buffers, read_batch, compute_batch, "CPU pipeline copy");
}

// The cufile mode (GPU only): the host reads batch b + 1's blocks with cuFile straight into one
// set's device buffer while the GPU works on batch b from the other. A set is released once
// the gather has read it.
mode_run run_cufile(executor& ex, runtime& rt, device_point& p, const table_layout& layout, cufile_reader& reader,
                    const batch_inputs& in) {
  double_buffer<batch_set> buffers(rt, p.lookups, false);
  // Registered for the run, and let go before the buffers are freed (the guard is declared
  // after them, so it goes first).
  struct registration {
    double_buffer<batch_set>& buffers;
    cufile_reader& reader;
    ~registration() {
      for (std::size_t b = 0; b < 2; ++b) reader.deregister_buffer(buffers[b].blocks);
    }
  } registered{buffers, reader};
  for (std::size_t b = 0; b < 2; ++b) reader.register_buffer(buffers[b].blocks, batch_set::capacity(p.lookups));
  const cudaStream_t stream = ex.compute_stream();
  const auto read_batch = [&](std::size_t b, batch_set& set) {
    const batch_plan plan = plan_batch(layout, in.indices.data() + b * p.lookups, p.lookups);
    reader.read(plan.blocks, set.blocks);
    std::copy(plan.slot_indices.begin(), plan.slot_indices.end(), set.staged_indices);
  };
  const auto compute_batch = [&](std::size_t k, batch_set& set) {
    const auto b = static_cast<std::uint32_t>(k);
    cudaMemcpyAsync(set.slot_indices, set.staged_indices, std::size_t{p.lookups} * sizeof(std::uint32_t),
                    cudaMemcpyHostToDevice, stream);
    gather_rows(ex, p, layout, set);
    buffers.release(k, stream);
    forward(ex.ops(), p.shape, p.buffers, p.dense + std::size_t{b} * p.batch * p.shape.dense, p.batch,
            p.outputs + std::size_t{b} * p.batch);
  };
  return run_pipelined(ex, p, buffers, read_batch, compute_batch, "cufile mode: gather");
}

// The managed modes (GPU only; on a runtime without a completion service, since cudaFree waits
// for every running kernel): the tables written once into managed memory in host memory, then
// each mode asked for, its runs passed to record(mode, runs).
void run_managed(executor& ex, runtime& rt, device_point& p, const table_layout& layout, const settings& s,
                 std::uint64_t cache_bytes,
                 const std::function<void(const char*, const std::vector<mode_run>&)>& record) {
  const managed_memory tables(layout.bytes(), true);
  fill_tables(ex, rt, layout, tables.data<float>());
  const cudaStream_t stream = ex.compute_stream();
  const auto to_host = [&] {
    tables.move_to_host(stream);
    throw_on_cuda_error(cudaStreamSynchronize(stream), "moving the managed tables to host memory");
  };
  to_host();
  const hbm_rows rows{tables.data<const float>()};
  if (s.wants("managed")) {
    std::vector<mode_run> runs;
    for (std::uint32_t k = 0; k < s.reps; ++k) {
      if (s.warm) run_batches(ex, p, layout, rows, [](std::uint32_t) {});
      runs.push_back(finished_run(p, run_batches(ex, p, layout, rows, [](std::uint32_t) {})));
    }
    record("managed", runs);
  }
  for (const bool capped : {false, true}) {
    const char* mode = capped ? "managed_prefetched_capped" : "managed_prefetched";
    if (!s.wants(mode)) continue;
    const gpu_memory_cap cap(capped ? cache_bytes : 0);
    std::vector<mode_run> runs;
    for (std::uint32_t k = 0; k < s.reps; ++k) {
      to_host();
      runs.push_back(
          finished_run(p, run_batches(
                              ex, p, layout, rows, [](std::uint32_t) {}, [&] { tables.move_to_gpu(stream); })));
    }
    record(mode, runs);
  }
}
#endif

// Why the cufile mode cannot run with these settings, "" when it can.
std::string cufile_unusable(backend want, const std::vector<std::string>& stores) {
  if (want == backend::cpu) return "it needs the GPU backend";
  for (const std::string& uri : stores) {
    if (uri.rfind("file:", 0) != 0)
      return "cuFile reads files, and store " + uri + " is not a file: store (--store file:PATH,...)";
  }
  return cufile_reader::why_unavailable();
}

// --- Points and the plan ---------------------------------------------------------------------

struct point_spec {
  std::string experiment;
  int config = 1;
  std::uint32_t batch = 0;
  std::uint32_t queue_pairs = 0, queue_depth = 0;
  std::uint64_t cache_bytes = 0;
  // The baselines without agio (cpu_pipeline, cufile) have no queues: the queue sweep leaves
  // them out (its points share the rest).
  bool with_baselines() const { return experiment.rfind("queues", 0) != 0; }
};

struct point_result {
  point_spec spec;
  std::string mode;
  double seconds = 0;
  double max_error = 0;
  bool verified = false;
  double hit_rate = -1;
  double host_tier_hit_rate = -1;
  std::int64_t tier_direct_reads = -1;  // the *_host_tier_direct modes: rows read in the tier
};

// Writes the tables, striped, to the devices of a started runtime.
void write_tables(runtime& rt, const table_layout& layout) {
  const striping stripes{static_cast<std::uint32_t>(rt.devices().size())};
  std::fprintf(stderr, "writing %.1f MiB of embedding tables to %u device(s)...\n",
               static_cast<double>(layout.bytes()) / (1 << 20), stripes.devices);
  const table_contents contents{layout.first_block.data(), layout.vocab.data(), layout.tables(), layout.dim,
                                layout.rows_per_block};
  for (std::uint32_t d = 0; d < stripes.devices; ++d) {
    const auto fill = [&](std::uint64_t offset, std::byte* dst, std::size_t n) {
      fill_tables_on_host(contents, stripes, d, reinterpret_cast<float*>(dst), offset / sizeof(float),
                          n / sizeof(float));
    };
    write_store(rt, 0, stripes.blocks_on(d, layout.blocks) * block_bytes, fill, d);
  }
}

// A started runtime for `model` and its executor. The executor (streams, cuBLAS handle) is
// made before the runtime starts and destroyed after it stops (cublas_ops.hpp says why): the
// runtime is declared last, so it is destroyed first.
struct session {
  std::unique_ptr<executor> ex;
  std::unique_ptr<runtime> rt;
};
session start_session(backend want, io_model model, const settings& set, std::uint32_t queue_pairs,
                      std::uint32_t queue_depth, const std::vector<std::pair<network_shape, std::uint32_t>>& networks) {
  session s;
  runtime_options options = runtime_options_for(model, bench_runtime_options(want));
  if (model == io_model::bam_style) options.mover = set.bam_mover;
  auto rt = std::make_unique<runtime>(options);
  s.ex = std::make_unique<executor>(*rt);
  for (const auto& [shape, batch] : networks) s.ex->warm_up(shape, batch);
  for (const std::string& uri : set.stores) rt->attach(device_options{uri, queue_pairs, queue_depth});
  rt->start();
  s.rt = std::move(rt);
  return s;
}

struct measured {
  std::vector<point_result> results;
  std::string device;
};

// Runs every point of `specs` (all with the same queue settings) in the modes asked for.
void run_points(const settings& s, backend want, const std::vector<point_spec>& specs, const table_layout& layout,
                const std::vector<std::uint32_t>& vocab, progress& bar, measured& out) {
  const std::uint32_t qp = specs.front().queue_pairs, depth = specs.front().queue_depth;
  std::vector<batch_inputs> inputs;
  for (const point_spec& p : specs) inputs.push_back(make_inputs(s, vocab, p.batch));
  std::vector<std::vector<float>> reference(specs.size());
  std::vector<std::pair<network_shape, std::uint32_t>> networks;
  for (const point_spec& p : specs)
    networks.emplace_back(
        dlrm_config(p.config, s.dim, s.bottom_width, s.top_width, criteo::sparse_features, criteo::dense_features),
        p.batch);
  [[maybe_unused]] const bool any_baseline =
      std::any_of(specs.begin(), specs.end(), [](const point_spec& p) { return p.with_baselines(); });
  const auto record = [&](std::size_t i, const std::string& mode, const std::vector<mode_run>& runs) {
    point_result r{specs[i], mode};
    std::vector<double> times;
    r.verified = true;
    for (const mode_run& m : runs) {
      times.push_back(m.seconds);
      r.verified = r.verified && m.failures == 0 && m.probabilities.size() == reference[i].size();
      for (std::size_t k = 0; k < m.probabilities.size() && k < reference[i].size(); ++k) {
        r.max_error = std::max(r.max_error, static_cast<double>(std::fabs(m.probabilities[k] - reference[i][k])));
      }
      r.hit_rate = m.hit_rate;
      r.host_tier_hit_rate = m.host_tier_hit_rate;
      r.tier_direct_reads = m.tier_direct_reads;
    }
    r.verified = r.verified && r.max_error <= 1e-5;
    r.seconds = median(times);
    out.results.push_back(r);
    bar.step(specs[i].experiment + " " + mode);
  };
  {
    session agio = start_session(want, io_model::async, s, qp, depth, networks);
    runtime* rt = agio.rt.get();
    executor& ex = *agio.ex;
    write_tables(*rt, layout);
    out.device = rt->describe();
    // The reference's tables in GPU memory, computed where they are used.
    std::fprintf(stderr, "computing the reference's copy of the tables in GPU memory...\n");
    auto* tables = static_cast<float*>(rt->allocate_device(layout.bytes()));
    fill_tables(ex, *rt, layout, tables);
#if defined(__CUDACC__)
    std::unique_ptr<cpu_pipeline_reader> reader;
    if (s.wants("cpu_pipeline") && ex.gpu() && any_baseline) {
      const host_memory memory{[&rt](std::size_t n) { return rt->allocate_host(n); }, [&rt](void* p) { rt->free(p); }};
      reader = std::make_unique<cpu_pipeline_reader>(s.stores, layout, memory, 16, 64);
    }
#endif
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const network_shape& shape = networks[i].first;
      device_point p(*rt, shape, layout, inputs[i], s.seed);
      reference[i] = run_hbm(ex, p, layout, tables).probabilities;  // also warms cuBLAS up
      std::vector<mode_run> hbm{run_hbm(ex, p, layout, tables)};
      record(i, "hbm", hbm);
      for (const io_model m : {io_model::async, io_model::sync}) {
        if (s.wants(name_of(m))) {
          std::vector<mode_run> runs;
          for (std::uint32_t k = 0; k < s.reps; ++k)
            runs.push_back(run_agio<io_handle>(ex, *rt, p, layout, m, specs[i].cache_bytes, s.warm));
          record(i, name_of(m), runs);
        }
        for (const bool direct : {false, true}) {
          const std::string tiered = std::string(name_of(m)) + (direct ? "_host_tier_direct" : "_host_tier");
          if (!s.wants(tiered)) continue;
          std::vector<mode_run> runs;
          for (std::uint32_t k = 0; k < s.reps; ++k)
            runs.push_back(run_above_host_tier(ex, *rt, p, layout, m, specs[i].cache_bytes, s, direct));
          record(i, tiered, runs);
        }
      }
#if defined(__CUDACC__)
      if (reader && specs[i].with_baselines()) {
        std::vector<mode_run> runs;
        for (std::uint32_t k = 0; k < s.reps; ++k)
          runs.push_back(run_cpu_pipeline(ex, *rt, p, layout, *reader, inputs[i]));
        record(i, "cpu_pipeline", runs);
      }
#endif
    }
    rt->free(tables);
    rt->stop();
  }
#if defined(__CUDACC__)
  if (s.wants("cufile") && want != backend::cpu && any_baseline) {
    // cuFile runs on a runtime of its own without a completion service, as a cuFile user's GPU
    // has no agio kernel: beside the service kernel its compatibility mode never finished a
    // batch (H100, 2026-11-22; which of its calls waits was not isolated). The tables are in
    // the files already (cufile needs file: stores).
    session plain = start_session(want, io_model::bam_style, s, qp, depth, networks);
    // One batch in flight (cuFile's default batch size, 128 reads). With two or more, cuFile's
    // compatibility mode never finished them on the H100 VM: a probe of 8 batches of 128 hung in
    // submission or status, where one batch of 128 completed at about 40K reads/s (2026-11-22).
    cufile_reader reader(s.stores, layout.blocks, 1);
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (!specs[i].with_baselines()) continue;
      device_point p(*plain.rt, networks[i].first, layout, inputs[i], s.seed);
      std::vector<mode_run> runs;
      for (std::uint32_t k = 0; k < s.reps; ++k)
        runs.push_back(run_cufile(*plain.ex, *plain.rt, p, layout, reader, inputs[i]));
      record(i, "cufile", runs);
    }
    plain.rt->stop();
  }
#endif
#if defined(__CUDACC__)
  const bool managed =
      std::any_of(std::begin(managed_modes), std::end(managed_modes), [&](const char* m) { return s.wants(m); });
  if (managed && want != backend::cpu && any_baseline) {
    session plain = start_session(want, io_model::bam_style, s, qp, depth, networks);
    if (plain.ex->gpu()) {
      for (std::size_t i = 0; i < specs.size(); ++i) {
        if (!specs[i].with_baselines()) continue;
        device_point p(*plain.rt, networks[i].first, layout, inputs[i], s.seed);
        run_managed(*plain.ex, *plain.rt, p, layout, s, specs[i].cache_bytes,
                    [&](const char* mode, const std::vector<mode_run>& runs) { record(i, mode, runs); });
      }
    }
    plain.rt->stop();
  }
#endif
  if (!s.wants("bam_style")) return;
  session bam = start_session(want, io_model::bam_style, s, qp, depth, networks);
  runtime* rt = bam.rt.get();
  executor& ex = *bam.ex;
  write_tables(*rt, layout);
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const network_shape& shape = networks[i].first;
    device_point p(*rt, shape, layout, inputs[i], s.seed);
    std::vector<mode_run> runs;
    for (std::uint32_t k = 0; k < s.reps; ++k) {
      runs.push_back(run_agio<waiting_io_handle>(ex, *rt, p, layout, io_model::bam_style, specs[i].cache_bytes));
    }
    record(i, "bam_style", runs);
  }
  rt->stop();
}

std::string mib(std::uint64_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

}  // namespace

std::vector<register_row> dlrm_registers() {
  using agio_gather = gather_job<cached_rows<handle_for<io_handle>>>;
  using bam_gather = gather_job<cached_rows<handle_for<waiting_io_handle>>>;
  return {{"dlrm", "gather", "async", job_registers<agio_gather>()},
          {"dlrm", "prefetch", "async", job_registers<prefetch_job<handle_for<io_handle>>>()},
          {"dlrm", "gather", "sync", job_registers<agio_gather>()},
          {"dlrm", "gather", "bam_style", job_registers<bam_gather>()}};
}

namespace {

// --- Options, plan, run, report ---------------------------------------------------------------

constexpr const char* known_modes[] = {"async",
                                       "sync",
                                       "bam_style",
                                       "cpu_pipeline",
                                       "cufile",
                                       "async_host_tier",
                                       "sync_host_tier",
                                       "async_host_tier_direct",
                                       "sync_host_tier_direct",
                                       "managed",
                                       "managed_prefetched",
                                       "managed_prefetched_capped"};
// The modes without agio: they need a GPU and skip the queue sweep.
constexpr const char* baseline_modes[] = {"cpu_pipeline", "cufile", "managed", "managed_prefetched",
                                          "managed_prefetched_capped"};

struct dlrm_options {
  settings s;
  backend want = backend::automatic;
  bool quick = false;
  std::vector<std::uint32_t> vocab;  // rows per table
  std::vector<std::uint64_t> configs, batch_sweep, queue_sweep, cache_sweep;
  std::uint32_t batch = 0, devices = 0;
  std::vector<std::string> experiments;
  std::string bam_mover, out_path;
};

dlrm_options parse_options(const options& opt) {
  dlrm_options o;
  settings& s = o.s;
  o.want = backend_option(opt);
  const backend want = o.want;
  o.quick = opt.flag("quick");
  const bool small = o.quick || want == backend::cpu;  // CPU threads run a scaled-down network
  s.dim = opt.whole<std::uint32_t>("dim", want == backend::cpu ? 16 : 64);
  s.bottom_width = opt.whole<std::uint32_t>("bottom-width", want == backend::cpu ? 32 : 512);
  s.top_width = opt.whole<std::uint32_t>("top-width", want == backend::cpu ? 64 : 1024);
  s.batches = opt.whole<std::uint32_t>("batches", small ? 8 : 32);
  s.reps = opt.whole<std::uint32_t>("reps", small ? 1 : 3);
  s.queue_pairs = opt.whole<std::uint32_t>("queue-pairs", want == backend::cpu ? 4 : 128);
  s.queue_depth = opt.whole<std::uint32_t>("queue-depth", want == backend::cpu ? 64 : 256);
  s.cache_bytes = opt.whole<std::uint64_t>("cache-mib", small ? 64 : 2048) << 20;
  s.host_tier_bytes = opt.whole<std::uint64_t>("host-tier-mib", small ? 256 : 8192) << 20;
  s.host_tier_latency_ns = opt.whole<std::uint32_t>("host-tier-latency-ns", 0);
  s.host_tier_admission = opt.get("host-tier-admission", "always");
  s.warm = opt.flag("warm");
  s.alpha = opt.number("alpha", 1.05);
  s.seed = opt.whole<std::uint64_t>("seed", 11);
  s.criteo_file = opt.get("criteo", "");
  s.modes = opt.list("modes", "async,sync,bam_style,cpu_pipeline");  // cufile only when asked for
  const double vocab_scale = opt.number("vocab-scale", small ? 0.001 : 1.0);
  const auto vocab_cap = opt.whole<std::uint32_t>("vocab-cap", small ? 20000 : 4'000'000);
  o.configs = opt.numbers("configs", "1,2,3");
  o.batch = opt.whole<std::uint32_t>("batch", want == backend::cpu ? 32 : 2048);
  o.experiments = opt.list("experiments", small ? "configs" : "configs,batch,queues,cache");
  o.batch_sweep = opt.numbers("batch-sizes", small ? "1,16,256" : "1,4,16,64,256,1024,2048");
  o.queue_sweep = opt.numbers("queue-pair-sweep", small ? "1,4" : "1,2,4,8,16");
  o.cache_sweep = opt.numbers("cache-mib-sweep", small ? "4,64" : "1,16,128,512,2048");
  o.out_path = opt.get("out", "results/dlrm.json");
  // Four emulated SSDs: with one, configuration 1 waits on the SSD's 3.7 GB/s alone (async /
  // sync 1.16 on the H100) and the comparison is of nothing but the store (docs/RESULTS.md).
  o.devices = opt.whole<std::uint32_t>("devices", 4);
  o.bam_mover = opt.get("bam-mover", "gpu_warps");
  s.stores = opt.list("store", "");  // default: `--devices` emulated SSDs, sized in make_plan
  opt.reject_unknown();
  if (o.devices == 0) throw std::invalid_argument("--devices is at least 1");
  if (s.host_tier_admission != "always" && s.host_tier_admission != "on_reuse" &&
      s.host_tier_admission != "on_eviction") {
    throw std::invalid_argument("--host-tier-admission is always, on_reuse or on_eviction");
  }
  if (o.bam_mover != "copy_engine" && o.bam_mover != "gpu_warps") {
    throw std::invalid_argument("--bam-mover is copy_engine or gpu_warps");
  }
  s.bam_mover = o.bam_mover == "copy_engine" ? data_mover::copy_engine : data_mover::gpu_warps;
  for (const auto& m : s.modes) {
    if (std::find(std::begin(known_modes), std::end(known_modes), m) == std::end(known_modes)) {
      std::string names;
      for (const char* k : known_modes) names += (names.empty() ? "" : ", ") + std::string(k);
      throw std::invalid_argument("--modes: unknown mode '" + m + "' (" + names + ")");
    }
  }
  if (s.dim == 0 || s.dim * sizeof(float) > block_bytes) {
    throw std::invalid_argument("--dim is 1 to " + std::to_string(block_bytes / sizeof(float)) +
                                " (a row within a 4 KiB block)");
  }
  o.vocab = criteo::criteo_vocab_sizes(vocab_scale, vocab_cap);
  return o;
}

// The tables' layout and the points, grouped by queue settings (each group runs on runtimes of
// its own).
struct dlrm_plan {
  table_layout layout;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<point_spec>> groups;
  std::size_t points = 0;
};

dlrm_plan make_plan(dlrm_options& o) {
  settings& s = o.s;
  dlrm_plan p{table_layout(s.dim, o.vocab), {}, 0};
  // Default stores: `--devices` emulations of the paper's SSD, each sized to its share.
  const std::uint64_t share_mib = (striping{o.devices}.blocks_on(0, p.layout.blocks) * block_bytes >> 20) + 1;
  if (s.stores.empty()) s.stores.assign(o.devices, "ram:" + std::to_string(share_mib) + "M?lba=4096&profile=agile-ssd");
  std::vector<point_spec> points;
  for (const auto& e : o.experiments) {
    if (e == "configs") {
      for (const auto c : o.configs)
        points.push_back(
            {"config" + std::to_string(c), static_cast<int>(c), o.batch, s.queue_pairs, s.queue_depth, s.cache_bytes});
    } else if (e == "batch") {
      for (const auto b : o.batch_sweep)
        points.push_back({"batch" + std::to_string(b), 1, static_cast<std::uint32_t>(b), s.queue_pairs, s.queue_depth,
                          s.cache_bytes});
    } else if (e == "queues") {
      // The paper's Figure 9: depth 64, 1 to 16 queue pairs.
      for (const auto q : o.queue_sweep)
        points.push_back({"queues" + std::to_string(q), 1, o.batch, static_cast<std::uint32_t>(q), 64, s.cache_bytes});
    } else if (e == "cache") {
      for (const auto m : o.cache_sweep)
        points.push_back({"cache" + std::to_string(m) + "M", 1, o.batch, s.queue_pairs, s.queue_depth, m << 20});
    } else {
      throw std::invalid_argument("--experiments: unknown experiment '" + e + "' (configs, batch, queues, cache)");
    }
  }
  for (const auto& pt : points) p.groups[{pt.queue_pairs, pt.queue_depth}].push_back(pt);
  p.points = points.size();
  std::fprintf(stderr, "dlrm: %u tables, %.1f MiB striped over %zu device(s) like %s, dim %u, %u batches per run\n",
               p.layout.tables(), static_cast<double>(p.layout.bytes()) / (1 << 20), s.stores.size(),
               s.stores.front().c_str(), s.dim, s.batches);
  // The cufile mode is left out, said once, where it cannot run (before the runtime starts, so
  // that cuFile's driver opens beside no running kernel).
  if (s.wants("cufile")) {
    if (const std::string why = cufile_unusable(o.want, s.stores); !why.empty()) {
      std::fprintf(stderr, "dlrm: skipping mode cufile: %s\n", why.c_str());
      s.modes.erase(std::find(s.modes.begin(), s.modes.end(), "cufile"));
    }
  }
  if (o.want == backend::cpu) {
    for (const char* m : managed_modes) {
      if (!s.wants(m)) continue;
      std::fprintf(stderr, "dlrm: skipping mode %s: CUDA managed memory needs the GPU backend\n", m);
      s.modes.erase(std::find(s.modes.begin(), s.modes.end(), m));
    }
  }
  return p;
}

measured run_plan(const dlrm_options& o, const dlrm_plan& p) {
  const settings& s = o.s;
  // Per point: the hbm run and each mode; the baselines without agio need a GPU and skip the
  // queue sweep.
  const auto baselines = static_cast<std::size_t>(
      std::count_if(std::begin(baseline_modes), std::end(baseline_modes), [&](const char* m) { return s.wants(m); }));
  std::size_t steps = 0;
  for (const auto& [queues, specs] : p.groups) {
    for (const point_spec& pt : specs) {
      steps += 1 + s.modes.size() - (o.want == backend::cpu || !pt.with_baselines() ? baselines : 0);
    }
  }
  progress bar(steps);
  measured m;
  for (const auto& [queues, specs] : p.groups) run_points(s, o.want, specs, p.layout, o.vocab, bar, m);
  return m;
}

// Per point each mode's time and its speedups, on stdout and in the JSON.
int report(const dlrm_options& o, const dlrm_plan& p, const measured& m, int argc, char** argv) {
  const settings& s = o.s;
  result_document doc;
  std::printf("%-10s %-16s %11s %9s %9s %6s\n", "point", "mode", "ms", "hit_rate", "max_err", "check");
  bool all_ok = true;
  std::map<std::string, std::map<std::string, double>> seconds;
  for (const point_result& r : m.results) {
    seconds[r.spec.experiment][r.mode] = r.seconds;
    all_ok = all_ok && r.verified;
    std::printf("%-10s %-16s %11.3f %9.3f %9.1e %6s\n", r.spec.experiment.c_str(), r.mode.c_str(), r.seconds * 1e3,
                r.hit_rate, r.max_error, r.verified ? "ok" : "FAILED");
    json_object j;
    j.set("point", r.spec.experiment).set("mode", r.mode).set("config", std::int64_t{r.spec.config});
    j.set("batch", std::int64_t{r.spec.batch}).set("queue_pairs", std::int64_t{r.spec.queue_pairs});
    j.set("queue_depth", std::int64_t{r.spec.queue_depth})
        .set("cache_bytes", static_cast<std::int64_t>(r.spec.cache_bytes));
    j.set("seconds", r.seconds).set("max_error", r.max_error).set("verified", r.verified);
    if (r.hit_rate >= 0) j.set("hit_rate", r.hit_rate);
    if (r.host_tier_hit_rate >= 0) j.set("host_tier_hit_rate", r.host_tier_hit_rate);
    if (r.tier_direct_reads >= 0) j.set("rows_read_in_host_tier", r.tier_direct_reads);
    doc.points.push_back(j);
  }
  const bool cufile = s.wants("cufile");  // a column only where asked for and runnable
  std::printf("\n%-10s %14s %14s %14s %14s", "point", "async/sync", "async/bam", "async/cpu_pipe", "sync/bam");
  if (cufile) std::printf(" %14s", "async/cufile");
  std::printf("\n");
  for (const auto& [point, t] : seconds) {
    const auto ratio = [&](const char* a, const char* b) {
      return t.count(a) && t.count(b) && t.at(a) > 0 ? t.at(b) / t.at(a) : 0.0;
    };
    std::printf("%-10s %14.2f %14.2f %14.2f %14.2f", point.c_str(), ratio("async", "sync"), ratio("async", "bam_style"),
                ratio("async", "cpu_pipeline"), ratio("sync", "bam_style"));
    if (cufile) std::printf(" %14.2f", ratio("async", "cufile"));
    std::printf("\n");
    for (const char* mode : {"async", "sync"}) {
      for (const char* rows : {"", "_direct"}) {
        const std::string tiered = std::string(mode) + "_host_tier" + rows;
        if (t.count(mode) && t.count(tiered)) {
          std::printf("%-10s three tiers%s / two tiers, %s: %.2f (target >= 2)\n", point.c_str(), rows, mode,
                      ratio(tiered.c_str(), mode));
        }
        for (const char* managed : managed_modes) {
          if (t.count(tiered) && t.count(managed)) {
            std::printf("%-10s three tiers%s (%s) / %s: %.2f (target >= 1.5)\n", point.c_str(), rows, mode, managed,
                        ratio(tiered.c_str(), managed));
          }
        }
      }
    }
    if (point == "config1" && t.count("async") && t.count("sync") && t.count("bam_style") && t.count("cpu_pipeline")) {
      std::printf("target at config 1 (async >= 1.3x sync, >= 1.5x BaM-style, >= 1.5x CPU pipeline): %s %s %s\n",
                  ratio("async", "sync") >= 1.3 ? "met" : "MISSED",
                  ratio("async", "bam_style") >= 1.5 ? "met" : "MISSED",
                  ratio("async", "cpu_pipeline") >= 1.5 ? "met" : "MISSED");
    }
  }
  const std::vector<register_row> registers = dlrm_registers();
  for (const register_row& r : registers) {
    if (r.registers >= 0) std::printf("registers: %-9s %-10s %d\n", r.kernel.c_str(), r.model.c_str(), r.registers);
  }

  const std::string& device = m.device;
  doc.set_header("dlrm", device, argc, argv);
  std::string stores;
  for (const auto& u : s.stores) stores += (stores.empty() ? "" : ",") + u;
  doc.config.set("stores", stores).set("devices", static_cast<std::int64_t>(s.stores.size()));
  const std::string kind = store_kind(s.stores.front());
  const bool one_kind =
      std::all_of(s.stores.begin(), s.stores.end(), [&](const std::string& u) { return store_kind(u) == kind; });
  doc.config.set("store_kind", one_kind ? kind : std::string("stores of several kinds"));
  doc.config.set("bam_mover", o.bam_mover);
  doc.config.set("warm", s.warm);
  if (s.wants("async_host_tier") || s.wants("sync_host_tier") || s.wants("async_host_tier_direct") ||
      s.wants("sync_host_tier_direct")) {
    doc.config.set("host_tier_bytes", static_cast<std::int64_t>(s.host_tier_bytes))
        .set("host_tier_latency_ns", std::int64_t{s.host_tier_latency_ns})
        .set("host_tier_admission", s.host_tier_admission);
  }
  doc.config.set("tables", std::int64_t{p.layout.tables()})
      .set("table_bytes", static_cast<std::int64_t>(p.layout.bytes()));
  doc.config.set("dim", std::int64_t{s.dim})
      .set("bottom_width", std::int64_t{s.bottom_width})
      .set("top_width", std::int64_t{s.top_width});
  doc.config.set("batches", std::int64_t{s.batches})
      .set("reps", std::int64_t{s.reps})
      .set("timing", std::string("median"));
  doc.config.set("alpha", s.alpha).set("policy", std::string("clock")).set("cache", mib(s.cache_bytes));
  doc.config.set("data", s.criteo_file.empty() ? std::string("generated Criteo-shaped samples") : s.criteo_file);
  for (const register_row& r : registers)
    doc.config.set("registers " + r.kernel + " " + r.model, std::int64_t{r.registers});
  doc.save(o.out_path);
  std::printf("device: %s\nresults: %s\n", device.c_str(), o.out_path.c_str());
  if (!all_ok) std::fprintf(stderr, "dlrm: some outputs did not match the reference (tables in HBM)\n");
  return all_ok ? 0 : 1;
}

}  // namespace

int dlrm_main(int argc, char** argv, int first) {
  dlrm_options o = parse_options(options(argc, argv, first));
  const dlrm_plan p = make_plan(o);
  const measured m = run_plan(o, p);
  return report(o, p, m, argc, argv);
}

}  // namespace agio::bench
