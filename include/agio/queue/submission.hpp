#pragma once
// Submitting a command to a queue pair (AGILE Algorithm 2).
//
// A submitter claims the next position if its entry is EMPTY, writes the command, marks the
// entry UPDATED and then either wins the doorbell lock and moves the tail over every
// consecutive UPDATED entry (marking them ISSUED, ringing the doorbell once for the batch), or
// sees that another winner's batch already covered its entry. Nobody waits for I/O while
// holding the lock, and a full queue is reported at once so the caller can try the next one.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/queue/queue_pair.hpp"

namespace agio::queue {

using detail::scope;

// Claims the next submission position, or returns false when the queue is full. The entry of
// position p must be EMPTY and free for p (the command `depth` before it completed), and the
// entry after it must be free for p + 1: NVMe allows at most depth - 1 commands between head
// and tail.
AGIO_HD inline bool try_claim(const queue_pair& qp, std::uint64_t& position) {
  std::uint64_t p = detail::load<scope::device>(qp.control->claimed, detail::relaxed);
  for (int attempt = 0; attempt < 8; ++attempt) {
    const std::uint32_t slot = static_cast<std::uint32_t>(p % qp.depth);
    const std::uint32_t next = static_cast<std::uint32_t>((p + 1) % qp.depth);
    // Acquire pairs with the service's release when it retires the entry's previous command.
    if (detail::load<scope::device>(qp.states[slot], detail::acquire) != sqe_word(p, sqe_empty) ||
        detail::load<scope::device>(qp.states[next], detail::acquire) != sqe_word(p + 1, sqe_empty)) {
      return false;
    }
    if (detail::compare_exchange<scope::device>(qp.control->claimed, p, p + 1, detail::acq_rel)) {
      position = p;
      return true;
    }
  }
  return false;  // heavy contention: let the caller move on rather than spin here
}

// Copies a command into its entry with 16-byte stores (the entry may be in mapped host memory).
AGIO_HD inline void write_entry(spec::command& entry, const spec::command& cmd) {
  const auto* src = reinterpret_cast<const std::uint64_t*>(&cmd);
  auto* dst = reinterpret_cast<std::uint64_t*>(&entry);
  for (int i = 0; i < 8; ++i) detail::store<scope::system>(dst[i], src[i], detail::relaxed);
}

// Moves the tail over consecutive UPDATED entries and rings the doorbell; caller holds the lock.
AGIO_HD inline void advance_tail(const queue_pair& qp) {
  const std::uint64_t start = detail::load<scope::device>(qp.control->tail, detail::relaxed);
  std::uint64_t t = start;
  // Bounded by depth: at most depth - 1 entries can be UPDATED at once.
  for (std::uint32_t n = 0; n < qp.depth; ++n) {
    const std::uint32_t slot = static_cast<std::uint32_t>(t % qp.depth);
    // Acquire pairs with the submitter's release of UPDATED, so its command bytes are ours to
    // publish to the controller below.
    if (detail::load<scope::device>(qp.states[slot], detail::acquire) != sqe_word(t, sqe_updated)) break;
    detail::store<scope::device>(qp.states[slot], sqe_word(t, sqe_issued), detail::relaxed);
    ++t;
  }
  if (t == start) return;
  // Release pairs with submitters polling `tail` to learn their entry was issued.
  detail::store<scope::device>(qp.control->tail, t, detail::release);
  // System-scope release pairs with the controller's acquire of the doorbell: every command
  // byte before the new tail is visible to it.
  detail::store<scope::system>(*qp.sq_tail_doorbell, static_cast<std::uint32_t>(t % qp.depth),
                               detail::release);
}

// Publishes the command already written at `position` (Algorithm 2, lines 6-10). Returns once a
// doorbell covering the entry has rung; the bound is the progress of earlier submitters, who
// are only writing their entries and never wait for I/O.
AGIO_HD inline void publish(const queue_pair& qp, std::uint64_t position) {
  const std::uint32_t slot = static_cast<std::uint32_t>(position % qp.depth);
  // Release pairs with advance_tail's acquire: the command bytes precede the state change.
  detail::store<scope::device>(qp.states[slot], sqe_word(position, sqe_updated), detail::release);
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

}  // namespace agio::queue
