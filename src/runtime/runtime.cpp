#include "agio/runtime/runtime.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <exception>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "agio/detail/bulk_copy.hpp"
#include "agio/runtime/memory_buffer.hpp"
#include "agio/spec/status.hpp"
#include "proxy/controller.hpp"
#include "agio/store/store.hpp"
#include "runtime/numa_memory.hpp"
#include "runtime/platform.hpp"

namespace agio {
namespace {

constexpr std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// Carves aligned pieces out of one allocation.
class carver {
 public:
  explicit carver(std::byte* base = nullptr) : base_(base) {}
  template <class T>
  T* take(std::size_t count, std::size_t alignment = 64) {
    offset_ = round_up(offset_, alignment);
    T* p = base_ ? reinterpret_cast<T*>(base_ + offset_) : nullptr;
    offset_ += count * sizeof(T);
    return p;
  }
  std::size_t size() const { return offset_; }

 private:
  std::byte* base_;
  std::size_t offset_ = 0;
};

const char* opcode_name(std::uint32_t op) {
  switch (static_cast<spec::opcode>(op)) {
    case spec::opcode::read: return "read";
    case spec::opcode::write: return "write";
    case spec::opcode::flush: return "flush";
  }
  return "command";
}

}  // namespace

struct runtime::state {
  struct attached {
    device_options options;
    std::unique_ptr<agio::store> store;
  };
  struct allocation {
    void* p;
    bool pinned;
  };

  runtime_options options;
  std::unique_ptr<platform> plat;
  std::string no_gpu_reason;
  std::vector<attached> devices;
  proxy::iova_table iova;
  std::mutex allocations_mutex;
  std::vector<allocation> allocations;
  std::unique_ptr<memory_buffer> host_tier_memory;  // runtime_options::host_tier_bytes
  // run_job's start marks (job_start_words of them; GPU backend only), those not handed out,
  // and the last ticket taken; under job_marks_mutex.
  std::uint64_t* job_start_marks = nullptr;
  std::mutex job_marks_mutex;
  std::vector<std::uint32_t> free_job_marks;
  std::uint64_t job_tickets = 0;

  // Pinned host memory handed out (allocate_host, map_host): registered for I/O, given back by
  // free() or the destructor.
  void keep_host(void* p, std::size_t bytes) {
    {
      std::lock_guard lock(allocations_mutex);
      allocations.push_back({p, true});
    }
    iova.add({reinterpret_cast<std::uint64_t>(p), bytes, proxy::region_kind::host});
  }

  bool running = false;
  bool stopped = false;
  io::io_state io{};
  // `io` as the handle of the runtime's completion mode (the other one is never handed out).
  io_handle service_handle{};
  waiting_io_handle waiting_handle{};
  std::uint32_t service_workers = 0;
  // completion_mode::on_demand. The service of generation `service_generation` runs, or is
  // queued to, unless *service_quit names it (then it exits, or has, once drained); `leases`
  // counts the holders; no lease launches it outside start()..stop() (`leases_open`). Under
  // lease_mutex; *service_quit is in host memory the device reads.
  std::mutex lease_mutex;
  bool leases_open = false;
  std::uint32_t leases = 0;
  std::uint32_t service_generation = 0;
  std::uint32_t* service_quit = nullptr;
  std::vector<void*> pinned_blocks;
  void* device_block = nullptr;
  io::error_record* first_error = nullptr;
  std::unique_ptr<proxy::nvme_controller> proxy;
  std::vector<std::uint32_t> first_qp;
  std::string stop_failure;
  std::vector<std::pair<std::uint64_t, std::function<void()>>> stop_hooks;
  std::uint64_t last_hook_id = 0;

  // How much shared state start() sets up.
  struct sizes {
    std::uint32_t queue_pairs = 0;  // over all devices
    std::uint32_t records = 0;      // transaction records
    std::size_t list_bytes = 0;     // one PRP list, a power of two so that it never spans a page
    // The completion service's workers: those that retire completions, one queue pair or more
    // each, and as many again that submit what is posted to them, a ring each (none when
    // waiters retire completions).
    std::uint32_t retiring_workers = 0;
    std::uint32_t posted_rings = 0;
  };

  // The steps of runtime::start(), in order.
  sizes size_shared_state() const;
  std::vector<queue::queue_pair> allocate_device_state(const sizes& sized);
  std::vector<proxy::device_endpoint> allocate_queue_pairs(const sizes& sized, std::vector<queue::queue_pair>& qps,
                                                           std::vector<io::device_info>& infos);
  void publish_shared_state(const sizes& sized, const std::vector<queue::queue_pair>& qps,
                            const std::vector<io::device_info>& infos);
  void create_controller(const sizes& sized, std::vector<proxy::device_endpoint> endpoints);
  void start_service(const sizes& sized);
  // On demand, under lease_mutex: when the current generation was told to quit, launches the
  // next one and tells the current one to leave at once (the next is queued behind it).
  void launch_next_generation_if_told_to_quit() {
    if (detail::load<detail::scope::system>(service_quit[io::quit_word], detail::relaxed) != service_generation) return;
    detail::store<detail::scope::system>(service_quit[io::superseded_word], service_generation, detail::release);
    plat->start_service(io, service_workers, ++service_generation);
  }

  // Lays out the device-side memory in `c`: every queue pair's states, the transaction
  // records, control, counters and the tables the controller handle points to.
  void lay_out_device_state(carver& c, const sizes& sized, std::vector<queue::queue_pair>* qps);
  // Sets up queue pair `i` of device `dev` in a pinned block of its own.
  void allocate_queue_pair(const attached& dev, std::uint32_t i, const sizes& sized, queue::queue_pair& qp);

  void free_queues() {
    proxy.reset();
    for (void* p : pinned_blocks) {
      iova.remove(reinterpret_cast<std::uint64_t>(p));
      plat->free_pinned(p);
    }
    pinned_blocks.clear();
    if (device_block) plat->free_device(device_block);
    device_block = nullptr;
  }
};

runtime::state::sizes runtime::state::size_shared_state() const {
  sizes sized;
  std::uint64_t total_entries = 0;
  for (const auto& d : devices) {
    sized.queue_pairs += d.options.queue_pairs;
    total_entries += std::uint64_t{d.options.queue_pairs} * d.options.queue_depth;
  }
  // A record costs 88 bytes of device memory; the default lets thousands of threads each hold
  // hundreds of requests (16 CPU threads x 512) for 5.5 MiB.
  if (options.transaction_records > 0x7fff'ffffu) {
    throw std::invalid_argument("agio: transaction_records must be at most 2^31 - 1");
  }
  sized.records = options.transaction_records != 0
                      ? options.transaction_records
                      : static_cast<std::uint32_t>(std::clamp<std::uint64_t>(4 * total_entries, 65'536, 0x7fff'ffff));
  const std::uint32_t list_entries = options.max_transfer_bytes / spec::page_bytes;
  sized.list_bytes = std::bit_ceil(std::size_t{list_entries} * 8);
  if (options.posted_slots < 4 || options.posted_slots > 65'536 || !std::has_single_bit(options.posted_slots)) {
    throw std::invalid_argument("agio: posted_slots must be a power of two in 4..65536");
  }
  sized.retiring_workers = options.service_warps != 0 ? std::min(options.service_warps, sized.queue_pairs)
                                                      : plat->default_service_workers(sized.queue_pairs);
  sized.posted_rings = options.completion == completion_mode::waiters ? 0 : sized.retiring_workers;
  return sized;
}

void runtime::state::lay_out_device_state(carver& c, const sizes& sized, std::vector<queue::queue_pair>* qps) {
  auto* info = c.take<io::device_info>(devices.size());
  auto* pairs = c.take<queue::queue_pair>(sized.queue_pairs);
  auto* recs = c.take<io::transaction_record>(sized.records);
  auto* control = c.take<io::runtime_control>(1);
  auto* counters = c.take<io::shared_counters>(devices.size());
  // Zeros are free slots (posted_ring.hpp).
  io.posted.slots = c.take<queue::posted_slot>(std::size_t{sized.posted_rings} * options.posted_slots);
  io.posted.cursors = c.take<queue::posted_cursor>(sized.posted_rings, alignof(queue::posted_cursor));
  io.posted.count = sized.posted_rings;
  io.posted.slots_per_ring = options.posted_slots;
  std::uint32_t q = 0;
  for (const auto& d : devices) {
    for (std::uint32_t i = 0; i < d.options.queue_pairs; ++i, ++q) {
      auto* states = c.take<std::uint64_t>(d.options.queue_depth);
      auto* cid_to_tx = c.take<std::uint32_t>(d.options.queue_depth);
      auto* control_q = c.take<queue::sq_control>(1);
      auto* poll = c.take<queue::cq_poll_state>(1);
      if (qps) {
        (*qps)[q].states = states;
        (*qps)[q].cid_to_tx = cid_to_tx;
        (*qps)[q].control = control_q;
        (*qps)[q].poll = poll;
      }
    }
  }
  io.devices = info;
  io.queue_pairs = pairs;
  io.records = recs;
  io.control = control;
  io.counters = counters;
}

// One block of device memory, sized by a first pass of the layout, carved by a second.
std::vector<queue::queue_pair> runtime::state::allocate_device_state(const sizes& sized) {
  carver sizing;
  lay_out_device_state(sizing, sized, nullptr);
  device_block = plat->allocate_device(sizing.size());
  std::vector<queue::queue_pair> qps(sized.queue_pairs);
  carver device_carver(static_cast<std::byte*>(device_block));
  lay_out_device_state(device_carver, sized, &qps);
  return qps;
}

// Transport memory, one pinned block per queue pair, and what the controller and the device
// handle learn of each device.
std::vector<proxy::device_endpoint> runtime::state::allocate_queue_pairs(const sizes& sized,
                                                                         std::vector<queue::queue_pair>& qps,
                                                                         std::vector<io::device_info>& infos) {
  std::vector<proxy::device_endpoint> endpoints;
  std::uint32_t q = 0;
  for (const attached& dev : devices) {
    proxy::device_endpoint endpoint;
    endpoint.backing = dev.store.get();
    endpoint.max_transfer_bytes = options.max_transfer_bytes;
    first_qp.push_back(q);
    for (std::uint32_t i = 0; i < dev.options.queue_pairs; ++i, ++q) {
      allocate_queue_pair(dev, i, sized, qps[q]);
      endpoint.queue_pairs.push_back(qps[q]);
    }
    io::device_info info{};
    info.capacity_blocks = dev.store->capacity_bytes() / dev.store->lba_bytes();
    info.first_qp = first_qp.back();
    info.qp_count = dev.options.queue_pairs;
    info.lba_bytes = dev.store->lba_bytes();
    info.max_blocks = options.max_transfer_bytes / info.lba_bytes;
    info.nsid = 1;
    infos.push_back(info);
    endpoints.push_back(std::move(endpoint));
  }
  return endpoints;
}

void runtime::state::allocate_queue_pair(const attached& dev, std::uint32_t i, const sizes& sized,
                                         queue::queue_pair& qp) {
  const std::uint32_t depth = dev.options.queue_depth;
  const std::uint32_t cq_depth = queue::cq_depth_for(depth);
  const std::uint32_t slot_bytes = options.max_transfer_bytes;
  const auto lay_out = [&](carver& c, queue::queue_pair& into) {
    into.sq = c.take<spec::command>(depth, 4096);
    into.cq = c.take<spec::completion>(cq_depth, 4096);
    into.sq_tail_doorbell = c.take<std::uint32_t>(1, 64);
    into.cq_head_doorbell = c.take<std::uint32_t>(1, 64);
    into.buffers = c.take<queue::declared_buffer>(depth, 64);
    into.deferred = c.take<queue::deferred_copy>(depth, 64);
    into.stamps = options.trip_stamps ? c.take<queue::trip_stamp>(depth, 64) : nullptr;
    into.prp_lists = c.take<std::uint64_t>(std::size_t{depth} * sized.list_bytes / 8, 4096);
    into.bounce = c.take<std::byte>(std::size_t{depth} * slot_bytes, 4096);
    // The retirer copies zero-copy reads out of the store itself, checking its sequences.
    into.view = dev.store->host_view();
    into.view_sequences = dev.store->view_sequences();
  };
  queue::queue_pair sizing_qp{};
  carver pinned_sizing;
  lay_out(pinned_sizing, sizing_qp);
  void* block = plat->allocate_pinned(pinned_sizing.size());
  pinned_blocks.push_back(block);
  iova.add({reinterpret_cast<std::uint64_t>(block), pinned_sizing.size(), proxy::region_kind::host});
  carver pinned(static_cast<std::byte*>(block));
  lay_out(pinned, qp);
  qp.prp_lists_iova = reinterpret_cast<std::uint64_t>(qp.prp_lists);
  qp.slot_bytes = slot_bytes;
  qp.stage_writes = options.mover == data_mover::gpu_warps ? 1 : 0;
  qp.depth = depth;
  qp.cq_depth = cq_depth;
  qp.prp_list_entries = static_cast<std::uint32_t>(sized.list_bytes / 8);
  qp.qid = i + 1;

  // Entry k starts EMPTY and free for position k; the service's window starts at phase 1.
  std::vector<std::uint64_t> states(depth);
  for (std::uint32_t k = 0; k < depth; ++k) states[k] = queue::sqe_word(k, queue::sqe_empty);
  plat->copy_to_device(qp.states, states.data(), depth * sizeof(std::uint64_t));
  const queue::cq_poll_state poll{0, 1, 0, 0};
  plat->copy_to_device(qp.poll, &poll, sizeof poll);
}

// The tables and control words device threads read, the first-error record the host reads,
// and the handle's limits.
void runtime::state::publish_shared_state(const sizes& sized, const std::vector<queue::queue_pair>& qps,
                                          const std::vector<io::device_info>& infos) {
  plat->copy_to_device(const_cast<io::device_info*>(io.devices), infos.data(), infos.size() * sizeof(io::device_info));
  plat->copy_to_device(const_cast<queue::queue_pair*>(io.queue_pairs), qps.data(),
                       qps.size() * sizeof(queue::queue_pair));
  io::runtime_control control{};
  control.service_mode = io::service_run;
  control.records_available = static_cast<std::int32_t>(sized.records);
  plat->copy_to_device(io.control, &control, sizeof control);

  void* error_block = plat->allocate_pinned(sizeof(io::error_record));
  pinned_blocks.push_back(error_block);
  first_error = static_cast<io::error_record*>(error_block);
  io.first_error = first_error;
  io.device_count = static_cast<std::uint32_t>(devices.size());
  io.queue_pair_count = sized.queue_pairs;
  io.record_count = sized.records;
  io.submit_timeout_ns = std::uint64_t{options.submit_timeout_ms} * 1'000'000;
  io.wait_timeout_ns = std::uint64_t{options.wait_timeout_ms} * 1'000'000;
  io.lanes_per_queue_log2 = static_cast<std::uint32_t>(std::countr_zero(options.lanes_per_queue));
  io.wait_together_ns = options.wait_together_ns;
  io.service_staging_slots = options.service_staging_bytes / detail::warp::bulk_staging::slot_bytes;
}

// The software NVMe controller's threads, serving the queue pairs from now on.
void runtime::state::create_controller(const sizes& sized, std::vector<proxy::device_endpoint> endpoints) {
  proxy::controller_options copts;
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  copts.threads = options.controller_threads != 0
                      ? options.controller_threads
                      : std::clamp((sized.queue_pairs + 1) / 2, 1u, std::max(1u, cores / 2));
  copts.mover = options.mover;
  copts.spin_us = options.controller_spin_us;
  copts.copy_depth = options.controller_copy_depth;
  proxy = std::make_unique<proxy::nvme_controller>(std::move(endpoints), iova, copts,
                                                   [p = plat.get()] { return p->make_copy_engine(); });
}

// The completion service, unless waiters retire completions, and the handles of both modes.
void runtime::state::start_service(const sizes& sized) {
  io.retired_by =
      options.completion == completion_mode::waiters ? io::retirement::by_waiters : io::retirement::by_service;
  service_workers = sized.retiring_workers + sized.posted_rings;
  plat->reserve_thread_stack(options.gpu_thread_stack_bytes);
  if (options.completion != completion_mode::waiters) plat->set_up_device_printf_and_heap();
  if (options.completion == completion_mode::on_demand) {
    // No lease is held yet: generation 0 counts as told to quit, so the first lease launches 1.
    service_quit = static_cast<std::uint32_t*>(plat->allocate_pinned(2 * sizeof(std::uint32_t)));
    io.service_quit = service_quit;
    std::lock_guard lock(lease_mutex);
    leases_open = true;
  } else if (io.retired_by == io::retirement::by_service) {
    plat->start_service(io, service_workers, 0);
  }
  service_handle = io_handle{io};
  waiting_handle = waiting_io_handle{io};
}

runtime::runtime(runtime_options options) : s_(std::make_unique<state>()) {
  s_->options = options;
  if (options.max_transfer_bytes < spec::page_bytes || options.max_transfer_bytes > (2u << 20) ||
      options.max_transfer_bytes % spec::page_bytes != 0) {
    throw std::invalid_argument("agio: max_transfer_bytes must be a multiple of 4096 from 4 KiB to 2 MiB");
  }
  if (!std::has_single_bit(options.lanes_per_queue) || options.lanes_per_queue > 32) {
    throw std::invalid_argument("agio: lanes_per_queue must be a power of two from 1 to 32");
  }
  if (options.service_staging_bytes % detail::warp::bulk_staging::slot_bytes != 0 ||
      options.service_staging_bytes > detail::warp::bulk_staging::max_slots * detail::warp::bulk_staging::slot_bytes) {
    throw std::invalid_argument("agio: service_staging_bytes must be a multiple of 4096 up to 128 KiB, not " +
                                std::to_string(options.service_staging_bytes));
  }
  if (options.backend != backend::cpu) s_->plat = make_gpu_platform(s_->no_gpu_reason);
  if (!s_->plat) {
    if (options.backend == backend::gpu)
      throw std::runtime_error("agio: GPU backend requested but " + s_->no_gpu_reason);
    s_->plat = make_cpu_platform();
  }
  if (s_->plat->kind() == backend::gpu) {
    s_->job_start_marks =
        static_cast<std::uint64_t*>(s_->plat->allocate_pinned(job_start_words * sizeof(std::uint64_t)));
    for (std::uint32_t k = job_start_words; k-- > 0;) s_->free_job_marks.push_back(k);
  }
  if (options.host_tier_bytes != 0) {
    s_->host_tier_memory = std::make_unique<memory_buffer>(*this, options.host_tier_bytes, options.host_tier_numa_node);
  }
}

memory_buffer* runtime::host_tier_memory() const { return s_->host_tier_memory.get(); }

runtime::~runtime() {
  try {
    stop();
  } catch (const std::exception&) {
    // A destructor cannot report; stop() already made every write it could durable.
  }
  s_->host_tier_memory.reset();  // gives its regions back through free(), while the state is whole
  s_->free_queues();
  if (s_->service_quit) s_->plat->free_pinned(s_->service_quit);
  if (s_->job_start_marks) s_->plat->free_pinned(s_->job_start_marks);
  for (const auto& a : s_->allocations) {
    if (a.pinned) {
      s_->plat->free_pinned(a.p);
    } else {
      s_->plat->free_device(a.p);
    }
  }
}

std::uint32_t runtime::attach(const device_options& device) {
  if (s_->running || s_->stopped) throw std::logic_error("agio: attach devices before start()");
  if (device.queue_pairs == 0 || device.queue_pairs > 1024) {
    throw std::invalid_argument("agio: " + device.uri + ": queue_pairs must be 1..1024");
  }
  if (device.queue_depth < 2 || device.queue_depth > 4096) {
    throw std::invalid_argument("agio: " + device.uri + ": queue_depth must be 2..4096");
  }
  platform* plat = s_->plat.get();
  host_memory memory{[plat](std::size_t n) { return plat->allocate_pinned(n); },
                     [plat](void* p) { plat->free_pinned(p); }};
  s_->devices.push_back({device, open_store(device.uri, memory)});
  return static_cast<std::uint32_t>(s_->devices.size() - 1);
}

void runtime::start() {
  state& s = *s_;
  if (s.running) return;
  if (s.stopped) throw std::logic_error("agio: a runtime starts once; make a new one");
  if (s.devices.empty()) throw std::logic_error("agio: attach at least one device before start()");
  const state::sizes sized = s.size_shared_state();
  std::vector<queue::queue_pair> qps = s.allocate_device_state(sized);
  std::vector<io::device_info> infos;
  std::vector<proxy::device_endpoint> endpoints = s.allocate_queue_pairs(sized, qps, infos);
  s.publish_shared_state(sized, qps, infos);
  s.create_controller(sized, std::move(endpoints));
  s.start_service(sized);
  s.running = true;
}

std::uint64_t runtime::add_stop_hook(std::function<void()> hook) {
  const std::uint64_t id = ++s_->last_hook_id;
  s_->stop_hooks.emplace_back(id, std::move(hook));
  return id;
}

void runtime::remove_stop_hook(std::uint64_t id) {
  std::erase_if(s_->stop_hooks, [id](const auto& h) { return h.first == id; });
}

void runtime::stop() {
  state& s = *s_;
  if (!s.running) return;
  std::exception_ptr hook_failure;
  // Last added first: what was built on something runs its hook before it (a cache above a
  // host tier writes its lines into the tier before the tier writes them to storage).
  for (auto it = s.stop_hooks.rbegin(); it != s.stop_hooks.rend(); ++it) {
    const auto& hook = it->second;
    try {
      hook();
    } catch (...) {
      if (!hook_failure) hook_failure = std::current_exception();
    }
  }
  s.running = false;
  s.stopped = true;
  platform& plat = *s.plat;
  // One deadline for the rest of stop(): store I/O still unfinished then (a hung device) is
  // aborted by the controller, which still answers the queues, so the service can retire it.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(s.options.stop_timeout_ms);
  s.proxy->abort_store_io_at(deadline);
  // No new requests (the draining service closes the submission gate); the service retires
  // what is in flight and then exits.
  const std::uint32_t drain = io::service_drain;
  plat.copy_to_device(&s.io.control->service_mode, &drain, sizeof drain);
  // Without a service, one runs now, taking turns with any thread still waiting.
  if (s.io.retired_by == io::retirement::by_waiters) plat.start_service(s.io, s.service_workers, 0);
  // On demand, one runs to drain (queued behind the last generation, if that has not ended).
  if (s.service_quit) {
    std::lock_guard lock(s.lease_mutex);
    s.leases_open = false;
    s.launch_next_generation_if_told_to_quit();
  }
  // Time for the service to retire the completions of commands aborted at the deadline.
  constexpr std::uint32_t retire_grace_ms = 100;
  if (!plat.join_service(s.options.stop_timeout_ms + retire_grace_ms)) {
    const std::uint32_t exit_now = io::service_exit;
    plat.copy_to_device(&s.io.control->service_mode, &exit_now, sizeof exit_now);
    plat.join_service(60'000);
    s.stop_failure = "requests were still in flight " + std::to_string(s.options.stop_timeout_ms) +
                     " ms after stop(); their waiters get timeout, or stopped in wait_until_done";
  }
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
  s.proxy->stop(static_cast<std::uint32_t>(std::max<std::chrono::milliseconds::rep>(left.count(), 0)));
  if (const std::uint64_t abandoned = s.proxy->abandoned_io(); abandoned != 0) {
    // The store or the copy engine may still write into the bounce slots of those I/Os, so
    // the queue memory is kept for the rest of the process rather than freed under them, in
    // a list that is never freed (leak checkers see it as reachable).
    static std::mutex kept_mutex;
    static auto* kept = new std::vector<void*>();
    {
      std::lock_guard lock(kept_mutex);
      kept->insert(kept->end(), s.pinned_blocks.begin(), s.pinned_blocks.end());
    }
    s.pinned_blocks.clear();
    if (!s.stop_failure.empty()) s.stop_failure += "; ";
    s.stop_failure += std::to_string(abandoned) +
                      " store I/Os were abandoned in flight (aborted at stop's deadline of " +
                      std::to_string(s.options.stop_timeout_ms) +
                      " ms, or by a failed controller thread); the queue memory they may still write into is leaked";
  }
  // Threads still waiting until their requests finish learn that none will any more.
  const std::uint32_t over = 1;
  plat.copy_to_device(&s.io.control->stopped, &over, sizeof over);
  if (hook_failure) std::rethrow_exception(hook_failure);
  if (!s.stop_failure.empty()) throw io_error("agio: " + s.stop_failure);
}

bool runtime::running() const { return s_->running; }

void runtime::acquire_service() const {
  state& s = *s_;
  if (!s.service_quit) return;
  std::lock_guard lock(s.lease_mutex);
  if (s.leases++ != 0 || !s.leases_open) return;
  s.launch_next_generation_if_told_to_quit();
}

void runtime::release_service() const {
  state& s = *s_;
  if (!s.service_quit) return;
  std::lock_guard lock(s.lease_mutex);
  if (s.leases == 0) return;  // taken before start(), when leases were not counted
  if (--s.leases == 0 && s.leases_open)
    detail::store<detail::scope::system>(s.service_quit[io::quit_word], s.service_generation, detail::release);
}

void runtime::release_service_after(void* stream) const {
  if (!s_->service_quit) return;
  s_->plat->call_after_stream(
      stream, [](void* rt) { static_cast<const runtime*>(rt)->release_service(); }, const_cast<runtime*>(this));
}

const io_handle& runtime::io() const {
  if (!s_->running) throw std::logic_error("agio: io() is valid between start() and stop()");
  if (s_->options.completion == completion_mode::waiters) {
    throw std::logic_error(
        "agio: io() is the handle of completion_mode::service and on_demand; this runtime runs with "
        "completion_mode::waiters: use waiting_io()");
  }
  return s_->service_handle;
}

const waiting_io_handle& runtime::waiting_io() const {
  if (!s_->running) throw std::logic_error("agio: waiting_io() is valid between start() and stop()");
  if (s_->options.completion != completion_mode::waiters) {
    throw std::logic_error(
        "agio: waiting_io() is the handle of completion_mode::waiters; this runtime runs with a completion "
        "service: use io()");
  }
  return s_->waiting_handle;
}

completion_mode runtime::completion() const { return s_->options.completion; }

runtime::job_start_mark runtime::take_job_start_mark() const {
  state& s = *s_;
  if (!s.job_start_marks) return {};
  std::lock_guard lock(s.job_marks_mutex);
  if (s.free_job_marks.empty()) {
    throw std::runtime_error("agio: " + std::to_string(job_start_words) +
                             " run_job calls at once on one runtime, or kernels that never started, hold every "
                             "start mark");
  }
  const std::uint32_t k = s.free_job_marks.back();
  s.free_job_marks.pop_back();
  return {s.job_start_marks + k, ++s.job_tickets, s.options.job_start_timeout_ms};
}

void runtime::give_back_job_start_mark(const job_start_mark& mark) const {
  state& s = *s_;
  if (!mark.word) return;
  std::lock_guard lock(s.job_marks_mutex);
  s.free_job_marks.push_back(static_cast<std::uint32_t>(mark.word - s.job_start_marks));
}

void* runtime::allocate_device(std::size_t bytes) {
  void* p = s_->plat->allocate_device(bytes);
  {
    std::lock_guard lock(s_->allocations_mutex);
    s_->allocations.push_back({p, false});
  }
  s_->iova.add({reinterpret_cast<std::uint64_t>(p), bytes, s_->plat->classify(p)});
  return p;
}

void* runtime::allocate_host(std::size_t bytes) { return allocate_host(bytes, -1); }

void* runtime::allocate_host(std::size_t bytes, int numa_node) {
  void* p =
      numa_node < 0 ? s_->plat->allocate_pinned(bytes) : s_->plat->adopt_mapping(map_on_node(bytes, numa_node), bytes);
  s_->keep_host(p, bytes);
  return p;
}

void* runtime::map_host(int descriptor, std::size_t bytes, int numa_node) {
  void* p = s_->plat->adopt_mapping(map_shared(descriptor, bytes, numa_node), bytes);
  s_->keep_host(p, bytes);
  return p;
}

void runtime::free(void* p) {
  std::lock_guard lock(s_->allocations_mutex);
  auto it = std::find_if(s_->allocations.begin(), s_->allocations.end(), [p](const auto& a) { return a.p == p; });
  if (it == s_->allocations.end()) throw std::invalid_argument("agio: free() of memory the runtime did not allocate");
  s_->iova.remove(reinterpret_cast<std::uint64_t>(p));
  if (it->pinned) {
    s_->plat->free_pinned(p);
  } else {
    s_->plat->free_device(p);
  }
  s_->allocations.erase(it);
}

void runtime::register_memory(void* p, std::size_t bytes) {
  s_->iova.add({reinterpret_cast<std::uint64_t>(p), bytes, s_->plat->classify(p)});
}

void runtime::unregister_memory(void* p) { s_->iova.remove(reinterpret_cast<std::uint64_t>(p)); }

void runtime::register_replaceable(void* p, std::size_t bytes) {
  s_->iova.add({reinterpret_cast<std::uint64_t>(p), bytes, s_->plat->classify(p), true});
}

void runtime::unregister_replaceable(void* p) { s_->iova.remove_replaceable(reinterpret_cast<std::uint64_t>(p)); }

bool runtime::registered(const void* p, std::size_t bytes) const {
  return s_->iova.holds(reinterpret_cast<std::uint64_t>(p), bytes);
}

void runtime::copy_to_device(void* dst, const void* src, std::size_t bytes) {
  s_->plat->copy_to_device(dst, src, bytes);
}
void runtime::copy_to_host(void* dst, const void* src, std::size_t bytes) { s_->plat->copy_to_host(dst, src, bytes); }

// The first failed request's fields, as the device side recorded them, with what the host
// knows beside them: the device's URI and the store's own cause.
failed_request runtime::failure_fields(const io::error_record& e) const {
  const state& s = *s_;
  failed_request f;
  f.device = e.device;
  if (e.device < s.devices.size()) f.uri = s.devices[e.device].options.uri;
  f.opcode = static_cast<spec::opcode>(e.opcode);
  f.lba = e.lba;
  f.blocks = e.blocks;
  f.buffer = e.buffer;
  f.byte_offset = e.byte_offset;
  f.byte_count = e.byte_count;
  f.result = status::unpack(e.result);
  f.refusal = e.cause;
  if (e.cause == io::failure_cause::completed && s.proxy && e.device < s.devices.size()) {
    const proxy::store_failure store = s.proxy->first_store_error(e.device);
    f.store_error = store.what;
    f.error_number = store.error_number;
  }
  return f;
}

namespace {

// What the caller did wrong with a request's buffer, when the NVMe status points at it: the
// controller answers data transfer error for memory it may not reach and PRP offset invalid for
// a buffer that is not dword aligned (NVMe PRP rules). Empty when the buffer is not the cause.
std::string buffer_fault(const failed_request& f, std::uint32_t lba_bytes, const proxy::iova_table& iova) {
  if (f.result.result != outcome::nvme_error || f.buffer == 0 || f.refusal != io::failure_cause::completed) return {};
  if (spec::status_code_type(f.result.nvme_status) != spec::status_type::generic) return {};
  std::ostringstream msg;
  switch (spec::status_code(f.result.nvme_status)) {
    case spec::generic::prp_offset_invalid:
      if (f.buffer % 4 == 0) return {};
      msg << "buffer misaligned: offset " << f.buffer % 4 << ", needs 4-byte alignment (buffer 0x" << std::hex
          << f.buffer << ")";
      return msg.str();
    case spec::generic::data_transfer_error: {
      proxy::iova_table::reader reader(iova);
      const std::uint64_t bytes = std::uint64_t{f.blocks} * lba_bytes;
      if (reader.translate(f.buffer, bytes)) return {};
      if (reader.translate(f.buffer, 1)) {
        msg << "buffer 0x" << std::hex << f.buffer << std::dec << " of " << bytes
            << " bytes runs past the end of the memory registered with the runtime";
      } else {
        msg << "buffer not registered with the runtime (0x" << std::hex << f.buffer << std::dec
            << "; use allocate_device, allocate_host or register_memory)";
      }
      return msg.str();
    }
    default: return {};
  }
}

}  // namespace

// The first failed request in words: what the caller asked for, and why it failed or was refused.
std::string runtime::describe_failure(const failed_request& f) const {
  const state& s = *s_;
  std::ostringstream msg;
  if (f.refusal != io::failure_cause::no_such_device) msg << "device " << f.device << " (" << f.uri << "): ";
  const char* op = opcode_name(static_cast<std::uint32_t>(f.opcode));
  if (f.refusal == io::failure_cause::misaligned) {
    msg << op << " of " << f.byte_count << " bytes at byte offset " << f.byte_offset;
  } else {
    msg << op << " of " << f.blocks << " blocks at LBA " << f.lba;
  }
  if (f.refusal != io::failure_cause::completed) msg << " refused (" << agio::describe(f.result.result) << "): ";
  switch (f.refusal) {
    case io::failure_cause::completed: {
      msg << " failed: ";
      const std::string fault = buffer_fault(f, s.devices.at(f.device).store->lba_bytes(), s.iova);
      if (!fault.empty()) {
        msg << fault << "; " << to_string(f.result);
      } else {
        msg << to_string(f.result);
      }
      if (!f.store_error.empty()) msg << "; store reported: " << f.store_error;
      break;
    }
    case io::failure_cause::zero_blocks: msg << op << " of 0 blocks"; break;
    case io::failure_cause::too_many_blocks:
      msg << "transfer of " << f.blocks << " blocks exceeds the device's maximum of "
          << s.options.max_transfer_bytes / s.devices.at(f.device).store->lba_bytes() << " (max_transfer_bytes)";
      break;
    case io::failure_cause::no_such_device:
      msg << "device " << f.device << " does not exist (" << s.devices.size() << " attached)";
      break;
    case io::failure_cause::no_record:
      msg << "all " << s.io.record_count << " transaction records in use; raise "
          << "runtime_options::transaction_records (" << sizeof(io::transaction_record)
          << " bytes of device memory each) or wait on "
          << "transactions before issuing more";
      break;
    case io::failure_cause::no_queue_entry:
      msg << "every queue of the device stayed full for submit_timeout_ms (" << s.options.submit_timeout_ms << " ms)";
      break;
    case io::failure_cause::misaligned: {
      const std::uint32_t lba_bytes = s.devices.at(f.device).store->lba_bytes();
      if (f.byte_offset % lba_bytes != 0) {
        msg << "byte offset " << f.byte_offset << " is not a multiple of the device's " << lba_bytes << "-byte LBA";
      } else {
        msg << "size " << f.byte_count << " is not a multiple of the device's " << lba_bytes << "-byte LBA";
      }
      break;
    }
  }
  return msg.str();
}

void runtime::check() const {
  const state& s = *s_;
  std::optional<failed_request> request;
  if (s.first_error != nullptr &&
      std::atomic_ref<std::uint32_t>(s.first_error->valid).load(std::memory_order_acquire) != 0) {
    request = failure_fields(*s.first_error);
  }
  const std::string words = request ? describe_failure(*request) : std::string();
  // A failed controller fails the requests it held, so its cause comes first.
  const std::string failure = s.proxy ? s.proxy->thread_failure() : std::string();
  if (!failure.empty()) {
    const std::string what =
        "agio: controller failure: " + failure + (request ? "; first failed request: " + words : std::string());
    if (request) throw io_error(what, std::move(*request), failure);
    throw io_error(what, failure);
  }
  if (request) throw io_error("agio: " + words, std::move(*request));
}

std::vector<device_counters> runtime::counters() const {
  const state& s = *s_;
  std::vector<device_counters> out;
  if (s.io.counters == nullptr) return out;
  std::vector<io::shared_counters> raw(s.devices.size());
  s.plat->copy_to_host(raw.data(), s.io.counters, raw.size() * sizeof(io::shared_counters));
  for (std::uint32_t d = 0; d < s.devices.size(); ++d) {
    device_counters c;
    c.uri = s.devices[d].options.uri;
    c.submitted = raw[d].submitted;
    c.completed = raw[d].completed;
    c.errors = raw[d].errors;
    c.rejected = raw[d].rejected;
    c.queue_full_retries = raw[d].queue_full_retries;
    c.bytes = raw[d].bytes;
    c.latency_log2_ns.assign(std::begin(raw[d].latency), std::end(raw[d].latency));
    c.trip = raw[d].trip;
    for (std::uint32_t q = 0; q < s.devices[d].options.queue_pairs && s.proxy; ++q) {
      const auto& qc = s.proxy->counters(d, q);
      c.queue_pairs.push_back(
          {qc.commands.load(std::memory_order_relaxed), qc.errors.load(std::memory_order_relaxed),
           qc.bytes_read.load(std::memory_order_relaxed), qc.bytes_written.load(std::memory_order_relaxed),
           qc.controller_ns.load(std::memory_order_relaxed), qc.store_ns.load(std::memory_order_relaxed)});
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::uint64_t runtime::requests_for_unknown_devices() const {
  const state& s = *s_;
  if (s.io.control == nullptr) return 0;
  std::uint64_t n = 0;
  s.plat->copy_to_host(&n, &s.io.control->unknown_device_requests, sizeof n);
  return n;
}

std::uint64_t device_counters::latency_quantile_ns(double q) const {
  std::uint64_t total = 0;
  for (auto n : latency_log2_ns) total += n;
  if (total == 0) return 0;
  const auto target = static_cast<std::uint64_t>(q * static_cast<double>(total));
  std::uint64_t seen = 0;
  for (std::size_t k = 0; k < latency_log2_ns.size(); ++k) {
    seen += latency_log2_ns[k];
    if (seen > target || seen == total) return std::uint64_t{2} << k;
  }
  return std::uint64_t{2} << (latency_log2_ns.size() - 1);
}

std::vector<device_description> runtime::devices() const {
  std::vector<device_description> out;
  for (const auto& d : s_->devices) {
    out.push_back({d.options.uri, d.store->capacity_bytes() / d.store->lba_bytes(), d.store->lba_bytes(),
                   d.options.queue_pairs, d.options.queue_depth});
  }
  return out;
}

agio::backend runtime::backend() const { return s_->plat->kind(); }

std::string runtime::describe() const {
  std::string d = s_->plat->describe();
  if (s_->plat->kind() == backend::cpu && !s_->no_gpu_reason.empty()) d += " (" + s_->no_gpu_reason + ")";
  return d;
}

}  // namespace agio
