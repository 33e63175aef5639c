#pragma once
// Retiring completions (AGILE Algorithm 1): check a queue's current 32-entry completion window,
// finish the transactions whose entries are new, free their submission entries, and ring the
// head doorbell once the whole window is retired. Written once for the two kinds of retirer
// (team.hpp): the completion service's warps, and single waiting threads when the runtime runs
// without a service.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/bulk_copy.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/warp.hpp"
#include "agio/queue/failure.hpp"
#include "agio/queue/io_state.hpp"
#include "agio/queue/record_pool.hpp"
#include "agio/queue/status.hpp"
#include "agio/queue/view_sequences.hpp"
#include "agio/service/team.hpp"
#include "agio/spec/nvme.hpp"
#include "agio/spec/status.hpp"

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
  bool valid = false;            // false: the identifier names no command in flight (ignored)
  std::uint64_t entry_word = 0;  // the submission entry's state word (ISSUED) when looked up
  status result{};
  io::transaction_record* record = nullptr;
  queue::deferred_copy copy{};  // what to copy, checked by the controller (0 source: nothing)
  queue::trip_stamp stamps{};   // read with the entry when `stamped` (else read by finish())
  bool stamped = false;

  AGIO_HD bool copies() const { return valid && copy.source != 0 && result.ok(); }
};

// An entry's trip stamps. Relaxed loads: the completion entry the retirer acquired orders the
// controller's stamps, and the doorbell the submitter's.
AGIO_HD inline queue::trip_stamp read_stamps(const queue::trip_stamp& at) {
  return {detail::load<scope::system>(at.submitted, detail::relaxed),
          detail::load<scope::system>(at.fetched, detail::relaxed),
          detail::load<scope::system>(at.posted, detail::relaxed)};
}

// Looks up the entry named by completion DW3 `dw3`. `early` (a warp of the completion service,
// on the device): the entry's record, deferred copy and trip stamps are loaded together with its
// state word, before it is looked at, so that the trips across PCIe (the copy's, the stamps')
// do not wait for the state's trip to GPU memory, nor the waiter for the stamps; an entry found
// not ISSUED discards what they read (a later command's, perhaps half written). Otherwise they
// are loaded once the entry is known to be this command's: a thread retiring alone (a waiter)
// keeps fewer registers that way, and on the host ThreadSanitizer would report the early loads
// racing with a later command's writes.
template <bool early>
AGIO_HD entry_to_retire look_up(const io::io_state& io, const queue::queue_pair& qp, std::uint32_t dw3) {
  entry_to_retire e;
  e.cid = spec::cqe_cid(dw3);
  // Every identifier agio issues is an entry index; anything else names no transaction.
  if (e.cid >= qp.depth) return e;
  // Only an ISSUED entry has a command in flight. A second completion for a command already
  // retired finds its entry EMPTY (or UPDATED by its next submitter), and its cid_to_tx naming
  // a record that may since carry another request: finishing it would hand that request this
  // status and free the entry a lap early. Relaxed: the submitter's store of ISSUED precedes
  // its doorbell, which precedes the controller's completion that our caller acquired.
  e.entry_word = detail::load<scope::device>(qp.states[e.cid], detail::relaxed);
  // The submitter and the controller wrote the record's index and the deferred copy before the
  // completion entry, and nobody writes them again before finish() frees the submission entry,
  // so our acquire of the completion orders plain loads (two 16-byte loads for the copy).
  std::uint32_t tx = 0;
  const auto read_tables = [&] {
    tx = qp.cid_to_tx[e.cid];
    e.copy = qp.deferred[e.cid];
  };
  if constexpr (early) {
    read_tables();
    if (qp.stamps != nullptr) {
      e.stamps = read_stamps(qp.stamps[e.cid]);
      e.stamped = true;
    }
  }
  if (queue::sqe_word_state(e.entry_word) != queue::sqe_issued) return e;
  e.valid = true;
  e.result = status::from_nvme(spec::cqe_status(dw3));
  if constexpr (!early) read_tables();
  e.record = &io.records[tx];
  return e;
}

// Copies from a store's bytes, then orders the copy before a look at the stripes' sequences,
// every lane's copy before every lane's look (view_sequences.hpp). By the whole team.
template <class Team>
AGIO_HD void copy_from_view(const queue::deferred_copy& c) {
#if defined(__CUDA_ARCH__)
  Team::copy(reinterpret_cast<void*>(c.destination), reinterpret_cast<const void*>(c.source),
             static_cast<std::uint32_t>(c.bytes));
  queue::copy_fence();
  Team::sync();
#else
  queue::copy_from_stripes(reinterpret_cast<void*>(c.destination), reinterpret_cast<const std::byte*>(c.source),
                           c.bytes);
#endif
}

AGIO_HD inline queue::stripe_range stripes_of(const queue::queue_pair& qp, const queue::deferred_copy& c) {
  return queue::stripes_of(c.source - reinterpret_cast<std::uint64_t>(qp.view), c.bytes);
}

// The seqlock's reader, for a copy from a store's bytes that a write overtook: copies again
// until the stripes held the same even sequences around the copy. By the whole team, which
// decides as its leader saw, so that every lane takes the same turns. False when a write held a
// stripe longer than any write takes.
template <class Team>
AGIO_HD bool copy_again_until_whole(const queue::queue_pair& qp, const queue::deferred_copy& c) {
  const queue::stripe_range range = stripes_of(qp, c);
  const deadline limit = deadline::after_ns(queue::stripe_wait_ns);
  detail::backoff wait;
  for (;;) {
    // Acquire pairs with the writers' release of the even sequence: their data precedes it.
    // The leader's view decides, so every lane's copy must come after the leader's acquire.
    const queue::sequence_reading before = queue::read_sequences(qp.view_sequences, range, detail::acquire);
    Team::sync();
    if (!Team::from_leader(before.writing)) {
      copy_from_view<Team>(c);
      const queue::sequence_reading after = queue::read_sequences(qp.view_sequences, range, detail::relaxed);
      if (Team::from_leader(!after.writing && after.sum == before.sum)) return true;
    }
    if (Team::from_leader(limit.passed())) return false;
    wait.pause();
  }
}

// An entry's result when its copy could not be made whole.
AGIO_HD inline status torn_copy() {
  return status::from_nvme(spec::make_status(spec::status_type::generic, spec::generic::internal_error));
}

// Copies the entry's data to the destination the controller checked, by the whole team. A copy
// from a store's bytes is checked against the sequences the controller saw; one that a write
// overtook is made again, or fails the entry.
template <class Team>
AGIO_HD void copy_out(const queue::queue_pair& qp, entry_to_retire& e) {
  if (!e.copies()) return;
  if (e.copy.check == 0) {
    Team::copy(reinterpret_cast<void*>(e.copy.destination), reinterpret_cast<const void*>(e.copy.source),
               static_cast<std::uint32_t>(e.copy.bytes));
    return;
  }
  copy_from_view<Team>(e.copy);
  const queue::sequence_reading after =
      queue::read_sequences(qp.view_sequences, stripes_of(qp, e.copy), detail::relaxed);
  if (Team::from_leader(queue::copy_is_whole(e.copy.check, after))) return;
  if (!copy_again_until_whole<Team>(qp, e.copy)) e.result = torn_copy();
}

// Where the runtime keeps trip stamps: adds entry `e`'s request, its completion seen at
// `seen_ns`, to the device's trip sums (shared_state.hpp). Before the entry is freed, so that
// the stamps are still its command's.
AGIO_HD inline void add_trip(io::trip_sums& sums, const queue::queue_pair& qp, const entry_to_retire& e,
                             std::uint64_t seen_ns) {
  if (qp.stamps == nullptr) return;
  // The clock first: stamps read here cross PCIe and are no part of the retirement.
  const std::uint64_t finished = now_ns();
  const queue::trip_stamp at = e.stamped ? e.stamps : read_stamps(qp.stamps[e.cid]);
  detail::fetch_add<scope::device>(sums.requests, std::uint64_t{1}, detail::relaxed);
  detail::fetch_add<scope::device>(sums.to_controller, at.fetched - at.submitted, detail::relaxed);
  detail::fetch_add<scope::device>(sums.in_controller, at.posted - at.fetched, detail::relaxed);
  detail::fetch_add<scope::device>(sums.to_retirer, seen_ns - at.posted, detail::relaxed);
  detail::fetch_add<scope::device>(sums.retiring, finished - seen_ns, detail::relaxed);
}

// Everything after the copy, by one thread per entry once every copy of the team is done: frees
// the submission entry, counts, records the first error and publishes the outcome. The
// window's completions were seen at `seen_ns` (0 unless the runtime keeps trip stamps).
AGIO_HD inline void finish(const io::io_state& io, const queue::queue_pair& qp, const entry_to_retire& e,
                           std::uint64_t seen_ns) {
  if (!e.valid) return;
  io::transaction_record& rec = *e.record;
  const status result = e.result;
  io::shared_counters& counters = io.counters[rec.device];
  add_trip(counters.trip, qp, e, seen_ns);
  // Free the entry for the position one lap later; release pairs with try_claim's acquire, and
  // comes after every read of the entry's cid_to_tx, bounce slot and deferred source.
  detail::store<scope::device>(qp.states[e.cid],
                               queue::sqe_word(queue::sqe_word_position(e.entry_word) + qp.depth, queue::sqe_empty),
                               detail::release);

  detail::fetch_add<scope::device>(counters.completed, std::uint64_t{1}, detail::relaxed);
  detail::fetch_add<scope::device>(counters.latency[latency_bucket(now_ns() - rec.issued_ns)], std::uint64_t{1},
                                   detail::relaxed);
  if (result.ok()) {
    detail::fetch_add<scope::device>(counters.bytes, std::uint64_t{rec.bytes}, detail::relaxed);
  } else {
    detail::fetch_add<scope::device>(counters.errors, std::uint64_t{1}, detail::relaxed);
    io::note_first_failure(io, {io::failure_cause::completed, rec.device, rec.opcode, rec.lba, rec.blocks,
                                result.pack(), rec.destination});
  }
  if (rec.signal_word != 0) {
    // Nobody waits on a signalled request: publish its outcome where its issuer asked, then
    // give the record back. Release pairs with the acquire of whoever watches the word.
    // An atomic store: the watcher may read the status word while another fill of the same
    // line is publishing (it reads it only after its acquire of the signal word, but a plain
    // store here would still race with that earlier reader's load under the C++ model).
    if (rec.signal_status != 0)
      detail::store<scope::device>(*reinterpret_cast<std::uint32_t*>(rec.signal_status), result.pack(),
                                   detail::relaxed);
    if (rec.signal_failures != 0 && !result.ok())
      detail::fetch_add<scope::device>(*reinterpret_cast<std::uint64_t*>(rec.signal_failures), std::uint64_t{1},
                                       detail::relaxed);
    detail::fetch_add<scope::device>(*reinterpret_cast<std::uint32_t*>(rec.signal_word),
                                     result.ok() ? rec.signal_ok : rec.signal_failed, detail::release);
    rec.signal_word = 0;
    io::give_back(io, rec, detail::load<scope::device>(rec.state, detail::relaxed));
    return;
  }
  io::publish_result(io, rec, result.pack());
}

// Retires the entries `fresh` of the window at `offset`; the whole team calls it. Returns how
// many named a transaction. A warp team passes each lane's own entry's DW3 as its scan read it
// (`scanned_dw3`): the entry does not change until the window is retired, and reading it again
// would cost every retirement one more trip across PCIe before its first lookup. A warp team
// with a staging area (`staging`, the completion service's on sm_90) makes the window's copies
// through it, all in flight at once; without one, one entry after another with its lanes' loads.
template <class Team>
AGIO_HD std::uint32_t retire_window(const io::io_state& io, const queue::queue_pair& qp, std::uint32_t offset,
                                    std::uint32_t fresh, [[maybe_unused]] std::uint32_t scanned_dw3,
                                    [[maybe_unused]] detail::warp::bulk_staging* staging) {
  const std::uint64_t seen_ns = qp.stamps != nullptr ? now_ns() : 0;
#if defined(__CUDA_ARCH__)
  if constexpr (Team::whole_warp) {
    // Lane k looks up and finishes entry k itself, so the window's bookkeeping (a few
    // dependent trips to memory per entry, some across PCIe) happens once for all entries
    // instead of once per entry; the copies are made by the whole warp, through the staging
    // area all at once where there is one, else one entry at a time.
    const detail::warp::lane_group warp = detail::warp::whole_warp();
    const unsigned lane = detail::warp::lane_id();
    entry_to_retire mine;
    if ((fresh >> lane) & 1u) mine = look_up<true>(io, qp, scanned_dw3);
    // Each lane acquired only its own entry (scan), and the shuffles below carry values, not
    // memory ordering (PTX model): without this barrier a lane could copy another lane's entry
    // from data nothing orders after that entry. __syncwarp orders the memory accesses of the
    // lanes it joins, so every lane's copies now come after every lane's acquire.
    Team::sync();
    const auto from = [&warp](const queue::deferred_copy& c, unsigned owner) {
      return queue::deferred_copy{detail::warp::from_lane(warp, std::uint64_t{c.source}, owner),
                                  detail::warp::from_lane(warp, std::uint64_t{c.destination}, owner),
                                  detail::warp::from_lane(warp, std::uint64_t{c.bytes}, owner),
                                  detail::warp::from_lane(warp, std::uint64_t{c.check}, owner)};
    };
    detail::warp::bulk_staging none;
    detail::warp::bulk_copies copies(staging != nullptr ? *staging : none);
    const std::uint32_t copying = detail::warp::ballot(warp, mine.copies());
    for (std::uint32_t pending = copying; pending != 0; pending &= pending - 1) {
      const queue::deferred_copy c = from(mine.copy, detail::warp::lowest_lane(pending));
      copies.copy(reinterpret_cast<void*>(c.destination), reinterpret_cast<const void*>(c.source),
                  static_cast<std::uint32_t>(c.bytes));
    }
    // Every source has been read and every copy is in place.
    copies.finish();
    // Copies from a store's bytes are checked together, one look per entry by its own lane,
    // after a fence that orders every lane's copy before every look (copy_from_view).
    const std::uint32_t checked = detail::warp::ballot(warp, mine.copies() && mine.copy.check != 0);
    if (checked != 0) {
      queue::copy_fence();
      Team::sync();
      const bool overtaken =
          ((checked >> lane) & 1u) != 0 &&
          !queue::copy_is_whole(mine.copy.check,
                                queue::read_sequences(qp.view_sequences, stripes_of(qp, mine.copy), detail::relaxed));
      for (std::uint32_t again = detail::warp::ballot(warp, overtaken); again != 0; again &= again - 1) {
        const unsigned owner = detail::warp::lowest_lane(again);
        const bool whole = copy_again_until_whole<Team>(qp, from(mine.copy, owner));
        if (lane == owner && !whole) mine.result = torn_copy();
      }
    }
    // No lane may still be reading an entry's bounce slot when its owner frees it below, and
    // the data precedes every result.
    Team::sync();
    if ((fresh >> lane) & 1u) finish(io, qp, mine, seen_ns);
    return detail::warp::count(detail::warp::ballot(warp, mine.valid));
  }
#endif
  std::uint32_t finished = 0;
  for (std::uint32_t pending = fresh; pending != 0; pending &= pending - 1) {
    const unsigned lane = detail::warp::lowest_lane(pending);
    // Every lane reads the entry itself rather than shuffling it from its owner lane.
    entry_to_retire e = look_up<false>(io, qp, detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::relaxed));
    copy_out<Team>(qp, e);
    // No lane may still be reading the entry's bookkeeping when the leader frees it below.
    Team::sync();
    if (Team::is_leader()) finish(io, qp, e, seen_ns);
    if (e.valid) ++finished;
  }
  return finished;
}

// One step of Algorithm 1 on one queue pair: check the current window, retire what is new,
// and when the whole window is retired move on and ring the head doorbell. The caller owns the
// queue's polling state. Returns the number of entries retired.
template <class Team>
AGIO_HD std::uint32_t poll_queue(const io::io_state& io, const queue::queue_pair& qp,
                                 detail::warp::bulk_staging* staging = nullptr) {
  queue::cq_poll_state& state = *qp.poll;
  const std::uint32_t offset = state.offset;
  const std::uint32_t phase = state.phase;
  const std::uint32_t mask = state.mask;
  std::uint32_t scanned_dw3 = 0;  // a warp lane's own entry's (the last entry read, for a solo team)
  const std::uint32_t fresh = Team::scan(mask, [&](unsigned lane) {
    // Acquire pairs with the controller's release store of DW3, written last.
    scanned_dw3 = detail::load<scope::system>(qp.cq[offset + lane].dw3, detail::acquire);
    return spec::cqe_phase(scanned_dw3) == (phase != 0);
  });
  const std::uint32_t finished = retire_window<Team>(io, qp, offset, fresh, scanned_dw3, staging);
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
AGIO_HD std::uint32_t poll_queue_if_free(const io::io_state& io, const queue::queue_pair& qp,
                                         detail::warp::bulk_staging* staging = nullptr) {
  std::uint32_t unlocked = 0;
  // Acquire pairs with the previous holder's release: its updates of the polling state are seen.
  const bool mine = Team::from_leader(Team::is_leader() && detail::compare_exchange<scope::device>(
                                                               qp.control->retire_lock, unlocked, 1u, detail::acquire));
  if (!mine) return 0;
  std::uint32_t retired = 0;
  // Keep going while windows fill up, so a waiter retires a burst in one turn.
  for (std::uint32_t step = 0; step < 4; ++step) {
    const std::uint32_t n = poll_queue<Team>(io, qp, staging);
    retired += n;
    if (n == 0) break;
  }
  if (Team::is_leader()) detail::store<scope::device>(qp.control->retire_lock, 0u, detail::release);
  Team::sync();
  return retired;
}

// One polling step by whoever retires completions for `qp` under the runtime's mode.
template <class Team>
AGIO_HD std::uint32_t poll_for_mode(const io::io_state& io, const queue::queue_pair& qp,
                                    detail::warp::bulk_staging* staging) {
  return io.retired_by == io::retirement::by_waiters ? poll_queue_if_free<Team>(io, qp, staging)
                                                     : poll_queue<Team>(io, qp, staging);
}

}  // namespace agio::service
