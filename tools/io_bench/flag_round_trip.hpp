#pragma once
// The physical floor of a request's trip: one device thread and one host thread pass a flag
// back and forth through pinned host memory (GPU -> CPU -> GPU on the GPU backend), the least
// any request that a host thread serves can take.
#include <cstdint>

#include "agio/runtime/runtime.hpp"

namespace agio::bench {

// The median over three runs of `trips` round trips each, in microseconds a round trip, on
// `rt`'s backend and beside whatever it runs (its completion service). std::runtime_error if
// either side stops hearing from the other for 10 s.
double flag_round_trip_us(runtime& rt, std::uint32_t trips);

}  // namespace agio::bench
