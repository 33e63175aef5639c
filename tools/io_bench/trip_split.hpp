#pragma once
// One request in flight, its trip split leg by leg (agio bench io).
#include <algorithm>
#include <cstdint>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "io_bench/flag_round_trip.hpp"

namespace agio::bench {

// Where the issuing thread's time goes, on its own (the device's) clock, in microseconds a
// request: in async_read or async_write (a record, a queue entry, the doorbell), then in
// wait() until the result is seen.
struct phase_time {
  double submission_us = 0;
  double waiting_us = 0;
};

// The trip's legs, in microseconds a request, from the runtime's trip stamps
// (runtime_options::trip_stamps) over a run with one request in flight:
struct trip_legs {
  double submission_us = 0;     // the thread in async_read / async_write (device clock)
  double to_controller_us = 0;  // the doorbell rang -> the controller takes it (clocks crossed)
  double in_controller_us = 0;  // taken -> completion posted (host clock), store_us of it the store's
  double store_us = 0;
  double to_retirer_us = 0;  // posted -> the retirer sees it (clocks crossed): through the
                             // completion service, or the waiter itself when waiters retire
  double retiring_us = 0;    // seen -> finished: the data's copy and the bookkeeping (device clock)
  // The rest of wait(): the waiter noticing its finished request (less the few instructions of
  // async_read after the doorbell, which to_controller_us also holds).
  double to_waiter_us = 0;
  double offset_error_us = 0;  // the crossed legs are good to within this each; their sum exactly
};

// `sums`: the devices' trip sums over the run, less those before it.
inline trip_legs split_trip(const phase_time& phases, double store_us, const io::trip_sums& sums,
                            const flag_round_trip& clocks) {
  trip_legs legs;
  if (sums.requests == 0) return legs;
  const auto n = static_cast<double>(sums.requests);
  // The crossed legs' raw sums hold the clocks' offset once per request, modulo 2^64.
  const std::uint64_t offsets = sums.requests * static_cast<std::uint64_t>(clocks.host_minus_device_ns);
  const auto per_request_us = [n](std::uint64_t raw) {
    return static_cast<double>(static_cast<std::int64_t>(raw)) / n / 1e3;
  };
  legs.submission_us = phases.submission_us;
  legs.to_controller_us = per_request_us(sums.to_controller - offsets);
  legs.in_controller_us = per_request_us(sums.in_controller);
  legs.store_us = store_us;
  legs.to_retirer_us = per_request_us(sums.to_retirer + offsets);
  legs.retiring_us = per_request_us(sums.retiring);
  legs.to_waiter_us =
      phases.waiting_us - legs.to_controller_us - legs.in_controller_us - legs.to_retirer_us - legs.retiring_us;
  legs.offset_error_us = static_cast<double>(clocks.offset_error_ns) / 1e3;
  return legs;
}

// The clocks' offset over a run, from measurements before and after it: their mean, good to
// within the worse of their bounds plus half the drift between them.
inline flag_round_trip clocks_across(const flag_round_trip& before, const flag_round_trip& after) {
  const std::int64_t drift = after.host_minus_device_ns - before.host_minus_device_ns;
  flag_round_trip c = after;
  c.host_minus_device_ns = before.host_minus_device_ns + drift / 2;
  c.offset_error_ns = std::max(before.offset_error_ns, after.offset_error_ns) + (drift < 0 ? -drift : drift) / 2;
  return c;
}

// The devices' trip sums in `after` less those in `before`.
inline io::trip_sums trip_sums_between(const std::vector<device_counters>& before,
                                       const std::vector<device_counters>& after) {
  io::trip_sums d{};
  for (std::size_t k = 0; k < after.size(); ++k) {
    const io::trip_sums& a = after[k].trip;
    const io::trip_sums b = k < before.size() ? before[k].trip : io::trip_sums{};
    d.requests += a.requests - b.requests;
    d.to_controller += a.to_controller - b.to_controller;
    d.in_controller += a.in_controller - b.in_controller;
    d.to_retirer += a.to_retirer - b.to_retirer;
    d.retiring += a.retiring - b.retiring;
  }
  return d;
}

}  // namespace agio::bench
