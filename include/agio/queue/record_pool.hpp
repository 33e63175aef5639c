#pragma once
// Taking and giving back transaction records. runtime_control::records_available counts the
// records a submitter may take, so that a submitter learns at once, from one counter, that
// none is left; every transition that makes a record takeable adds one to it, after the
// transition, so a submitter that counted on one always finds one.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/queue/io_state.hpp"
#include "agio/queue/record_state.hpp"

namespace agio::io {

AGIO_HD inline void count_available(const io_state& io) {
  // Relaxed: the record's state word carries the ordering; this only counts.
  detail::fetch_add<detail::scope::device>(io.control->records_available, std::int32_t{1}, detail::relaxed);
}

// What a taker starts from: how many records were available before it counted itself out of
// them, and where in the pool to start looking. Both adds are made before anything waits for
// either, so that they are in flight together (and with the submission gate's: io_handle.hpp);
// one after the other they cost a request two trips to memory instead of one.
struct record_ticket {
  std::int32_t available;
  std::uint32_t cursor;
};

AGIO_HD inline record_ticket draw_ticket(const io_state& io) {
  // Relaxed: the record's state word carries the ordering; these count and spread.
  const std::int32_t available =
      detail::fetch_add<detail::scope::device>(io.control->records_available, std::int32_t{-1}, detail::relaxed);
  const std::uint32_t cursor = detail::fetch_add<detail::scope::device>(io.control->tx_cursor, 1u, detail::relaxed);
  return {available, cursor};
}

// Gives back the count of a ticket that takes no record (its request was refused first).
AGIO_HD inline void return_ticket(const io_state& io) { count_available(io); }

// Takes a record for a new request with `ticket`: false at once when none was available. A
// record's next owner writes its fields only after this, so the previous owner's reads of them
// are done. `held` gets how many records were taken when this one was: about how many requests
// are in flight.
AGIO_HD inline bool take_record(const io_state& io, record_ticket ticket, std::uint32_t& index,
                                std::uint32_t& generation, deadline limit, std::uint32_t& held) {
  if (ticket.available <= 0) {
    return_ticket(io);
    return false;
  }
  held = io.record_count - static_cast<std::uint32_t>(ticket.available);
  // One record is ours to find. Scanning from a shared cursor spreads takers over the pool;
  // a record another taker got first sends us on to the next.
  std::uint32_t i = ticket.cursor % io.record_count;
  detail::backoff wait(4'096);
  for (;;) {
    for (std::uint32_t probe = 0; probe < io.record_count; ++probe) {
      std::uint64_t word = detail::load<detail::scope::device>(io.records[i].state, detail::relaxed);
      // Acquire pairs with the release by which the record was given back or finished: the
      // previous owner's and retirer's accesses to its fields come before ours.
      if (record_state::claimable(word) &&
          detail::compare_exchange<detail::scope::device>(io.records[i].state, word, record_state::taken_from(word),
                                                          detail::acquire)) {
        index = i;
        generation = record_state::generation(record_state::taken_from(word));
        return true;
      }
      i = i + 1 == io.record_count ? 0 : i + 1;
    }
    // Only concurrent takers and givers can make a sweep miss; the record counted on exists.
    if (limit.passed()) {
      count_available(io);
      return false;
    }
    wait.pause();
  }
}

// Gives back a record nobody will collect a result from (a signalled request, a request that
// found no queue entry, a result just collected).
AGIO_HD inline void give_back(const io_state& io, transaction_record& rec, std::uint64_t word) {
  // Release pairs with take_record's acquire: our accesses to the record come before the next
  // owner's.
  detail::store<detail::scope::device>(rec.state, record_state::given_back(word), detail::release);
  count_available(io);
}

// Publishes a waited-on request's result. The record is the waiter's until it collects the
// result, unless it has abandoned the request: then the record is takeable from now on.
AGIO_HD inline void publish_result(const io_state& io, transaction_record& rec, std::uint32_t packed) {
  // Release pairs with the waiter's acquire (the data and counters precede the result) and
  // with take_record's acquire of an abandoned record.
  const std::uint64_t before =
      detail::fetch_or<detail::scope::device>(rec.state, std::uint64_t{packed}, detail::release);
  if (record_state::is_abandoned(before)) count_available(io);
}

}  // namespace agio::io
