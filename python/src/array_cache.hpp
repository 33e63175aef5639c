#pragma once
// The cache behind an agio.Cache: a software_cache of the policy the user named, run by the
// runtime's completion mode, behind one interface so that the binding (cache.cpp) needs no
// templates. Each policy and handle type is instantiated in a file of its own
// (array_cache_<policy>_<handle>.cpp), so that nvcc compiles them side by side.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "agio/cache/row_access.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/runtime/software_cache.hpp"

namespace agio::python {

// The host tier below a cache (agio/cache/host_tier.hpp); none when `bytes` is 0.
struct host_tier_settings {
  std::size_t bytes = 0;
  std::string admission = "always";  // or "on_reuse"
  int numa_node = -1;
  std::uint32_t added_latency_ns = 0;
};

class array_cache {
 public:
  virtual ~array_cache() = default;
  // The rows of `segments` (segment_count of them, in memory the job's threads reach, the
  // positions [0, count) split between them: cache::row_segment) copied into (gather) or from
  // (scatter) their rows buffers, as one agio job; `failure` is device memory started as
  // row_failure::none(count), which the job fills in.
  virtual void gather(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
                      cache::row_failure* failure) = 0;
  virtual void scatter(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
                       cache::row_failure* failure) = 0;
  virtual void prefetch(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
                        cache::row_failure* failure) = 0;
  virtual void flush() = 0;
  virtual cache_counters counters() const = 0;
  virtual void reset_counters() = 0;
  // The host tier's counts (zeros without one).
  virtual cache_counters host_tier_counters() const = 0;
};

// The cache of `Policy` whose device code uses handle type `IO` (io_handle or waiting_io_handle).
template <class Policy, class IO>
std::unique_ptr<array_cache> make_array_cache_of(runtime& rt, const cache_options& options);
// The same above a host tier of `Policy` that admits blocks by `Admission`, with a completion
// service (io_handle).
template <class Policy, class Admission>
std::unique_ptr<array_cache> make_tiered_array_cache_of(runtime& rt, const cache_options& options,
                                                        const host_tier_settings& tier);

// The cache of the policy named `policy` ("clock", "lfu_da", "s3_fifo", "direct_mapped") for the
// runtime's completion mode, above a host tier when `tier.bytes` is not 0 (not with waiters
// retiring completions); std::invalid_argument for another name or admission.
std::unique_ptr<array_cache> make_array_cache(runtime& rt, const std::string& policy, const cache_options& options,
                                              const host_tier_settings& tier = {});

}  // namespace agio::python
