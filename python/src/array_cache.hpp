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
};

// The cache of `Policy` whose device code uses handle type `IO` (io_handle or waiting_io_handle).
template <class Policy, class IO>
std::unique_ptr<array_cache> make_array_cache_of(runtime& rt, const cache_options& options);

// The cache of the policy named `policy` ("clock", "lfu_da", "s3_fifo", "direct_mapped") for the
// runtime's completion mode; std::invalid_argument for another name.
std::unique_ptr<array_cache> make_array_cache(runtime& rt, const std::string& policy, const cache_options& options);

}  // namespace agio::python
