#pragma once
// Submitting a command to a queue pair (AGILE Algorithm 2).
//
// A submitter claims the next position if its entry is EMPTY, writes the command, marks the
// entry UPDATED and then either wins the doorbell lock and moves the tail over every
// consecutive UPDATED entry (marking them ISSUED, ringing the doorbell once for the batch), or
// sees that another winner's batch already covered its entry. Nobody waits for I/O while
// holding the lock, and a full queue is reported at once so the caller can try the next one.
//
// Lanes of a warp that submit to one queue at the same time do each step together (a lane
// group): one compare-exchange claims their consecutive positions and one doorbell covers
// their entries. Done lane by lane, the warp's lanes would take turns at the same words, and a
// warp of 32 submitters would wait some 32 round trips to memory before its last lane's command
// left. On the host a group is one thread.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/warp.hpp"
#include "agio/queue/queue_pair.hpp"

namespace agio::queue {

using detail::scope;

// Whether position p may be claimed: its entry is EMPTY and free for p (the command `depth`
// before it completed), and so is the entry after it for p + 1, since NVMe allows at most
// depth - 1 commands between head and tail.
AGIO_HD inline bool claimable(const queue_pair& qp, std::uint64_t p) {
  // Acquire pairs with the service's release when it retires the entry's previous command. One
  // load after the other: the two in flight together (relaxed, one fence after them) saved a
  // submission 0.16 us but cost the kernels that submit registers: BFS through the cache went
  // from 80 to 82 and lost a block of 256 threads per SM, and 17 % of its speed (H200, 2026-11-29).
  return detail::load<scope::device>(qp.states[qp.depth.remainder(p)], detail::acquire) == sqe_word(p, sqe_empty) &&
         detail::load<scope::device>(qp.states[qp.depth.remainder(p + 1)], detail::acquire) ==
             sqe_word(p + 1, sqe_empty);
}

// Claims consecutive submission positions for the lanes of `group` (every lane of it calls this
// for the same queue): the group's first lanes, in lane order, as many as have free entries in
// a row. Returns whether the calling lane got one (in `position`); false on every lane when the
// queue is full.
AGIO_HD inline bool try_claim(const queue_pair& qp, const detail::warp::lane_group& group, std::uint64_t& position) {
  const std::uint32_t rank = detail::warp::rank(group);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint64_t first = detail::warp::from_leader(
        group, detail::warp::leads(group) ? detail::load<scope::device>(qp.control->claimed, detail::relaxed)
                                          : std::uint64_t{0});
    // Each lane checks its own entry; the group takes the free run from its lowest lane.
    const std::uint32_t free = detail::warp::ballot(group, claimable(qp, first + rank));
    const std::uint32_t blocked = group.mask & ~free;
    const std::uint32_t run =
        detail::warp::count(blocked == 0 ? group.mask : group.mask & ((1u << detail::warp::lowest_lane(blocked)) - 1));
    if (run == 0) return false;
    bool won = false;
    if (detail::warp::leads(group)) {
      std::uint64_t expected = first;
      won = detail::compare_exchange<scope::device>(qp.control->claimed, expected, first + run, detail::acq_rel);
    }
    if (detail::warp::from_leader(group, won ? 1u : 0u) != 0) {
      position = first + rank;
      return rank < run;
    }
  }
  return false;  // heavy contention: let the caller move on rather than spin here
}

// Single-submitter form (host tests).
AGIO_HD inline bool try_claim(const queue_pair& qp, std::uint64_t& position) {
  return try_claim(qp, detail::warp::lane_group{}, position);
}

// Copies a command into its entry with eight 8-byte stores (the entry may be in mapped host
// memory; four 16-byte stores saved a lone submission 0.2 us at most, H200, 2026-12-01).
AGIO_HD inline void write_entry(spec::command& entry, const spec::command& cmd) {
  const auto* src = reinterpret_cast<const std::uint64_t*>(&cmd);
  auto* dst = reinterpret_cast<std::uint64_t*>(&entry);
  for (int i = 0; i < 8; ++i) detail::store<scope::system>(dst[i], src[i], detail::relaxed);
}

// Moves the tail over consecutive UPDATED entries and rings the doorbell; caller holds the lock.
AGIO_HD inline void advance_tail(const queue_pair& qp) {
  const std::uint64_t start = detail::load<scope::device>(qp.control->tail, detail::relaxed);
  std::uint64_t t = start;
  // Entries are looked at `batch` at a time, their loads in flight together: one by one, a
  // warp's batch of 32 would cost 32 round trips to memory under the lock. Looking past the
  // claimed positions is harmless (an entry never shows UPDATED for a position not yet
  // claimed). Bounded by depth: at most depth - 1 entries can be UPDATED at once.
  constexpr std::uint32_t batch = 8;
  while (t - start < qp.depth) {
    std::uint64_t words[batch];
    for (std::uint32_t k = 0; k < batch; ++k) {
      words[k] = detail::load<scope::device>(qp.states[qp.depth.remainder(t + k)], detail::batch_load);
    }
    std::uint32_t run = 0;
    for (std::uint32_t k = 0; k < batch; ++k) {
      if (run == k && words[k] == sqe_word(t + k, sqe_updated)) run = k + 1;
    }
    // Pairs with each submitter's release of UPDATED, so their command bytes are ours to
    // publish to the controller below.
    detail::batch_load_fence<scope::device>();
    for (std::uint32_t k = 0; k < run; ++k) {
      detail::store<scope::device>(qp.states[qp.depth.remainder(t + k)], sqe_word(t + k, sqe_issued), detail::relaxed);
    }
    // Relaxed: the doorbell's release below orders the stamps, as it does the entries.
    if (qp.stamps != nullptr) {
      const std::uint64_t ringing = now_ns();
      for (std::uint32_t k = 0; k < run; ++k)
        detail::store<scope::system>(qp.stamps[qp.depth.remainder(t + k)].submitted, ringing, detail::relaxed);
    }
    t += run;
    if (run < batch) break;
  }
  if (t == start) return;
  // Release pairs with submitters polling `tail` to learn their entry was issued.
  detail::store<scope::device>(qp.control->tail, t, detail::release);
  // System-scope release pairs with the controller's acquire of the doorbell: every command
  // byte before the new tail is visible to it.
  detail::store<scope::system>(*qp.sq_tail_doorbell, qp.depth.remainder(t), detail::release);
}

// Publishes the command already written at `position` (Algorithm 2, lines 6-10) by every lane
// of `group` (lanes that claimed together). Returns once a doorbell covering the entry has rung;
// the bound is the progress of earlier submitters, who are only writing their entries and never
// wait for I/O.
AGIO_HD inline void publish(const queue_pair& qp, const detail::warp::lane_group& group, std::uint64_t position) {
  const std::uint32_t slot = qp.depth.remainder(position);
  // Release pairs with advance_tail's acquire: the command bytes precede the state change.
  detail::store<scope::device>(qp.states[slot], sqe_word(position, sqe_updated), detail::release);
  // The group's entries are all UPDATED before any of its lanes moves the tail, so the first
  // to take the lock covers them all.
  detail::warp::sync(group);
  detail::backoff wait(1'024);
  while (detail::load<scope::device>(qp.control->tail, detail::acquire) <= position) {
    std::uint32_t unlocked = 0;
    if (detail::compare_exchange<scope::device>(qp.control->doorbell_lock, unlocked, 1u, detail::acquire)) {
      advance_tail(qp);
      detail::store<scope::device>(qp.control->doorbell_lock, 0u, detail::release);
    } else {
      wait.pause();
    }
  }
}

AGIO_HD inline void publish(const queue_pair& qp, std::uint64_t position) {
  publish(qp, detail::warp::lane_group{}, position);
}

}  // namespace agio::queue
