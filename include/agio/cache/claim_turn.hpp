#pragma once
// Fair claims. Claiming a line of a set for a new block is a race, and an access can lose it
// for as long as others keep winning: a one-line set under 1024 threads is free only for a
// moment between accesses, and whoever looks first takes it, while an access that has waited
// long sleeps longest between looks. So an access that has waited `starving_after_ns` asks its
// set to serve it first, with its deadline as its place in the queue: while the earliest
// deadline waiting on a set is registered, only its access may claim a line there. Accesses
// made with the cache's usual timeout are thus served in the order they began. The turn ends
// when its access claims a line or ends any other way (hit, error, deadline), so no turn
// outlives its access and a set never waits on a thread that left.
//
// An access carries one flag for this through its retry loop, not a count or a ticket: the
// cache's kernels are short of registers, and a loop-carried 64-bit ticket cost them a dozen.
#include <cstdint>

#include "agio/cache/cache_state.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/platform.hpp"

namespace agio::cache {

inline constexpr std::uint64_t no_turn = ~std::uint64_t{0};

// Where losing streaks happen: on CPU threads, where the OS schedules a thousand threads on a
// few cores and a waiter sleeps up to 32 us between looks (an access lost the race for 28 s of
// a 60 s deadline in a one-line cache under 1024 threads, 2026-11-22). Long enough that
// ordinary contention never queues. GPU warps are scheduled by the hardware and look again
// within 2 us, and there a queue costs more than it saves: with 65536 threads on a cache of
// 1 % of the data most accesses wait longer than any useful threshold, and serving one access
// per set at a time kept that benchmark (cache_policies, under a minute without queues) from
// finishing in 240 s (H100, 2026-11-22). So the GPU never queues.
#if defined(__CUDA_ARCH__)
inline constexpr bool turns_taken = false;
#else
inline constexpr bool turns_taken = true;
#endif
inline constexpr std::uint64_t starving_after_ns = 2'000'000;

struct claim_turn {
  bool queued = false;  // this access registered its deadline with its set

  // Under the set's lock: whether the access with deadline `limit`, made with a timeout of
  // about `timeout_ns`, may claim a line of `set` now. A starving access with an earlier
  // deadline than the one being served takes over (the set lock orders these stores; leave()'s
  // compare-exchange only ever clears its own deadline).
  AGIO_HD bool may_claim(const cache_state& cache, std::uint32_t set, deadline limit, std::uint64_t timeout_ns) {
    std::uint64_t& serving = cache.set_turns[set];
    const std::uint64_t now = detail::load<detail::scope::device>(serving, detail::relaxed);
    if (limit.at_ns < now && starving(limit, timeout_ns)) {
      detail::store<detail::scope::device>(serving, limit.at_ns, detail::relaxed);
      queued = true;
      return true;
    }
    return now == no_turn || now == limit.at_ns;
  }
  // Whether the access would ask for its turn the next time it holds the set's lock: it then
  // takes the lock even while the set has no line to give.
  AGIO_HD bool would_queue(deadline limit, std::uint64_t timeout_ns) const {
    return !queued && starving(limit, timeout_ns);
  }
  // Under the set's lock, once a line is claimed: the next access's turn.
  AGIO_HD void claimed(const cache_state& cache, std::uint32_t set, deadline limit) {
    if (!queued) return;
    leave(cache, set, limit);
    queued = false;
  }
  // The access is over: a turn it still holds passes on.
  AGIO_HD void leave(const cache_state& cache, std::uint32_t set, deadline limit) const {
    std::uint64_t mine = limit.at_ns;
    detail::compare_exchange<detail::scope::device>(cache.set_turns[set], mine, no_turn, detail::relaxed);
  }

 private:
  AGIO_HD static bool starving(deadline limit, std::uint64_t timeout_ns) {
    if (!turns_taken || limit.at_ns == deadline::never().at_ns) return false;
    const std::uint64_t began = limit.at_ns > timeout_ns ? limit.at_ns - timeout_ns : 0;
    return now_ns() > began + starving_after_ns;
  }
};

}  // namespace agio::cache
