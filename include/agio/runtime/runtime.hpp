#pragma once
// The host runtime: attaches devices, sizes queues, starts and stops the completion service and
// the proxy controller, and reports counters and the first device-side error.
//
//   agio::runtime rt;                                  // GPU if present, else CPU threads
//   rt.attach("file:/data/emb.bin");
//   rt.start();
//   auto* buf = rt.allocate_device(1 << 20);           // registered for I/O
//   my_kernel<<<grid, block, 0, stream>>>(rt.io(), buf);
//   cudaStreamSynchronize(stream);
//   rt.check();                                        // throws agio::io_error on a failed request
//   rt.stop();
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "agio/io/io_handle.hpp"
#include "agio/io/data_mover.hpp"

namespace agio {

class memory_buffer;

enum class backend { automatic, gpu, cpu };

// Who retires completions. `service`: AGILE's completion service (a persistent kernel, or
// host threads on the CPU backend) so that no user thread ever polls a completion queue.
// `waiters`: no service runs; a thread waiting on a transaction polls the queue its command
// went to and retires whatever is there (BaM's model). Waiters is slower under load but needs
// no kernel running beside the user's, which is what compute-sanitizer requires (it runs
// kernels one at a time). At stop() a service runs briefly to retire what nobody waited for.
// `on_demand`: the service runs only while a lease is held (runtime::acquire_service; run_job
// takes one for every job it launches). When the last lease is given back it exits as soon as
// its queues are drained, so between jobs nothing of agio's runs on the GPU: a device-wide
// synchronize (cudaDeviceSynchronize, torch.cuda.synchronize()) returns, and CUDA calls that wait
// for every kernel (cudaMalloc, a lazy module load) do not wait forever. The next lease launches
// it again (a kernel launch, a few microseconds). A kernel of your own that issues requests in
// this mode must hold a lease from before its launch until it has finished.
// The mode fixes the handle's type: runtime::io() for service and on_demand,
// runtime::waiting_io() for waiters.
enum class completion_mode { service, waiters, on_demand };

struct device_options {
  std::string uri;  // file:PATH[?...] or ram:SIZE[?...]
  std::uint32_t queue_pairs = 4;
  std::uint32_t queue_depth = 256;  // entries per submission queue, 2..4096
};

struct runtime_options {
  agio::backend backend = backend::automatic;
  data_mover mover = data_mover::gpu_warps;
  completion_mode completion = completion_mode::service;
  std::uint32_t max_transfer_bytes = 128 * 1024;  // largest transfer (NVMe MDTS), 4 KiB..2 MiB
  std::uint32_t controller_threads = 0;           // 0: one per two queue pairs, at most half the cores
  // The completion service's workers that retire completions; 0: one per queue pair, at most 64
  // warps (GPU) or 2 threads (CPU). As many again submit the requests posted to the service
  // (posted_slots), unless waiters retire completions.
  std::uint32_t service_warps = 0;
  // GPU backend, sm_90 and later: shared memory (a multiple of 4096, at most 128 KiB) each
  // retiring warp of the completion service copies reads' data through with bulk asynchronous
  // copies, which have all of a window's copies in flight at once; 0: its lanes copy with loads,
  // one copy after another. Each service block (two retiring and two submitting warps) takes
  // twice this from its SM while the service runs, which kernels beside it cannot use. Measured
  // against 0 (`ram:` reads, H200): 64 KiB reads at 16 in flight 3.1x faster with 32 KiB, 4.0x
  // with 64 KiB; 4 KiB reads at 16 in flight 1.16x and 1.19x (docs/RESULTS.md).
  std::uint32_t service_staging_bytes = 32 * 1024;
  // Requests that may be in flight (submitted and not yet waited on) at once, over all devices;
  // 88 bytes of device memory each. A request beyond it is refused at once with no_resources.
  // 0: four per queue entry, at least 65536 (5.5 MiB).
  std::uint32_t transaction_records = 0;
  std::uint32_t submit_timeout_ms = 10'000;  // how long a submitter waits for a free queue entry
  // Slots of each submitting service worker's ring of requests posted for it to submit (the
  // cache's fills and write-backs: io_handle::post_signalled), 96 bytes each; a power of two,
  // 4..65536. A poster that finds its ring full waits for a slot, up to submit_timeout_ms.
  std::uint32_t posted_slots = 512;
  std::uint32_t wait_timeout_ms = 60'000;  // the deadline of io_handle::wait()
  std::uint32_t stop_timeout_ms = 30'000;  // how long stop() lets in-flight requests finish
  std::uint32_t controller_spin_us = 50;   // idle controller threads spin this long, then sleep
  // A controller thread with at most this many commands in flight copies a read of up to 8 KiB
  // from a store's host memory (`ram:`) into the command's bounce slot itself, so that the
  // retirer copies it from there without looking at the store's stripe sequences across PCIe
  // (3 us of a 4 KiB read's trip); busier threads leave such reads in the store for the
  // retirer to copy (zero copy), as they do always with 0.
  std::uint32_t controller_copy_depth = 4;
  // Lanes of a GPU warp that start at one queue pair while few requests are in flight (fewer
  // than eight per queue pair): a power of two, 1..32. Below 32 a warp's lanes then start at
  // 32 / lanes_per_queue queues side by side, so that its few requests are fetched by several
  // controller threads and retired by several service warps at once instead of one after
  // another; with more in flight a warp's lanes always submit together (one claim, one
  // doorbell). 32: always together. For shallow queues, 1 with wait_together_ns = 8000 took
  // 4 KiB reads at 16 and 64 in flight 1.7x and 2.4x faster, but made issuing the AGILE
  // overlap benchmark's requests up to 20x slower and its async steps no faster than sync:
  // lanes that claim apart leave the submission apart, and those out first run the kernel's
  // computation before the others' requests go out (Figure 4; docs/RESULTS.md).
  std::uint32_t lanes_per_queue = 32;
  // Lanes of a GPU warp that wait together: one whose request has finished stays up to this
  // long (ns) while the others still wait, so that they leave together and submit their next
  // requests together instead of one by one. 0: each lane leaves as soon as its request is done.
  std::uint32_t wait_together_ns = 0;
  // GPU backend: the stack (local memory) each GPU thread gets, reserved before the completion
  // service starts. A kernel that needs more (large local arrays) makes CUDA grow the stack,
  // which waits for every running kernel, the service included: that launch never starts.
  // run_job refuses such a kernel; raise this for kernels of your own that need more. Costs
  // this much per thread the GPU can hold at once (4 KiB: 1.1 GiB on an H100).
  std::uint32_t gpu_thread_stack_bytes = 4096;
  // GPU backend: how long run_job waits for its kernel to start (its first thread to run) before
  // it throws job_not_started (launch.hpp). Beside the completion service, a kernel whose launch
  // makes CUDA wait for every running kernel never starts, and one that finds no room on the GPU
  // waits for room; once started, a job runs as long as it takes.
  std::uint32_t job_start_timeout_ms = 60'000;
  // The runtime's host tier memory: pinned host memory (0: none) that host tiers made on this
  // runtime take their lines from (cache/host_tier.hpp), and that regions are allocated from
  // (host_tier_memory(), memory_buffer.hpp), so that all of them draw on one budget; bound to NUMA
  // node host_tier_numa_node (-1: none; a CXL expander's node, for one). Its pages are taken as
  // tiers and regions are allocated.
  std::size_t host_tier_bytes = 0;
  int host_tier_numa_node = -1;
  // Time stamps along every request's trip (submitted, taken by the controller, completion
  // posted, seen by the retirer, finished), summed per device in device_counters::trip: what
  // `agio bench io --experiments trip` splits the trip with. Costs a clock read and a store
  // where each stamp is taken and five atomics per completion; off by default.
  bool trip_stamps = false;
};

// What the first failed request of a run was, and how it failed (io_error::request()).
struct failed_request {
  std::uint32_t device = 0;
  std::string uri;                           // the device's URI; empty when `device` is not attached (no_such_device)
  spec::opcode opcode = spec::opcode::read;  // a passthrough command's may be any NVMe opcode
  std::uint64_t lba = 0;
  std::uint32_t blocks = 0;
  std::uint64_t buffer = 0;       // address of the request's buffer (0: none, e.g. a flush)
  std::uint64_t byte_offset = 0;  // what a misaligned byte-addressed request asked for
  std::uint64_t byte_count = 0;
  agio::status result;  // the outcome; its nvme_status for outcome::nvme_error
  // Why it was refused before submission; `completed` when it was submitted and answered
  // with an error.
  io::failure_cause refusal = io::failure_cause::completed;
  int error_number = 0;     // errno of the device's first store failure, 0 if none
  std::string store_error;  // the store's own words for that failure, or empty
};

// The first failed request of a run (check()), or a failure of the runtime's own machinery
// (stop(), a controller thread). The request's fields are members, for code that decides by
// them; what() says the same in words.
class io_error : public std::runtime_error {
 public:
  explicit io_error(const std::string& what) : std::runtime_error(what) {}
  // A controller thread failed before any request did.
  io_error(const std::string& what, std::string controller_failure)
      : std::runtime_error(what), controller_failure_(std::move(controller_failure)) {}
  io_error(const std::string& what, failed_request request, std::string controller_failure = {})
      : std::runtime_error(what),
        request_(std::move(request)),
        has_request_(true),
        controller_failure_(std::move(controller_failure)) {}

  // False for failures that are no request's (stop() that could not finish, or a controller
  // thread's failure before any request failed): the fields below are then zero or empty.
  bool has_request() const { return has_request_; }
  const failed_request& request() const { return request_; }
  std::uint32_t device() const { return request_.device; }
  const std::string& uri() const { return request_.uri; }
  spec::opcode opcode() const { return request_.opcode; }
  std::uint64_t lba() const { return request_.lba; }
  std::uint32_t blocks() const { return request_.blocks; }
  agio::status result() const { return request_.result; }
  std::uint16_t nvme_status() const { return request_.result.nvme_status; }
  int error_number() const { return request_.error_number; }
  io::failure_cause refusal() const { return request_.refusal; }
  // A controller thread's failure (it fails the requests it held), or empty.
  const std::string& controller_failure() const { return controller_failure_; }

 private:
  failed_request request_;
  bool has_request_ = false;
  std::string controller_failure_;
};

struct queue_pair_counters {
  std::uint64_t commands = 0;
  std::uint64_t errors = 0;
  std::uint64_t bytes_read = 0;
  std::uint64_t bytes_written = 0;
  // Summed over commands: fetched to completion posted, and the store's part of it; the clock is
  // read once per batch of commands fetched or completed together, so these are a batch's
  // times, not each command's own.
  std::uint64_t controller_ns = 0;
  std::uint64_t store_ns = 0;
};

struct device_counters {
  std::string uri;
  std::uint64_t submitted = 0;
  std::uint64_t completed = 0;
  std::uint64_t errors = 0;    // submitted requests that completed with an error
  std::uint64_t rejected = 0;  // requests refused before submission (bad argument, no resources, stopped)
  std::uint64_t queue_full_retries = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> latency_log2_ns;  // bucket k: latencies in [2^k, 2^(k+1)) ns
  std::vector<queue_pair_counters> queue_pairs;
  io::trip_sums trip{};  // with runtime_options::trip_stamps (agio/queue/shared_state.hpp)

  // The latency below which a fraction q of requests finished (bucket upper bound), in ns.
  std::uint64_t latency_quantile_ns(double q) const;
};

struct device_description {
  std::string uri;
  std::uint64_t capacity_blocks = 0;
  std::uint32_t lba_bytes = 0;
  std::uint32_t queue_pairs = 0;
  std::uint32_t queue_depth = 0;
};

class runtime {
 public:
  explicit runtime(runtime_options options = {});
  ~runtime();
  runtime(const runtime&) = delete;
  runtime& operator=(const runtime&) = delete;

  // Attaches a device before start(); returns its index. Throws std::invalid_argument or
  // std::system_error (naming the URI) when the store cannot be opened.
  std::uint32_t attach(const device_options& device);
  std::uint32_t attach(const std::string& uri) { return attach(device_options{uri}); }

  void start();
  // Runs the stop hooks (a cache's flush; their time is not bounded here), then stops
  // accepting requests, lets the ones in flight finish, stops the service and the controller
  // and makes every acknowledged write durable, within stop_timeout_ms. Store I/O still running
  // then is aborted (Command Aborted due to SQ Deletion) and, if the store may still write into
  // them, the queues' memory is leaked rather than freed under it. Throws io_error naming what
  // could not be finished, aborted or leaked, or a controller thread's failure. Idempotent; the
  // destructor calls it.
  void stop();
  bool running() const;

  // Runs `hook` at the start of stop(), while requests are still accepted: a cache writes its
  // MODIFIED lines back there. Hooks run last added first (a cache built above a host tier
  // writes into the tier before the tier writes to storage); an exception from one is rethrown
  // by stop() once the runtime has stopped. Returns an id for remove_stop_hook.
  std::uint64_t add_stop_hook(std::function<void()> hook);
  void remove_stop_hook(std::uint64_t id);

  // The handle kernels and CPU threads use; valid between start() and stop(). Its type
  // carries who retires completions (controller.hpp), so each mode has its own accessor:
  // io() for completion_mode::service (the default) and on_demand, waiting_io() for
  // completion_mode::waiters. Each throws std::logic_error on a runtime of the other mode: the
  // wrong handle would wait for completions nobody retires, or poll beside the service.
  const io_handle& io() const;
  const waiting_io_handle& waiting_io() const;
  completion_mode completion() const;  // runtime_options::completion, for code that serves both

  // completion_mode::on_demand: a lease keeps the completion service running. acquire_service
  // launches it when no lease was held (and it had exited or was told to); release_service gives
  // a lease back, and with the last one the service exits once its queues are drained.
  // release_service_after gives it back once the work queued so far on `stream` (a cudaStream_t;
  // on the CPU backend, at once) has finished, for jobs that run on a caller's stream. All three
  // do nothing in the other modes, and between start() and stop() only.
  void acquire_service() const;
  void release_service() const;
  void release_service_after(void* stream) const;

  // Where a kernel that run_job launches says it has started (launch.hpp): a word of pinned
  // host memory the GPU reaches, this call's alone until given back, to which the kernel's first
  // thread stores `ticket` (a plain store: the VMs' GPUs have no atomics on host memory), and
  // how long to wait for it (runtime_options::job_start_timeout_ms). A mark whose kernel did not
  // start is not given back, as that kernel may store to it whenever it runs. On the CPU backend
  // `word` is nullptr: a job's threads start at once. Throws std::runtime_error when
  // job_start_words marks are out at once.
  struct job_start_mark {
    std::uint64_t* word = nullptr;
    std::uint64_t ticket = 0;
    std::uint32_t timeout_ms = 0;
  };
  static constexpr std::uint32_t job_start_words = 1024;
  job_start_mark take_job_start_mark() const;
  void give_back_job_start_mark(const job_start_mark& mark) const;

  // Memory for I/O buffers, registered with the controller (like an IOMMU mapping). GPU
  // memory on the GPU backend; ordinary memory the CPU threads use on the CPU backend.
  void* allocate_device(std::size_t bytes);
  // Pinned host memory the GPU can also reach; direct I/O target of the controller. With
  // `numa_node` >= 0 it is bound to that NUMA node (how memory of a CXL expander, a node
  // without CPUs, is used); std::system_error if the node cannot take it.
  void* allocate_host(std::size_t bytes);
  void* allocate_host(std::size_t bytes, int numa_node);
  // The first `bytes` of the shareable memory object `descriptor` (a memfd; memory_buffer.hpp
  // shares regions this way), mapped shared, pinned and registered as allocate_host's is: every
  // mapping of the object, in this runtime, another one or another process, holds the same
  // bytes. With `numa_node` >= 0 its pages are bound to that node and zeroed (for an object
  // nobody has written yet). free() unmaps it; the object lives on while others map it.
  void* map_host(int descriptor, std::size_t bytes, int numa_node = -1);
  void free(void* p);
  // The memory buffer of runtime_options::host_tier_bytes, or nullptr when that is 0.
  memory_buffer* host_tier_memory() const;
  // Registers memory the caller allocated (cudaMalloc or pinned host memory).
  void register_memory(void* p, std::size_t bytes);
  void unregister_memory(void* p);
  // Registers memory the caller may free while it is still registered, as a cache of
  // registrations does (the Python package keeps a caller's buffers registered for the next
  // call): memory the runtime allocates or registers later over any of its bytes replaces it.
  // registered() says whether it still stands; unregister_replaceable removes it if it does.
  void register_replaceable(void* p, std::size_t bytes);
  void unregister_replaceable(void* p);
  bool registered(const void* p, std::size_t bytes) const;
  // Copies between host memory and memory from allocate_device (cudaMemcpy on the GPU).
  void copy_to_device(void* dst, const void* src, std::size_t bytes);
  void copy_to_host(void* dst, const void* src, std::size_t bytes);

  // Throws io_error naming device, LBA and cause if a request has failed since start().
  void check() const;
  std::vector<device_counters> counters() const;
  // Requests refused because they named a device that is not attached (they have no device's
  // counters to go to).
  std::uint64_t requests_for_unknown_devices() const;
  std::vector<device_description> devices() const;
  agio::backend backend() const;  // gpu or cpu, once constructed
  std::string describe() const;   // e.g. "GPU: NVIDIA H100 80GB HBM3" or "CPU threads (no GPU found)"

  class platform;  // the backend's memory, service and copy-engine primitives

 private:
  failed_request failure_fields(const io::error_record& e) const;
  std::string describe_failure(const failed_request& f) const;

  struct state;
  std::unique_ptr<state> s_;
};

// Calls `body` with rt.io() or rt.waiting_io(), as the runtime's completion mode says: for code
// written once for both controller types (a generic lambda), such as a tool that takes the mode
// as an option. Both instantiations of `body` must return the same type.
template <class Body>
decltype(auto) with_io(const runtime& rt, Body&& body) {
  if (rt.completion() == completion_mode::waiters) return body(rt.waiting_io());
  return body(rt.io());
}

// Holds a service lease (runtime::acquire_service) for its lifetime.
class service_lease {
 public:
  explicit service_lease(const runtime& rt) : rt_(rt) { rt_.acquire_service(); }
  ~service_lease() { rt_.release_service(); }
  service_lease(const service_lease&) = delete;
  service_lease& operator=(const service_lease&) = delete;

 private:
  const runtime& rt_;
};

}  // namespace agio
