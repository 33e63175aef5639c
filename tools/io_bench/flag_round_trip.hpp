#pragma once
// The physical floor of a request's trip: one device thread and one host thread pass a flag
// back and forth through pinned host memory (GPU -> CPU -> GPU on the GPU backend), the least
// any request that a host thread serves can take. The same trips tell how far the host's
// clock is from the device's (agio::now_ns on each side), which the trip split needs to part
// the legs that start on one clock and end on the other.
#include <cstdint>

#include "agio/runtime/runtime.hpp"

namespace agio::bench {

struct flag_round_trip {
  double round_trip_us = 0;  // median over three runs of the runs' mean round trip
  // The host clock less the device clock, from the fastest round trip: the host's answer
  // fell between the device's raise and its seeing the answer, so this is good to within
  // half that round trip (offset_error_ns).
  std::int64_t host_minus_device_ns = 0;
  std::int64_t offset_error_ns = 0;
};

// Three runs of `trips` round trips on `rt`'s backend, beside whatever it runs (its
// completion service). std::runtime_error if either side stops hearing from the other for
// 10 s.
flag_round_trip measure_flag_round_trip(runtime& rt, std::uint32_t trips);

}  // namespace agio::bench
