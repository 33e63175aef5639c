#include "proxy/controller.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <pthread.h>
#include <sys/prctl.h>
#include <span>
#include <stdexcept>

#include "agio/detail/backoff.hpp"
#include "agio/queue/view_sequences.hpp"
#include "agio/spec/nvme.hpp"
#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"
#include "proxy/completion_post.hpp"
#include "proxy/data_path_plan.hpp"
#include "proxy/prp_walk.hpp"

namespace agio::proxy {
namespace {

using spec::status_type;

std::uint16_t generic_error(std::uint8_t code) { return spec::make_status(status_type::generic, code); }
std::uint16_t media_error(std::uint8_t code) { return spec::make_status(status_type::media, code); }
constexpr std::uint16_t ok_status = 0;

std::uint64_t steady_ns() {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

// Adds to a queue's counter. Each queue is served by one controller thread, its counters' only
// writer: a relaxed load and store, not a locked add (readers load them relaxed).
void count(std::atomic<std::uint64_t>& counter, std::uint64_t amount) {
  counter.store(counter.load(std::memory_order_relaxed) + amount, std::memory_order_relaxed);
}

template <class T>
T load_acquire(T& word) {
  return std::atomic_ref<T>(word).load(std::memory_order_acquire);
}

// What names a command in the store and copy-engine I/Os of one controller thread: its queue's
// index among the thread's queues, and its identifier.
std::uint64_t command_tag(std::uint32_t queue, std::uint16_t cid) { return std::uint64_t{queue} << 16 | cid; }
std::uint32_t queue_of(std::uint64_t tag) { return static_cast<std::uint32_t>(tag >> 16); }
std::uint16_t cid_of(std::uint64_t tag) { return static_cast<std::uint16_t>(tag & 0xffffu); }

// Keeps a store channel or copy engine that still has I/O in flight for the rest of the
// process: destroying it would free or unmap what the kernel or the GPU may still write. Held
// by a list that is itself never freed, so leak checkers see it as reachable.
template <class T>
void keep_forever(std::unique_ptr<T> object) {
  static std::mutex mutex;
  static auto* kept = new std::vector<std::unique_ptr<T>>();
  std::lock_guard lock(mutex);
  kept->push_back(std::move(object));
}

}  // namespace

struct nvme_controller::worker {
  struct command_state {
    spec::opcode op = spec::opcode::read;
    then next = then::complete;
    std::uint32_t bytes = 0;
    std::uint64_t offset = 0;
    std::byte* io_buffer = nullptr;
    std::byte* user = nullptr;
    std::vector<segment> segments;       // host runs for scatter_to_user
    std::uint64_t declared_address = 0;  // a raw command's queue::declared_buffer
    std::uint64_t declared_bytes = 0;
    std::uint64_t fetched_ns = 0;
    std::uint64_t store_started_ns = 0;
  };

  struct queue_state {
    std::uint32_t device = 0;
    std::uint32_t index = 0;
    queue::queue_pair qp{};
    queue_counters* counters = nullptr;
    std::uint32_t sq_head = 0;
    completion_poster completions;
    std::vector<command_state> commands;    // by command identifier
    std::vector<std::uint8_t> outstanding;  // by command identifier: fetched, not yet completed
  };

  worker(nvme_controller& owner, const iova_table& iova, const controller_options& options, unsigned number)
      : owner_(owner), prps_(iova), options_(options), number_(number) {}

  nvme_controller& owner_;
  prp_walker prps_;
  controller_options options_;
  unsigned number_;
  // Not ok once the thread has failed or the abort deadline has passed: every command fetched
  // from then on is answered with this status at once, without the store.
  std::uint16_t refusal_ = ok_status;
  std::vector<queue_state> queues_;
  std::vector<std::unique_ptr<store_channel>> channels_;  // by device; null where not served
  std::vector<std::deque<store_io>> backlog_;             // by device: I/Os the channel had no room for
  std::unique_ptr<copy_engine> engine_;
  std::vector<store_result> results_ = std::vector<store_result>(256);
  // The time of the batch being handled (commands fetched from one doorbell, or results reaped
  // together), read once per batch rather than per command: a clock read costs about as much
  // as a small command's other bookkeeping. Commands of a batch share it in their counters.
  std::uint64_t batch_ns_ = 0;
  std::vector<std::uint64_t> copied_ = std::vector<std::uint64_t>(256);
  // Commands fetched from this thread's queues and not yet completed.
  std::uint32_t in_flight_ = 0;

  device_endpoint& device_of(const queue_state& q) { return owner_.devices_[q.device]; }

  // A store, copy-engine or memory failure must not leave the queues unserved: the thread
  // then answers everything with an error until stop(), without the parts that failed. Only
  // an exception out of that plain loop (memory exhausted again) ends the thread.
  void run() {
    name_and_sharpen_sleeps();
    try {
      serve();
      return;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    serve();
  }

  // Named so that top, perf and gdb tell the controller's threads apart. An idle thread's
  // sleeps of 1-20 us would end up to the default timer slack (50 us) late: with one request
  // in flight, a controller that fell asleep between two requests noticed the second's
  // doorbell some 30 us after it rang (4 KiB writes from a `ram:` store, H100, 2026-11-27).
  void name_and_sharpen_sleeps() const {
    const std::string name = "agio-ctl-" + std::to_string(number_);
    pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
    prctl(PR_SET_TIMERSLACK, controller_timer_slack_ns);
  }

  void fail(const std::string& what) {
    const std::string failure = "controller thread " + std::to_string(number_) + " failed: " + what;
    owner_.note_thread_failure(failure);
    for (const queue_state& q : queues_) owner_.note_store_error(q.device, failure);
    abandon(generic_error(spec::generic::internal_error));
    // What is left has nothing in flight; the thread never uses it again.
    for (auto& ch : channels_) ch.reset();
    engine_.reset();
  }

  // Answers every command fetched and not yet completed with `status`, and every later one;
  // lets go of channels and the copy engine that still hold I/O (keep_forever).
  void abandon(std::uint16_t status) {
    refusal_ = status;
    batch_ns_ = steady_ns();
    for (auto& waiting : backlog_) waiting.clear();
    for (auto& ch : channels_) {
      if (ch && ch->in_flight() != 0) {
        owner_.note_abandoned(ch->in_flight());
        keep_forever(std::move(ch));
      }
    }
    if (engine_ && engine_->in_flight() != 0) {
      owner_.note_abandoned(engine_->in_flight());
      keep_forever(std::move(engine_));
    }
    for (queue_state& q : queues_) {
      for (std::size_t cid = 0; cid < q.outstanding.size(); ++cid) {
        if (q.outstanding[cid] != 0) complete(q, static_cast<std::uint16_t>(cid), status);
      }
    }
  }

  void serve() {
    std::uint64_t idle_since = 0;
    std::uint32_t sleep_us = 1;
    for (;;) {
      bool worked = false;
      const bool stopping = owner_.stopping_.load(std::memory_order_acquire);
      // Relaxed: the deadline is a value of its own, published with no data behind it. The
      // clock is read only once there is a deadline, to keep it off the busy loop.
      const std::uint64_t abort_ns = owner_.abort_ns_.load(std::memory_order_relaxed);
      const bool past_deadline = abort_ns != no_deadline && steady_ns() >= abort_ns;
      if (past_deadline && refusal_ == ok_status) abandon(generic_error(spec::generic::aborted_sq_deletion));
      // Past the deadline of a stop nothing is left to retire completions: stop fetching.
      if (!(stopping && past_deadline)) {
        for (queue_state& q : queues_) worked |= fetch(q);
      }
      worked |= drive_stores();
      worked |= drive_copies();
      for (queue_state& q : queues_) worked |= retry_completions(q);
      if (stopping && quiet(past_deadline)) return;
      // Waiting for the store is not idleness: keep polling, since a sleep costs tens of
      // microseconds of timer slack on every request of a shallow queue.
      if (worked || waiting_for_store()) {
        idle_since = 0;
        sleep_us = 1;
        if (!worked) std::this_thread::yield();
        continue;
      }
      // Spin while work is likely to arrive soon, then sleep in growing steps so an idle
      // controller does not take a core from the threads it serves.
      const std::uint64_t now = steady_ns();
      if (idle_since == 0) idle_since = now;
      if (now - idle_since < std::uint64_t{options_.spin_us} * 1000) {
        std::this_thread::yield();
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(sleep_us));
        sleep_us = std::min(sleep_us * 2, options_.max_sleep_us);
      }
    }
  }

  bool waiting_for_store() const {
    for (const auto& ch : channels_) {
      if (ch && ch->in_flight() != 0) return true;
    }
    return engine_ && engine_->in_flight() != 0;
  }

  // Nothing fetched is still unfinished (and, before the deadline, no doorbell is pending).
  // Past the deadline, completions the queue has no room for are dropped.
  bool quiet(bool past_deadline) {
    if (waiting_for_store()) return false;
    for (const auto& b : backlog_) {
      if (!b.empty()) return false;
    }
    for (queue_state& q : queues_) {
      if (q.completions.holding() && !past_deadline) return false;
      if (!past_deadline && load_acquire(*q.qp.sq_tail_doorbell) != q.sq_head) return false;
    }
    return true;
  }

  bool fetch(queue_state& q) {
    // Acquire pairs with the submitters' system-scope release of the doorbell.
    const std::uint32_t doorbell = load_acquire(*q.qp.sq_tail_doorbell);
    if (doorbell >= q.qp.depth) {
      owner_.note_thread_failure("submission doorbell of queue " + std::to_string(q.qp.qid) + " written with " +
                                 std::to_string(doorbell) + ", beyond the queue depth");
      return false;
    }
    bool fetched = false;
    if (q.sq_head != doorbell) batch_ns_ = steady_ns();
    while (q.sq_head != doorbell) {
      spec::command cmd;
      std::memcpy(&cmd, &q.qp.sq[q.sq_head], sizeof cmd);
      q.sq_head = (q.sq_head + 1) % q.qp.depth;
      if (q.sq_head != doorbell) prefetch_records(q, q.qp.sq[q.sq_head].cid());
      if (cmd.cid() < q.qp.depth) {
        in_flight_ += 1 - q.outstanding[cmd.cid()];
        q.outstanding[cmd.cid()] = 1;
        if (q.qp.stamps != nullptr) stamp(q, cmd.cid(), &queue::trip_stamp::fetched, batch_ns_);
      }
      if (refusal_ == ok_status) {
        execute(q, cmd);
      } else {
        count(q.counters->commands, 1);
        complete(q, cmd.cid(), refusal_);
      }
      fetched = true;
    }
    return fetched;
  }

  // The records of the command fetched next, by its identifier: lines of pinned memory the GPU
  // wrote, and the command's state. Their misses start now, behind this command's work.
  static void prefetch_records(const queue_state& q, std::uint16_t cid) {
    if (cid >= q.qp.depth) return;
    __builtin_prefetch(&q.qp.deferred[cid], 1);
    __builtin_prefetch(&q.qp.buffers[cid], 1);
    __builtin_prefetch(&q.commands[cid], 1);
  }

  void execute(queue_state& q, const spec::command& cmd) {
    const std::uint16_t cid = cmd.cid();
    count(q.counters->commands, 1);
    if (cid >= q.qp.depth) return complete(q, cid, generic_error(spec::generic::invalid_field));
    command_state& state = q.commands[cid];
    state = command_state{};
    state.fetched_ns = batch_ns_;
    take_data_path_records(q, cid, state);
    device_endpoint& dev = device_of(q);
    if (cmd.nsid != dev.nsid) return complete(q, cid, generic_error(spec::generic::invalid_namespace));
    // PSDT selects SGLs, which this controller does not offer.
    if (((cmd.cdw0 >> 14) & 3u) != 0) return complete(q, cid, generic_error(spec::generic::invalid_field));

    switch (static_cast<spec::opcode>(cmd.opc())) {
      case spec::opcode::flush:
        state.op = spec::opcode::flush;
        return submit_store(q, store_io{store_op::flush, 0, 0, nullptr, command_tag(q.index, cid)});
      case spec::opcode::read:
      case spec::opcode::write: return execute_rw(q, cid, cmd, state);
      default: return complete(q, cid, generic_error(spec::generic::invalid_opcode));
    }
  }

  // Before anything else of a fetched command: nothing to copy for it yet, and the buffer its
  // submitter declared (if raw), taken and cleared so that the typed commands that use the
  // entry next, which declare none, are not held to it.
  static void take_data_path_records(queue_state& q, std::uint16_t cid, command_state& state) {
    std::atomic_ref<std::uint64_t>(q.qp.deferred[cid].source).store(0, std::memory_order_relaxed);
    queue::declared_buffer& declared = q.qp.buffers[cid];
    std::atomic_ref<std::uint64_t> bytes(declared.bytes);
    state.declared_bytes = bytes.load(std::memory_order_relaxed);
    if (!queue::is_declared(state.declared_bytes)) return;
    state.declared_address = std::atomic_ref<std::uint64_t>(declared.address).load(std::memory_order_relaxed);
    bytes.store(0, std::memory_order_relaxed);
  }

  void execute_rw(queue_state& q, std::uint16_t cid, const spec::command& cmd, command_state& state) {
    device_endpoint& dev = device_of(q);
    store& backing = *dev.backing;
    const std::uint32_t lba_bytes = backing.lba_bytes();
    const std::uint64_t capacity = backing.capacity_bytes() / lba_bytes;
    const std::uint64_t slba = cmd.slba();
    const std::uint32_t blocks = cmd.blocks();
    if (slba >= capacity || blocks > capacity - slba) {
      return complete(q, cid, generic_error(spec::generic::lba_out_of_range));
    }
    const std::uint64_t bytes64 = std::uint64_t{blocks} * lba_bytes;
    if (bytes64 > dev.max_transfer_bytes) return complete(q, cid, generic_error(spec::generic::invalid_field));

    state.op = static_cast<spec::opcode>(cmd.opc());
    state.bytes = static_cast<std::uint32_t>(bytes64);
    state.offset = slba * lba_bytes;
    // A zero-copy read looks at its stripes' sequences once the store answers (publish_check).
    if (const std::uint64_t* sequences = backing.view_sequences(); sequences != nullptr) {
      __builtin_prefetch(sequences + (state.offset >> queue::stripe_shift));
    }
    const std::uint16_t prp_status = prps_.walk(cmd, state.bytes);
    if (prp_status != ok_status) return complete(q, cid, prp_status);
    const translation* whole = prps_.whole() ? &*prps_.whole() : nullptr;
    // A raw command's buffer must be what its PRPs name (one run: same address and length), or
    // none for a command of several runs, whose data the controller moves itself. Otherwise a
    // staged write would store whatever its bounce slot held, and a deferred read would be
    // copied to memory nobody checked, for as many bytes as the submitter said.
    if (queue::is_declared(state.declared_bytes)) {
      const bool right = whole != nullptr ? state.declared_address == prps_.runs()[0].address &&
                                                queue::bytes_declared(state.declared_bytes) == state.bytes
                                          : state.declared_address == 0;
      if (!right) return complete(q, cid, generic_error(spec::generic::invalid_field));
    }
    const store_op op = state.op == spec::opcode::read ? store_op::read : store_op::write;
    data_plan plan = plan_data_path({op, state.offset, state.bytes, whole, prps_.runs(),
                                     q.qp.bounce + std::uint64_t{cid} * q.qp.slot_bytes, backing.host_view(),
                                     backing.buffer_alignment(), options_.mover, q.qp.stage_writes != 0,
                                     in_flight_ <= options_.copy_depth});
    carry_out(q, cid, state, std::move(plan));
  }

  // Sets a read or write going as planned: the deferred copy recorded for the retirer, the
  // write's data brought into the bounce slot, and the store I/O submitted.
  void carry_out(queue_state& q, std::uint16_t cid, command_state& state, data_plan plan) {
    state.io_buffer = plan.io_buffer;
    state.user = plan.user;
    state.next = plan.next;
    state.segments = std::move(plan.host_runs);
    const std::uint64_t tag = command_tag(q.index, cid);
    if (plan.deferred_source != nullptr) {
      queue::deferred_copy& deferred = q.qp.deferred[cid];
      // Relaxed: the completion entry's release orders them.
      std::atomic_ref<std::uint64_t>(deferred.destination)
          .store(reinterpret_cast<std::uint64_t>(plan.deferred_destination), std::memory_order_relaxed);
      std::atomic_ref<std::uint64_t>(deferred.bytes).store(state.bytes, std::memory_order_relaxed);
      // on_store_done adds what the copy checks, for a copy from the store's host memory.
      std::atomic_ref<std::uint64_t>(deferred.check).store(0, std::memory_order_relaxed);
      std::atomic_ref<std::uint64_t>(deferred.source)
          .store(reinterpret_cast<std::uint64_t>(plan.deferred_source), std::memory_order_relaxed);
    }
    if (state.next == then::store_write) return engine_->copy(state.io_buffer, state.user, state.bytes, tag);
    if (plan.gather_before_store) {
      std::uint32_t done = 0;
      for (const segment& s : state.segments) {
        std::memcpy(state.io_buffer + done, reinterpret_cast<const void*>(s.address), s.bytes);
        done += s.bytes;
      }
    }
    const store_op op = state.op == spec::opcode::read ? store_op::read : store_op::write;
    submit_store(q, store_io{op, state.offset, state.bytes, state.io_buffer, tag});
  }

  void submit_store(queue_state& q, const store_io& io) {
    q.commands[cid_of(io.tag)].store_started_ns = batch_ns_;
    std::deque<store_io>& waiting = backlog_[q.device];
    if (!waiting.empty() || !channels_[q.device]->submit(io)) waiting.push_back(io);
  }

  bool drive_stores() {
    bool worked = false;
    for (std::uint32_t d = 0; d < channels_.size(); ++d) {
      store_channel* ch = channels_[d].get();
      if (ch == nullptr) continue;
      std::deque<store_io>& waiting = backlog_[d];
      while (!waiting.empty() && ch->submit(waiting.front())) waiting.pop_front();
      ch->push();
      const std::size_t n = ch->reap(results_);
      if (n != 0) batch_ns_ = steady_ns();
      for (std::size_t i = 0; i < n; ++i) on_store_done(results_[i]);
      worked |= n != 0;
    }
    return worked;
  }

  bool drive_copies() {
    if (!engine_) return false;
    engine_->push();
    const std::size_t n = engine_->reap(copied_);
    if (n != 0) batch_ns_ = steady_ns();
    for (std::size_t i = 0; i < n; ++i) on_copy_done(copied_[i]);
    return n != 0;
  }

  void on_store_done(const store_result& r) {
    queue_state& q = queues_[queue_of(r.tag)];
    const std::uint16_t cid = cid_of(r.tag);
    command_state& state = q.commands[cid];
    count(q.counters->store_ns, batch_ns_ - state.store_started_ns);
    if (state.op == spec::opcode::flush) {
      if (r.result < 0) {
        owner_.note_store_error(q.device, "flush failed: " + std::string(std::strerror(static_cast<int>(-r.result))),
                                static_cast<int>(-r.result));
        return complete(q, cid, generic_error(spec::generic::internal_error));
      }
      return complete(q, cid, ok_status);
    }
    const bool read = state.op == spec::opcode::read;
    if (r.result < 0 || static_cast<std::uint64_t>(r.result) < state.bytes) {
      const std::string cause = r.result < 0 ? std::string(std::strerror(static_cast<int>(-r.result)))
                                             : "short transfer of " + std::to_string(r.result) + " bytes";
      owner_.note_store_error(q.device,
                              std::string(read ? "read" : "write") + " of " + std::to_string(state.bytes) +
                                  " bytes at byte offset " + std::to_string(state.offset) + ": " + cause,
                              r.result < 0 ? static_cast<int>(-r.result) : 0);
      return complete(q, cid,
                      read ? media_error(spec::media::unrecovered_read_error) : media_error(spec::media::write_fault));
    }
    if (read) {
      if (state.next == then::complete && state.io_buffer == nullptr && !publish_check(q, cid, state)) {
        owner_.note_store_error(q.device, "read of " + std::to_string(state.bytes) + " bytes at byte offset " +
                                              std::to_string(state.offset) +
                                              ": a write to the same bytes never finished");
        return complete(q, cid, generic_error(spec::generic::internal_error));
      }
      count(q.counters->bytes_read, state.bytes);
      if (state.next == then::copy_engine_to_user) {
        engine_->copy(state.user, state.io_buffer, state.bytes, r.tag);
        return;
      }
      if (state.next == then::scatter_to_user) {
        std::uint32_t done = 0;
        for (const segment& s : state.segments) {
          std::memcpy(reinterpret_cast<void*>(s.address), state.io_buffer + done, s.bytes);
          done += s.bytes;
        }
      }
    } else {
      count(q.counters->bytes_written, state.bytes);
    }
    complete(q, cid, ok_status);
  }

  // A zero-copy read is copied out of the store later, by the retirer, and writes may land in
  // the meantime: publish the even sequences of its stripes as they are now, after its data
  // was in place, so that the retirer can tell whether its copy is whole (view_sequences.hpp).
  // False if a write held a stripe for longer than any write takes.
  bool publish_check(queue_state& q, std::uint16_t cid, const command_state& state) {
    std::uint64_t* sequences = device_of(q).backing->view_sequences();
    if (sequences == nullptr) return true;
    const queue::stripe_range range = queue::stripes_of(state.offset, state.bytes);
    queue::sequence_reading seen;
    // Acquire pairs with the writers' release of the even sequence: the retirer, ordered after
    // us by the completion entry, copies their data or newer.
    const bool even = detail::poll_until(
        [&] {
          seen = queue::read_sequences(sequences, range, detail::acquire);
          return !seen.writing;
        },
        deadline::after_ns(queue::stripe_wait_ns));
    if (!even) return false;
    std::atomic_ref<std::uint64_t>(q.qp.deferred[cid].check)
        .store(queue::check_word(seen.sum), std::memory_order_relaxed);
    return true;
  }

  void on_copy_done(std::uint64_t tag) {
    queue_state& q = queues_[queue_of(tag)];
    const std::uint16_t cid = cid_of(tag);
    command_state& state = q.commands[cid];
    if (state.next == then::store_write) {
      state.next = then::complete;
      return submit_store(q, store_io{store_op::write, state.offset, state.bytes, state.io_buffer, tag});
    }
    complete(q, cid, ok_status);
  }

  void complete(queue_state& q, std::uint16_t cid, std::uint16_t nvme_status) {
    if (nvme_status != ok_status) count(q.counters->errors, 1);
    if (cid < q.qp.depth) {
      in_flight_ -= q.outstanding[cid];
      q.outstanding[cid] = 0;
      count(q.counters->controller_ns, batch_ns_ - q.commands[cid].fetched_ns);
      if (q.qp.stamps != nullptr) stamp(q, cid, &queue::trip_stamp::posted, steady_ns());
    }
    q.completions.post(cid, nvme_status, q.sq_head);
  }

  // A trip stamp of entry `cid`, where the runtime keeps them (the callers check, so that no
  // clock is read otherwise). Relaxed: the completion entry's release orders it before the
  // retirer reads it.
  static void stamp(const queue_state& q, std::uint16_t cid, std::uint64_t queue::trip_stamp::*field,
                    std::uint64_t ns) {
    std::atomic_ref<std::uint64_t>(q.qp.stamps[cid].*field).store(ns, std::memory_order_relaxed);
  }

  bool retry_completions(queue_state& q) { return q.completions.post_held(q.sq_head); }
};

nvme_controller::nvme_controller(std::vector<device_endpoint> devices, const iova_table& iova,
                                 controller_options options, const copy_engine_factory& make_copy_engine)
    : devices_(std::move(devices)), store_errors_(devices_.size()) {
  const unsigned thread_count = std::max(1u, options.threads);
  for (unsigned t = 0; t < thread_count; ++t) {
    auto w = std::make_unique<worker>(*this, iova, options, t);
    w->channels_.resize(devices_.size());
    w->backlog_.resize(devices_.size());
    workers_.push_back(std::move(w));
  }
  // Queue pairs are dealt to threads round-robin across all devices, so every thread serves a
  // share of every device and no thread owns a device alone.
  std::vector<std::uint32_t> depth_per_thread_device(thread_count * devices_.size(), 0);
  std::uint32_t dealt = 0;
  counters_.resize(devices_.size());
  for (std::uint32_t d = 0; d < devices_.size(); ++d) {
    for (std::uint32_t q = 0; q < devices_[d].queue_pairs.size(); ++q) {
      counters_[d].push_back(std::make_unique<queue_counters>());
      const std::uint32_t t = dealt++ % thread_count;
      worker& w = *workers_[t];
      worker::queue_state state;
      state.device = d;
      state.index = static_cast<std::uint32_t>(w.queues_.size());
      state.qp = devices_[d].queue_pairs[q];
      state.counters = counters_[d].back().get();
      state.commands.resize(state.qp.depth);
      state.outstanding.resize(state.qp.depth);
      state.completions = completion_poster(state.qp.cq, state.qp.cq_depth, state.qp.cq_head_doorbell,
                                            static_cast<std::uint16_t>(state.qp.qid));
      depth_per_thread_device[t * devices_.size() + d] += state.qp.depth;
      w.queues_.push_back(std::move(state));
    }
  }
  for (unsigned t = 0; t < thread_count; ++t) {
    worker& w = *workers_[t];
    for (std::uint32_t d = 0; d < devices_.size(); ++d) {
      const std::uint32_t depth = depth_per_thread_device[t * devices_.size() + d];
      // io_uring rings beyond a few thousand entries buy nothing; the backlog holds the rest.
      if (depth != 0) w.channels_[d] = devices_[d].backing->open_channel(std::min(depth, 4096u));
    }
    if (options.mover == data_mover::copy_engine) w.engine_ = make_copy_engine();
  }
  for (auto& w : workers_) {
    threads_.emplace_back([this, raw = w.get()] {
      try {
        raw->run();
      } catch (const std::exception& e) {
        note_thread_failure("controller thread " + std::to_string(raw->number_) + " stopped: " + e.what());
      }
    });
  }
}

nvme_controller::~nvme_controller() { stop(5'000); }

void nvme_controller::abort_store_io_at(std::chrono::steady_clock::time_point deadline) {
  const auto since_epoch = std::chrono::duration_cast<std::chrono::nanoseconds>(deadline.time_since_epoch()).count();
  const std::uint64_t ns = since_epoch > 0 ? static_cast<std::uint64_t>(since_epoch) : 0;
  // Relaxed, like the threads' loads: the value is all there is to see. Only the owner (the
  // runtime's stop) sets it, so a load and a store make no lost update.
  if (ns < abort_ns_.load(std::memory_order_relaxed)) abort_ns_.store(ns, std::memory_order_relaxed);
}

void nvme_controller::stop(std::uint32_t timeout_ms) {
  if (stopped_) return;
  stopped_ = true;
  abort_store_io_at(std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms));
  // Release pairs with the threads' acquire of stopping_.
  stopping_.store(true, std::memory_order_release);
  for (auto& t : threads_) t.join();
  for (auto& d : devices_) {
    try {
      d.backing->sync();
    } catch (const std::exception& e) {
      note_store_error(static_cast<std::uint32_t>(&d - devices_.data()), std::string("sync on stop: ") + e.what());
    }
  }
}

const queue_counters& nvme_controller::counters(std::uint32_t d, std::uint32_t q) const {
  return *counters_.at(d).at(q);
}

store_failure nvme_controller::first_store_error(std::uint32_t d) const {
  std::lock_guard lock(errors_mutex_);
  return store_errors_.at(d);
}

std::string nvme_controller::thread_failure() const {
  std::lock_guard lock(errors_mutex_);
  return thread_failure_;
}

std::uint64_t nvme_controller::abandoned_io() const {
  // Relaxed: a count; the threads that add to it have been joined when stop() returns.
  return abandoned_io_.load(std::memory_order_relaxed);
}

void nvme_controller::note_abandoned(std::size_t in_flight) {
  abandoned_io_.fetch_add(in_flight, std::memory_order_relaxed);
}

void nvme_controller::note_store_error(std::uint32_t device, const std::string& what, int error_number) {
  std::lock_guard lock(errors_mutex_);
  if (store_errors_[device].what.empty()) {
    store_errors_[device] = {devices_[device].backing->uri() + ": " + what, error_number};
  }
}

void nvme_controller::note_thread_failure(const std::string& what) {
  std::lock_guard lock(errors_mutex_);
  if (thread_failure_.empty()) thread_failure_ = what;
}

}  // namespace agio::proxy
