#pragma once
// Requests handed to the completion service to submit (io_handle::post_signalled): one ring of
// slots per submitting worker of the service, in GPU memory, many posters and one consumer, the
// worker that owns the ring. A kernel that posts carries a ring slot's few stores instead of the queue
// submission (record, queue claim, command, PRPs, doorbell), whose registers and code, compiled
// into every kernel that reads through the cache, made its hits 1.3x slower in the graph
// kernels' BFS (H200, 2026-11-29; docs/RESULTS.md).
//
// A slot's sequence word says whose it is, for the ticket `t` that maps to it (t % slots), by
// t's lap, L = t - t % slots (so that memory filled with zeros is a ring of free slots):
//   L          free: the poster holding ticket t may write it
//   L + 1      posted: the request is in it
//   L + 2      submitted (or refused) out of order: the consumer has not yet moved past it
//   L + slots  free for the next lap's ticket, once the consumer has moved past it
// Posters take tickets as in a bounded multi-producer queue: a ticket is taken only when its
// slot is free, so a full ring makes a poster wait (by its deadline) without holding a ticket
// nobody would fill. The consumer moves past slots in ticket order.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/platform.hpp"

namespace agio::queue {

// One posted request: an NVMe read or write of `blocks` LBAs from `lba` of device `device` into
// or out of `buffer`, whose outcome goes to a completion signal (io_handle.hpp) the poster
// waits on, and what the consumer does if it must refuse it: stores its status and adds
// `on_refusal` to the signal's word as the signal would on failure, after storing all ones to
// `cleared_on_refusal` (when set; the cache untags a line whose fill was refused).
struct posted_request {
  std::uint64_t lba;
  std::uint64_t buffer;
  std::uint64_t signal_word;
  std::uint64_t signal_status;
  std::uint64_t signal_failures;
  std::uint64_t cleared_on_refusal;
  std::uint64_t posted_ns;  // the poster's clock, for the submission's deadline
  std::uint32_t device;
  std::uint32_t opcode;
  std::uint32_t blocks;
  std::uint32_t signal_ok;
  std::uint32_t signal_failed;
  std::uint32_t on_refusal;
};

struct alignas(16) posted_slot {
  std::uint64_t sequence;
  std::uint64_t unused;
  posted_request request;
};
static_assert(sizeof(posted_slot) == 96, "runtime_options::posted_slots documents 96 bytes a slot");

// A ring's two counters, apart from each other's cache line: posters add to `tail`, the
// consumer alone moves `head`.
struct alignas(128) posted_cursor {
  std::uint64_t tail;
  std::uint8_t apart[120];
  std::uint64_t head;
};

struct posted_rings {
  posted_slot* slots = nullptr;      // ring r's slots at [r * slots_per_ring, (r + 1) * slots_per_ring)
  posted_cursor* cursors = nullptr;  // one per ring
  std::uint32_t count = 0;           // rings (the service's workers); 0: nothing is posted
  std::uint32_t slots_per_ring = 0;  // a power of two, at least 4

  AGIO_HD posted_slot& slot(std::uint32_t ring, std::uint64_t ticket) const {
    return slots[std::uint64_t{ring} * slots_per_ring + (ticket & (slots_per_ring - 1))];
  }
  // The sequence word of `ticket`'s slot when the slot is free for it.
  AGIO_HD std::uint64_t lap(std::uint64_t ticket) const { return ticket & ~std::uint64_t{slots_per_ring - 1}; }
};

// Takes a free slot of ring `ring` and writes `r` into it. False if none came free by `limit`.
AGIO_HD inline bool post(const posted_rings& rings, std::uint32_t ring, const posted_request& r, deadline limit) {
  posted_cursor& cursor = rings.cursors[ring];
  detail::backoff wait(detail::io_wait_max_sleep_ns);
  std::uint64_t ticket = detail::load<detail::scope::device>(cursor.tail, detail::relaxed);
  for (;;) {
    posted_slot& s = rings.slot(ring, ticket);
    // Acquire pairs with the consumer's release as it moved past the slot's last request: its
    // reads of that request come before our writes.
    const std::uint64_t sequence = detail::load<detail::scope::device>(s.sequence, detail::acquire);
    const auto ahead = static_cast<std::int64_t>(sequence - rings.lap(ticket));
    if (ahead == 0) {
      if (detail::compare_exchange<detail::scope::device>(cursor.tail, ticket, ticket + 1, detail::relaxed)) {
        s.request = r;
        // Release pairs with the consumer's acquire: the request precedes the posted mark.
        detail::store<detail::scope::device>(s.sequence, rings.lap(ticket) + 1, detail::release);
        return true;
      }
      // `ticket` now holds the tail another poster moved on to.
    } else if (ahead < 0) {
      // The slot still holds the previous lap's request: the ring is full.
      if (limit.passed()) return false;
      wait.pause();
      ticket = detail::load<detail::scope::device>(cursor.tail, detail::relaxed);
    } else {
      ticket = detail::load<detail::scope::device>(cursor.tail, detail::relaxed);
    }
  }
}

// What the consumer finds in the slot of `ticket`.
enum class posted_state { empty, posted, done };
AGIO_HD inline posted_state state_of(const posted_rings& rings, const posted_slot& s, std::uint64_t ticket) {
  // Acquire pairs with the poster's release: the request is in place.
  const std::uint64_t sequence = detail::load<detail::scope::device>(s.sequence, detail::acquire);
  const std::uint64_t lap = rings.lap(ticket);
  return sequence == lap + 1 ? posted_state::posted : sequence == lap + 2 ? posted_state::done : posted_state::empty;
}
// Marks the slot of `ticket` handled while the consumer is not yet past it.
AGIO_HD inline void mark_done(const posted_rings& rings, posted_slot& s, std::uint64_t ticket) {
  detail::store<detail::scope::device>(s.sequence, rings.lap(ticket) + 2, detail::relaxed);
}
// Gives the slot of `ticket` to the next lap's poster.
AGIO_HD inline void free_slot(const posted_rings& rings, posted_slot& s, std::uint64_t ticket) {
  // Release: our reads of the request come before the next poster's writes.
  detail::store<detail::scope::device>(s.sequence, rings.lap(ticket) + rings.slots_per_ring, detail::release);
}

// True when ring `ring` holds nothing posted or being posted (a poster that took a ticket has
// moved the tail). The caller orders this after the posters' exit from the submission gate.
AGIO_HD inline bool empty(const posted_rings& rings, std::uint32_t ring) {
  const posted_cursor& cursor = rings.cursors[ring];
  return detail::load<detail::scope::device>(cursor.head, detail::relaxed) ==
         detail::load<detail::scope::device>(cursor.tail, detail::relaxed);
}

}  // namespace agio::queue
