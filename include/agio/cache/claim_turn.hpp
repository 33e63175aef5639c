#pragma once
// Fair claims. Claiming a line of a set for a new block is a race, and an access can lose it
// for as long as others keep winning: a one-line set under 1024 threads is free only for a
// moment between accesses, and whoever looks first takes it, while an access that has waited
// long sleeps longest between looks. So an access that lost `claims_lost_before_ticket` times
// takes a ticket, and a set serves the smallest ticket waiting on it first: while that ticket
// is registered, only its holder may claim a line of the set. The turn ends when the holder
// claims a line or when its access ends any other way (hit, error, deadline), so no turn
// outlives its access and a set never waits on a thread that left.
#include <cstdint>

#include "agio/cache/cache_state.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/platform.hpp"

namespace agio::cache {

inline constexpr std::uint64_t no_ticket = ~std::uint64_t{0};
// Enough that ordinary contention never queues (a loss costs one backoff sleep), few enough
// that an access losing the race is served after about a millisecond of CPU-thread backoff or
// a hundred microseconds on the GPU.
inline constexpr std::uint32_t claims_lost_before_ticket = 64;

class claim_turn {
 public:
  AGIO_HD claim_turn(const cache_state& cache, std::uint32_t set) : serving_(cache.set_turns[set]), tickets_(*cache.next_ticket) {}
  AGIO_HD ~claim_turn() {
    if (ticket_ == no_ticket) return;
    std::uint64_t mine = ticket_;
    detail::compare_exchange<detail::scope::device>(serving_, mine, no_ticket, detail::relaxed);
  }
  claim_turn(const claim_turn&) = delete;
  claim_turn& operator=(const claim_turn&) = delete;

  // Under the set's lock: whether this access may claim a line of the set now. An older ticket
  // than the one being served takes over (the set lock orders these stores; the destructor's
  // compare-exchange only ever clears its own ticket).
  AGIO_HD bool may_claim() const {
    const std::uint64_t now = detail::load<detail::scope::device>(serving_, detail::relaxed);
    if (ticket_ < now) {
      detail::store<detail::scope::device>(serving_, ticket_, detail::relaxed);
      return true;
    }
    return now == no_ticket || now == ticket_;
  }
  // Under the set's lock, once a line is claimed: the next ticket's turn.
  AGIO_HD void claimed() {
    if (ticket_ == no_ticket) return;
    detail::store<detail::scope::device>(serving_, no_ticket, detail::relaxed);
    ticket_ = no_ticket;
    losses_ = 0;
  }
  // The claim found no line it could take, or it was not its turn.
  AGIO_HD void lost() {
    if (ticket_ == no_ticket && ++losses_ >= claims_lost_before_ticket) {
      ticket_ = detail::fetch_add<detail::scope::device>(tickets_, std::uint64_t{1}, detail::relaxed);
    }
  }

 private:
  std::uint64_t& serving_;
  std::uint64_t& tickets_;
  std::uint64_t ticket_ = no_ticket;
  std::uint32_t losses_ = 0;
};

}  // namespace agio::cache
