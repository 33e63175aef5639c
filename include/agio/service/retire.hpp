#pragma once
// Retiring completions (AGILE Algorithm 1): check a queue's current 32-entry completion window,
// finish the transactions whose entries are new, free their submission entries, and ring the
// head doorbell once the whole window is retired. Written once for the two kinds of retirer
// (team.hpp): the completion service's warps, and single waiting threads when the runtime runs
// without a service.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/io/io_state.hpp"
#include "agio/io/status.hpp"
#include "agio/service/team.hpp"
#include "agio/spec/nvme.hpp"

namespace agio::service {

using detail::scope;

AGIO_HD inline unsigned latency_bucket(std::uint64_t ns) {
  unsigned b = 0;
  while (ns > 1 && b + 1 < io::latency_buckets) {
    ns >>= 1;
    ++b;
  }
  return b;
}

// What retiring one completion entry needs to know, read from the entry and the queue's tables.
struct entry_to_retire {
  std::uint16_t cid = 0;
  bool valid = false;             // false: the identifier names no transaction (ignored)
  status result{};
  io::transaction_record* record = nullptr;
  std::uint64_t source = 0;       // where the controller left the data, to copy (0: in place)
};

AGIO_HD inline entry_to_retire look_up(const io::io_state& io, const queue::queue_pair& qp, std::uint32_t dw3) {
  entry_to_retire e;
  e.cid = spec::cqe_cid(dw3);
  // Every identifier agio issues is an entry index; anything else names no transaction.
  if (e.cid >= qp.depth) return e;
  e.valid = true;
  e.result = status::from_nvme(spec::cqe_status(dw3));
  e.record = &io.records[qp.cid_to_tx[e.cid]];
  // The controller wrote deferred_source before the entry; our acquire of the entry orders it.
  e.source = detail::load<scope::system>(qp.deferred_source[e.cid], detail::relaxed);
  return e;
}

// Copies the entry's data to its destination, by the whole team.
template <class Team>
AGIO_HD void copy_out(const entry_to_retire& e) {
  if (e.valid && e.source != 0 && e.result.ok()) {
    Team::copy(reinterpret_cast<void*>(e.record->destination), reinterpret_cast<const void*>(e.source),
               e.record->bytes);
  }
}

// Everything after the copy, by one thread per entry once every copy of the team is done: frees
// the submission entry, counts, records the first error and publishes the outcome.
AGIO_HD inline void finish(const io::io_state& io, const queue::queue_pair& qp, const entry_to_retire& e) {
  if (!e.valid) return;
  io::transaction_record& rec = *e.record;
  const status result = e.result;
  // Free the entry for the position one lap later; release pairs with try_claim's acquire, and
  // comes after every read of the entry's cid_to_tx, bounce slot and deferred source.
  const std::uint64_t word = detail::load<scope::device>(qp.states[e.cid], detail::relaxed);
  detail::store<scope::device>(qp.states[e.cid], queue::sqe_word(queue::sqe_word_position(word) + qp.depth, queue::sqe_empty),
                               detail::release);

  io::device_counters& counters = io.counters[rec.device];
  detail::fetch_add<scope::device>(counters.completed, std::uint64_t{1}, detail::relaxed);
  detail::fetch_add<scope::device>(counters.latency[latency_bucket(now_ns() - rec.issued_ns)], std::uint64_t{1},
                                   detail::relaxed);
  if (result.ok()) {
    detail::fetch_add<scope::device>(counters.bytes, std::uint64_t{rec.bytes}, detail::relaxed);
  } else {
    detail::fetch_add<scope::device>(counters.errors, std::uint64_t{1}, detail::relaxed);
    std::uint32_t unclaimed = 0;
    io::error_record& err = *io.first_error;
    if (detail::compare_exchange<scope::device>(io.control->error_claimed, unclaimed, 1u, detail::relaxed)) {
      err.device = rec.device;
      err.opcode = rec.opcode;
      err.lba = rec.lba;
      err.blocks = rec.blocks;
      err.result = result.pack();
      // Release pairs with the host's acquire of `valid` before it reads the fields.
      detail::store<scope::system>(err.valid, 1u, detail::release);
    }
  }
  if (rec.signal_word != 0) {
    // Nobody waits on a signalled request: publish its outcome where its issuer asked, then
    // give the record back. Release pairs with the acquire of whoever watches the word.
    if (rec.signal_status != 0) *reinterpret_cast<std::uint32_t*>(rec.signal_status) = result.pack();
    detail::store<scope::device>(*reinterpret_cast<std::uint32_t*>(rec.signal_word),
                                 result.ok() ? rec.signal_ok : rec.signal_failed, detail::release);
    rec.signal_word = 0;
    // Release pairs with acquire_record's exchange, as wait_for's give-back does.
    detail::store<scope::device>(rec.owner, 0u, detail::release);
    return;
  }
  // Release pairs with wait_for's acquire: data and counters precede the result.
  detail::store<scope::device>(rec.result, result.pack(), detail::release);
}

// Retires the entries `fresh` of the window at `offset`; the whole team calls it. Returns how
// many named a transaction.
template <class Team>
AGIO_HD std::uint32_t retire_window(const io::io_state& io, const queue::queue_pair& qp, std::uint32_t offset,
                           std::uint32_t fresh) {
#if defined(__CUDA_ARCH__)
  if constexpr (Team::whole_warp) {
    // Lane k looks up and finishes entry k itself, so the window's bookkeeping (a few
    // dependent trips to memory per entry, some across PCIe) happens once for all entries
    // instead of once per entry; only the copies go one entry at a time, each by the whole
    // warp.
    const unsigned lane = threadIdx.x % detail::warp::size;
    entry_to_retire mine;
    if ((fresh >> lane) & 1u) mine = look_up(io, qp, detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::relaxed));
    for (std::uint32_t pending = fresh; pending != 0; pending &= pending - 1) {
      const unsigned owner = detail::warp::lowest_lane(pending);
      const bool copies = __shfl_sync(0xffffffffu, mine.valid && mine.source != 0 && mine.result.ok(), owner);
      if (!copies) continue;
      const auto destination = __shfl_sync(0xffffffffu, mine.record != nullptr ? mine.record->destination : 0, owner);
      const auto source = __shfl_sync(0xffffffffu, mine.source, owner);
      const auto bytes = __shfl_sync(0xffffffffu, mine.record != nullptr ? mine.record->bytes : 0u, owner);
      Team::copy(reinterpret_cast<void*>(destination), reinterpret_cast<const void*>(source), bytes);
    }
    // No lane may still be reading an entry's bounce slot when its owner frees it below, and
    // the data precedes every result.
    Team::sync();
    if ((fresh >> lane) & 1u) finish(io, qp, mine);
    return static_cast<std::uint32_t>(__popc(__ballot_sync(0xffffffffu, mine.valid)));
  }
#endif
  std::uint32_t finished = 0;
  for (std::uint32_t pending = fresh; pending != 0; pending &= pending - 1) {
    const unsigned lane = detail::warp::lowest_lane(pending);
    // Every lane reads the entry itself rather than shuffling it from its owner lane.
    const entry_to_retire e = look_up(io, qp, detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::relaxed));
    copy_out<Team>(e);
    // No lane may still be reading the entry's bookkeeping when the leader frees it below.
    Team::sync();
    if (Team::is_leader()) finish(io, qp, e);
    if (e.valid) ++finished;
  }
  return finished;
}

// One step of Algorithm 1 on one queue pair: check the current window, retire what is new,
// and when the whole window is retired move on and ring the head doorbell. The caller owns the
// queue's polling state. Returns the number of entries retired.
template <class Team>
AGIO_HD std::uint32_t poll_queue(const io::io_state& io, const queue::queue_pair& qp) {
  queue::cq_poll_state& state = *qp.poll;
  const std::uint32_t offset = state.offset;
  const std::uint32_t phase = state.phase;
  const std::uint32_t mask = state.mask;
  const std::uint32_t fresh = Team::scan(mask, [&](unsigned lane) {
    // Acquire pairs with the controller's release store of DW3, written last.
    const std::uint32_t dw3 = detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::acquire);
    return spec::cqe_phase(dw3) == (phase != 0);
  });
  const std::uint32_t finished = retire_window<Team>(io, qp, offset, fresh);
  const std::uint32_t retired = mask | fresh;
  if (Team::is_leader()) {
    // Only this queue's retirer writes `completed`; the service's drain check reads it.
    if (finished != 0) {
      detail::store<scope::device>(qp.control->completed, qp.control->completed + finished, detail::relaxed);
    }
    if (retired == 0xffffffffu) {
      const std::uint32_t next = offset + detail::warp::size == qp.cq_depth ? 0 : offset + detail::warp::size;
      state.offset = next;
      state.mask = 0;
      if (next == 0) state.phase = phase ^ 1u;
      // Release pairs with the controller's acquire: the window's entries may be reused.
      detail::store<scope::system>(*qp.cq_head_doorbell, next, detail::release);
    } else {
      state.mask = retired;
    }
  }
  Team::sync();
  return detail::warp::count(fresh);
}

// Polls `qp` if no other team is polling it (waiters retire completions, or the service
// drains after them): the queue's retire_lock makes its polling state single-owner. Returns
// the number of entries retired, 0 when the lock was busy.
template <class Team>
AGIO_HD std::uint32_t poll_queue_if_free(const io::io_state& io, const queue::queue_pair& qp) {
  std::uint32_t unlocked = 0;
  // Acquire pairs with the previous holder's release: its updates of the polling state are seen.
  const bool mine = Team::from_leader(
      Team::is_leader() &&
      detail::compare_exchange<scope::device>(qp.control->retire_lock, unlocked, 1u, detail::acquire));
  if (!mine) return 0;
  std::uint32_t retired = 0;
  // Keep going while windows fill up, so a waiter retires a burst in one turn.
  for (std::uint32_t step = 0; step < 4; ++step) {
    const std::uint32_t n = poll_queue<Team>(io, qp);
    retired += n;
    if (n == 0) break;
  }
  if (Team::is_leader()) detail::store<scope::device>(qp.control->retire_lock, 0u, detail::release);
  Team::sync();
  return retired;
}

// One polling step by whoever retires completions for `qp` under the runtime's mode.
template <class Team>
AGIO_HD std::uint32_t poll_for_mode(const io::io_state& io, const queue::queue_pair& qp) {
  return io.retired_by == io::retirement::by_waiters ? poll_queue_if_free<Team>(io, qp) : poll_queue<Team>(io, qp);
}

}  // namespace agio::service
