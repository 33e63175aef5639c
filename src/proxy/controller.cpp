#include "proxy/controller.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <deque>
#include <optional>
#include <span>
#include <stdexcept>

#include "agio/detail/backoff.hpp"
#include "agio/queue/view_sequences.hpp"
#include "agio/spec/nvme.hpp"
#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"

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

template <class T>
T load_acquire(T& word) {
  return std::atomic_ref<T>(word).load(std::memory_order_acquire);
}

// A run of virtually contiguous bytes named by PRP entries.
struct segment {
  std::uint64_t address;
  std::uint32_t bytes;
};

bool aligned_to(const void* p, std::uint32_t alignment) {
  return reinterpret_cast<std::uintptr_t>(p) % alignment == 0;
}

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
  // What the controller does with a command's data once the store has answered.
  enum class then : std::uint8_t {
    complete,            // the data is where it belongs (or the service will copy it)
    copy_engine_to_user, // read: bounce slot -> GPU memory by the copy engine, then complete
    scatter_to_user,     // read: bounce slot -> host segments by memcpy, then complete
    store_write,         // write: the copy engine is filling the bounce slot; write it after
  };

  struct command_state {
    spec::opcode op = spec::opcode::read;
    then next = then::complete;
    std::uint32_t bytes = 0;
    std::uint64_t offset = 0;
    std::byte* io_buffer = nullptr;
    std::byte* user = nullptr;
    std::vector<segment> segments;  // for scatter_to_user
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
    std::uint32_t cq_tail = 0;
    bool phase = true;
    std::vector<command_state> commands;  // by command identifier
    std::vector<std::uint8_t> outstanding;  // by command identifier: fetched, not yet completed
    std::deque<std::pair<std::uint16_t, std::uint16_t>> waiting_for_cq_space;  // (cid, status)
  };

  worker(nvme_controller& owner, const iova_table& iova, const controller_options& options, unsigned number)
      : owner_(owner), iova_(iova), options_(options), number_(number) {}

  nvme_controller& owner_;
  iova_table::reader iova_;
  controller_options options_;
  unsigned number_;
  // Not ok once the thread has failed or the abort deadline has passed: every command fetched
  // from then on is answered with this status at once, without the store.
  std::uint16_t refusal_ = ok_status;
  std::vector<queue_state> queues_;
  std::vector<std::unique_ptr<store_channel>> channels_;  // by device; null where not served
  std::vector<std::deque<store_io>> backlog_;             // by device: I/Os the channel had no room for
  std::unique_ptr<copy_engine> engine_;
  std::vector<segment> scratch_;
  std::vector<store_result> results_ = std::vector<store_result>(256);
  std::vector<std::uint64_t> copied_ = std::vector<std::uint64_t>(256);

  static std::uint64_t tag_of(std::uint32_t queue, std::uint16_t cid) { return std::uint64_t{queue} << 16 | cid; }

  device_endpoint& device_of(const queue_state& q) { return owner_.devices_[q.device]; }

  // A store, copy-engine or memory failure must not leave the queues unserved: the thread
  // then answers everything with an error until stop(), without the parts that failed. Only
  // an exception out of that plain loop (memory exhausted again) ends the thread.
  void run() {
    try {
      serve();
      return;
    } catch (const std::exception& e) {
      fail(e.what());
    }
    serve();
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
      if (!q.waiting_for_cq_space.empty() && !past_deadline) return false;
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
    while (q.sq_head != doorbell) {
      spec::command cmd;
      std::memcpy(&cmd, &q.qp.sq[q.sq_head], sizeof cmd);
      q.sq_head = (q.sq_head + 1) % q.qp.depth;
      if (cmd.cid() < q.qp.depth) q.outstanding[cmd.cid()] = 1;
      if (refusal_ == ok_status) {
        execute(q, cmd);
      } else {
        q.counters->commands.fetch_add(1, std::memory_order_relaxed);
        complete(q, cmd.cid(), refusal_);
      }
      fetched = true;
    }
    return fetched;
  }

  void execute(queue_state& q, const spec::command& cmd) {
    const std::uint16_t cid = cmd.cid();
    q.counters->commands.fetch_add(1, std::memory_order_relaxed);
    if (cid >= q.qp.depth) return complete(q, cid, generic_error(spec::generic::invalid_field));
    command_state& state = q.commands[cid];
    state = command_state{};
    state.fetched_ns = steady_ns();
    take_data_path_records(q, cid, state);
    device_endpoint& dev = device_of(q);
    if (cmd.nsid != dev.nsid) return complete(q, cid, generic_error(spec::generic::invalid_namespace));
    // PSDT selects SGLs, which this controller does not offer.
    if (((cmd.cdw0 >> 14) & 3u) != 0) return complete(q, cid, generic_error(spec::generic::invalid_field));

    switch (static_cast<spec::opcode>(cmd.opc())) {
      case spec::opcode::flush:
        state.op = spec::opcode::flush;
        return submit_store(q, store_io{store_op::flush, 0, 0, nullptr, tag_of(q.index, cid)});
      case spec::opcode::read:
      case spec::opcode::write:
        return execute_rw(q, cid, cmd, state);
      default:
        return complete(q, cid, generic_error(spec::generic::invalid_opcode));
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
    const std::uint16_t prp_status = gather_segments(cmd, state.bytes);
    if (prp_status != ok_status) return complete(q, cid, prp_status);

    // One run of one region is the common case; several runs are legal NVMe and are served
    // through the bounce slot, but only in host memory (the controller cannot scatter into GPU
    // memory).
    std::optional<translation> whole;
    if (scratch_.size() == 1) {
      whole = iova_.translate(scratch_[0].address, scratch_[0].bytes);
      if (!whole) return complete(q, cid, generic_error(spec::generic::data_transfer_error));
    } else {
      for (const segment& s : scratch_) {
        const auto t = iova_.translate(s.address, s.bytes);
        if (!t) return complete(q, cid, generic_error(spec::generic::data_transfer_error));
        if (t->kind != region_kind::host) return complete(q, cid, generic_error(spec::generic::data_transfer_error));
      }
      state.segments = scratch_;
    }
    // A raw command's buffer must be what its PRPs name (one run: same address and length), or
    // none for a command of several runs, whose data the controller moves itself. Otherwise a
    // staged write would store whatever its bounce slot held, and a deferred read would be
    // copied to memory nobody checked, for as many bytes as the submitter said.
    if (queue::is_declared(state.declared_bytes)) {
      const bool right = whole ? state.declared_address == scratch_[0].address &&
                                     queue::bytes_declared(state.declared_bytes) == state.bytes
                               : state.declared_address == 0;
      if (!right) return complete(q, cid, generic_error(spec::generic::invalid_field));
    }
    std::byte* bounce = q.qp.bounce + std::uint64_t{cid} * q.qp.slot_bytes;
    const bool direct = whole && whole->kind == region_kind::host && aligned_to(whole->address, backing.buffer_alignment());
    const store_op op = state.op == spec::opcode::read ? store_op::read : store_op::write;
    const std::uint64_t tag = tag_of(q.index, cid);

    if (op == store_op::read) {
      if (direct) {
        state.io_buffer = whole->address;
      } else if (whole && options_.mover == data_mover::gpu_warps) {
        // Leave the data in host memory and let the service copy it to the checked PRP target;
        // a RAM store needs no bounce slot at all (on_store_done adds what the copy checks).
        std::byte* view = backing.host_view();
        std::byte* source = view ? view + state.offset : bounce;
        state.io_buffer = view ? nullptr : bounce;
        queue::deferred_copy& deferred = q.qp.deferred[cid];
        // Relaxed: the completion entry's release orders them.
        std::atomic_ref<std::uint64_t>(deferred.destination)
            .store(reinterpret_cast<std::uint64_t>(whole->address), std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(deferred.bytes).store(state.bytes, std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(deferred.check).store(0, std::memory_order_relaxed);
        std::atomic_ref<std::uint64_t>(deferred.source)
            .store(reinterpret_cast<std::uint64_t>(source), std::memory_order_relaxed);
      } else if (whole && whole->kind == region_kind::device) {
        state.io_buffer = bounce;
        state.user = whole->address;
        state.next = then::copy_engine_to_user;
      } else {
        state.io_buffer = bounce;
        if (whole) state.segments.assign(1, segment{reinterpret_cast<std::uint64_t>(whole->address), state.bytes});
        state.next = then::scatter_to_user;
      }
      return submit_store(q, store_io{op, state.offset, state.bytes, state.io_buffer, tag});
    }

    if (q.qp.stage_writes != 0 && whole) {
      state.io_buffer = bounce;  // the submitter staged its buffer, the PRP target, before the doorbell
    } else if (direct) {
      state.io_buffer = whole->address;
    } else if (whole && whole->kind == region_kind::device) {
      state.io_buffer = bounce;
      state.next = then::store_write;
      engine_->copy(bounce, whole->address, state.bytes, tag);
      return;
    } else {
      std::uint32_t done = 0;
      if (whole) state.segments.assign(1, segment{reinterpret_cast<std::uint64_t>(whole->address), state.bytes});
      for (const segment& s : state.segments) {
        std::memcpy(bounce + done, reinterpret_cast<const void*>(s.address), s.bytes);
        done += s.bytes;
      }
      state.io_buffer = bounce;
    }
    return submit_store(q, store_io{op, state.offset, state.bytes, state.io_buffer, tag});
  }

  // Walks PRP1, PRP2 and PRP lists (NVMe Base 2.0 §4.1.1) into scratch_, merging pages that
  // are virtually contiguous. Returns an NVMe status.
  std::uint16_t gather_segments(const spec::command& cmd, std::uint32_t bytes) {
    scratch_.clear();
    const auto add = [this](std::uint64_t address, std::uint32_t length) {
      if (!scratch_.empty() && scratch_.back().address + scratch_.back().bytes == address) {
        scratch_.back().bytes += length;
      } else {
        scratch_.push_back(segment{address, length});
      }
    };
    if (cmd.prp1 % 4 != 0) return generic_error(spec::generic::prp_offset_invalid);
    const std::uint32_t first = std::min<std::uint32_t>(
        bytes, spec::page_bytes - static_cast<std::uint32_t>(spec::page_offset(cmd.prp1)));
    add(cmd.prp1, first);
    std::uint32_t remaining = bytes - first;
    if (remaining == 0) return ok_status;
    if (remaining <= spec::page_bytes) {
      if (spec::page_offset(cmd.prp2) != 0) return generic_error(spec::generic::prp_offset_invalid);
      add(cmd.prp2, remaining);
      return ok_status;
    }
    std::uint64_t list = cmd.prp2;
    if (list % 8 != 0) return generic_error(spec::generic::prp_offset_invalid);
    while (remaining > 0) {
      // The list itself must be readable by the controller.
      const auto where = iova_.translate(list, 8);
      if (!where || where->kind != region_kind::host) return generic_error(spec::generic::data_transfer_error);
      std::uint64_t entry = 0;
      std::memcpy(&entry, where->address, sizeof entry);
      const bool last_in_page = spec::page_offset(list) == spec::page_bytes - 8;
      if (last_in_page && remaining > spec::page_bytes) {
        list = entry;  // the last entry of a full list page points to the next list page
        if (list % 8 != 0) return generic_error(spec::generic::prp_offset_invalid);
        continue;
      }
      if (spec::page_offset(entry) != 0) return generic_error(spec::generic::prp_offset_invalid);
      const std::uint32_t length = std::min(remaining, spec::page_bytes);
      add(entry, length);
      remaining -= length;
      list += 8;
    }
    return ok_status;
  }

  void submit_store(queue_state& q, const store_io& io) {
    q.commands[io.tag & 0xffffu].store_started_ns = steady_ns();
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
      for (std::size_t i = 0; i < n; ++i) on_store_done(results_[i]);
      worked |= n != 0;
    }
    return worked;
  }

  bool drive_copies() {
    if (!engine_) return false;
    engine_->push();
    const std::size_t n = engine_->reap(copied_);
    for (std::size_t i = 0; i < n; ++i) on_copy_done(copied_[i]);
    return n != 0;
  }

  void on_store_done(const store_result& r) {
    queue_state& q = queues_[r.tag >> 16];
    const auto cid = static_cast<std::uint16_t>(r.tag & 0xffffu);
    command_state& state = q.commands[cid];
    q.counters->store_ns.fetch_add(steady_ns() - state.store_started_ns, std::memory_order_relaxed);
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
      owner_.note_store_error(q.device, std::string(read ? "read" : "write") + " of " + std::to_string(state.bytes) +
                                            " bytes at byte offset " + std::to_string(state.offset) + ": " + cause,
                              r.result < 0 ? static_cast<int>(-r.result) : 0);
      return complete(q, cid, read ? media_error(spec::media::unrecovered_read_error) : media_error(spec::media::write_fault));
    }
    if (read) {
      if (state.next == then::complete && state.io_buffer == nullptr && !publish_check(q, cid, state)) {
        owner_.note_store_error(q.device, "read of " + std::to_string(state.bytes) + " bytes at byte offset " +
                                              std::to_string(state.offset) +
                                              ": a write to the same bytes never finished");
        return complete(q, cid, generic_error(spec::generic::internal_error));
      }
      q.counters->bytes_read.fetch_add(state.bytes, std::memory_order_relaxed);
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
      q.counters->bytes_written.fetch_add(state.bytes, std::memory_order_relaxed);
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
    queue_state& q = queues_[tag >> 16];
    const auto cid = static_cast<std::uint16_t>(tag & 0xffffu);
    command_state& state = q.commands[cid];
    if (state.next == then::store_write) {
      state.next = then::complete;
      return submit_store(q, store_io{store_op::write, state.offset, state.bytes, state.io_buffer, tag});
    }
    complete(q, cid, ok_status);
  }

  void complete(queue_state& q, std::uint16_t cid, std::uint16_t nvme_status) {
    if (nvme_status != ok_status) q.counters->errors.fetch_add(1, std::memory_order_relaxed);
    if (cid < q.qp.depth) {
      q.outstanding[cid] = 0;
      q.counters->controller_ns.fetch_add(steady_ns() - q.commands[cid].fetched_ns, std::memory_order_relaxed);
    }
    if (!q.waiting_for_cq_space.empty() || !post(q, cid, nvme_status)) q.waiting_for_cq_space.emplace_back(cid, nvme_status);
  }

  bool retry_completions(queue_state& q) {
    bool posted = false;
    while (!q.waiting_for_cq_space.empty()) {
      const auto [cid, nvme_status] = q.waiting_for_cq_space.front();
      if (!post(q, cid, nvme_status)) break;
      q.waiting_for_cq_space.pop_front();
      posted = true;
    }
    return posted;
  }

  // Writes a completion entry if the queue has room: DW0-DW2 first, then DW3 with the phase
  // tag, released so that a consumer that sees the new phase sees the whole entry.
  bool post(queue_state& q, std::uint16_t cid, std::uint16_t nvme_status) {
    const std::uint32_t next = (q.cq_tail + 1) % q.qp.cq_depth;
    // Acquire pairs with the service's release of the head doorbell after it retired a window.
    if (next == load_acquire(*q.qp.cq_head_doorbell)) return false;
    spec::completion& entry = q.qp.cq[q.cq_tail];
    std::atomic_ref<std::uint32_t>(entry.dw0).store(0, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(entry.dw1).store(0, std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(entry.dw2).store(spec::make_cqe_dw2(static_cast<std::uint16_t>(q.sq_head),
                                                                       static_cast<std::uint16_t>(q.qp.qid)),
                                                    std::memory_order_relaxed);
    std::atomic_ref<std::uint32_t>(entry.dw3).store(spec::make_cqe_dw3(cid, q.phase, nvme_status),
                                                    std::memory_order_release);
    q.cq_tail = next;
    if (next == 0) q.phase = !q.phase;
    return true;
  }
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

const queue_counters& nvme_controller::counters(std::uint32_t d, std::uint32_t q) const { return *counters_.at(d).at(q); }

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
