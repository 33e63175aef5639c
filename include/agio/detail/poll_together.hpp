#pragma once
// Waiting by the lanes of a warp that wait together. Lanes that submitted together (one claim,
// one doorbell: queue/submission.hpp) see their requests finish a little apart, since the
// controller posts their completions one by one and the service may retire them in different
// polls. A lane that then leaves its wait alone goes on alone: its next submission is one of
// its own (a dozen dependent trips to memory), then the next lane's, and so on, where the warp
// together would have paid for one. So a lane whose request has finished stays, for a bounded
// time, until the lanes it began waiting with are done too, and they leave together.
#include <cstdint>

#include "agio/detail/backoff.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"

namespace agio::detail {

// Polls `ready()` until it returns true or `limit` passes, as poll_until; true when ready. On
// the device, a lane that is ready stays up to `together_ns` longer while other lanes of its
// warp that called this together still wait (0: it leaves at once); a lane whose deadline
// passes leaves at once. `ready()` is not called again once it returned true. On the host (a
// warp of one thread), poll_until.
template <class Ready>
AGIO_HD bool poll_together(Ready&& ready, deadline limit, [[maybe_unused]] std::uint64_t together_ns,
                           std::uint32_t max_sleep_ns) {
#if defined(__CUDA_ARCH__)
  if (together_ns == 0) return poll_until(ready, limit, max_sleep_ns);
  // Every lane of `waiting` runs each ballot below; a lane leaves only after the second, and
  // every lane drops the leavers from the group, so no ballot names a lane that left.
  warp::lane_group waiting = warp::active_lanes();
  backoff wait(max_sleep_ns);
  bool done = false;
  std::uint64_t done_at = 0;
  for (;;) {
    bool expired = false;
    if (!done) {
      done = ready();
      if (!done && limit.passed()) {
        done = ready();  // as poll_until: one more look once the deadline has passed
        expired = !done;
      }
      if (done) done_at = now_ns();
    }
    const bool all_over = warp::ballot(waiting, done || expired) == waiting.mask;
    const bool leaves = expired || (done && (all_over || now_ns() - done_at >= together_ns));
    const std::uint32_t leaving = warp::ballot(waiting, leaves);
    if (leaves) return done;
    waiting.mask &= ~leaving;
    wait.pause();
  }
#else
  return poll_until(ready, limit, max_sleep_ns);
#endif
}

}  // namespace agio::detail
