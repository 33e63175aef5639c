#pragma once
// The completion service (AGILE §3.2): a few warps that sweep every completion queue
// round-robin, retire completions 32 entries per step (Algorithm 1), free submission entries,
// perform the copies the proxy transport defers to the GPU and finish transactions. User
// threads never touch a completion queue.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/warp.hpp"
#include "agio/io/controller.hpp"

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

// Finishes the command whose completion entry is `entry`; the whole warp calls it.
AGIO_HD inline void retire(const controller& c, const queue::queue_pair& qp, std::uint32_t dw3) {
  const std::uint16_t cid = spec::cqe_cid(dw3);
  // Every identifier agio issues is an entry index; anything else names no transaction.
  if (cid >= qp.depth) return;
  const std::uint16_t nvme = spec::cqe_status(dw3);
  const std::uint32_t index = qp.cid_to_tx[cid];
  io::transaction_record& rec = c.records[index];
  const status result = status::from_nvme(nvme);

  // The controller wrote deferred_source before the entry; our acquire of the entry orders it.
  const std::uint64_t source = detail::load<scope::system>(qp.deferred_source[cid], detail::relaxed);
  if (source != 0 && result.ok()) {
    detail::warp::copy(reinterpret_cast<void*>(rec.destination), reinterpret_cast<const void*>(source), rec.bytes);
  }
  // No lane may still be reading the entry's bookkeeping when the leader frees it below.
  detail::warp::sync();
  if (!detail::warp::is_leader()) return;

  // Free the entry for the position one lap later; release pairs with try_claim's acquire, and
  // comes after every read of the entry's cid_to_tx, bounce slot and deferred source.
  const std::uint64_t word = detail::load<scope::device>(qp.states[cid], detail::relaxed);
  detail::store<scope::device>(qp.states[cid], queue::sqe_word(queue::sqe_word_position(word) + qp.depth, queue::sqe_empty),
                               detail::release);
  detail::store<scope::device>(qp.control->completed, qp.control->completed + 1, detail::relaxed);

  io::device_counters& counters = c.counters[rec.device];
  detail::fetch_add<scope::device>(counters.completed, std::uint64_t{1}, detail::relaxed);
  detail::fetch_add<scope::device>(counters.latency[latency_bucket(now_ns() - rec.issued_ns)], std::uint64_t{1},
                                   detail::relaxed);
  if (result.ok()) {
    detail::fetch_add<scope::device>(counters.bytes, std::uint64_t{rec.bytes}, detail::relaxed);
  } else {
    detail::fetch_add<scope::device>(counters.errors, std::uint64_t{1}, detail::relaxed);
    std::uint32_t unclaimed = 0;
    io::error_record& err = *c.first_error;
    if (detail::compare_exchange<scope::device>(c.control->error_claimed, unclaimed, 1u, detail::relaxed)) {
      err.device = rec.device;
      err.opcode = rec.opcode;
      err.lba = rec.lba;
      err.blocks = rec.blocks;
      err.result = result.pack();
      // Release pairs with the host's acquire of `valid` before it reads the fields.
      detail::store<scope::system>(err.valid, 1u, detail::release);
    }
  }
  // Release pairs with wait_for's acquire: data and counters precede the result.
  detail::store<scope::device>(rec.result, result.pack(), detail::release);
}

// One step of Algorithm 1 on one queue pair: check the current 32-entry window, retire what
// is new, and when the whole window is retired move on and ring the head doorbell. Returns the
// number of entries retired.
AGIO_HD inline std::uint32_t poll_queue(const controller& c, const queue::queue_pair& qp) {
  queue::cq_poll_state& state = *qp.poll;
  const std::uint32_t offset = state.offset;
  const std::uint32_t phase = state.phase;
  const std::uint32_t mask = state.mask;
  const std::uint32_t fresh = detail::warp::ballot_each([&](unsigned lane) {
    if ((mask >> lane) & 1u) return false;
    // Acquire pairs with the controller's release store of DW3, written last.
    const std::uint32_t dw3 = detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::acquire);
    return spec::cqe_phase(dw3) == (phase != 0);
  });
  for (std::uint32_t pending = fresh; pending != 0; pending &= pending - 1) {
    const unsigned lane = detail::warp::lowest_lane(pending);
    // Every lane reads the entry itself rather than shuffling it from its owner lane.
    retire(c, qp, detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::relaxed));
  }
  const std::uint32_t retired = mask | fresh;
  if (detail::warp::is_leader()) {
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
  detail::warp::sync();
  return detail::warp::count(fresh);
}

// True once every command submitted to the worker's queues has been retired.
AGIO_HD inline bool drained(const controller& c, std::uint32_t worker, std::uint32_t workers) {
  // Pairs with the submitters' seq_cst increment before they read `accepting`.
  if (detail::load<scope::device>(c.control->in_submission, detail::seq_cst) != 0) return false;
  for (std::uint32_t q = worker; q < c.queue_pair_count; q += workers) {
    queue::sq_control& ctl = *c.queue_pairs[q].control;
    if (detail::load<scope::device>(ctl.completed, detail::relaxed) !=
        detail::load<scope::device>(ctl.claimed, detail::acquire)) {
      return false;
    }
  }
  return true;
}

// The service loop of worker `worker` of `workers` (a warp on the GPU, a thread on the host):
// queue pairs worker, worker + workers, ... belong to it alone. Runs until the host asks it to
// exit, or to drain and every command of its queues has been retired.
AGIO_HD inline void run(const controller& c, std::uint32_t worker, std::uint32_t workers) {
  // Idle polls stay short: a completion waits at most this long for its warp to look again.
  detail::backoff idle(1'024);
  for (;;) {
    std::uint32_t retired = 0;
    for (std::uint32_t q = worker; q < c.queue_pair_count; q += workers) retired += poll_queue(c, c.queue_pairs[q]);
    const std::uint32_t mode = detail::load<scope::device>(c.control->service_mode, detail::acquire);
    if (mode == io::service_exit) return;
    if (mode == io::service_drain && retired == 0 && drained(c, worker, workers)) return;
    if (retired == 0) {
      idle.pause();
    } else {
      idle.reset();
    }
  }
}

}  // namespace agio::service
