#pragma once
// make_array_cache_of's definition, for the files that instantiate it (one policy and handle
// type each).
#include <algorithm>
#include <memory>

#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "array_cache.hpp"

namespace agio::python {

template <class Policy, class IO>
class typed_array_cache final : public array_cache {
 public:
  typed_array_cache(runtime& rt, const cache_options& options) : rt_(rt), cache_(rt, options) {}

  void gather(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
              cache::row_failure* failure) override {
    run_job(rt_, threads(count),
            cache::row_segments_gather_job<handle>{cache_.device(), segments, segment_count, count, failure});
  }
  void scatter(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
               cache::row_failure* failure) override {
    run_job(rt_, threads(count),
            cache::row_segments_scatter_job<handle>{cache_.device(), segments, segment_count, count, failure});
  }
  void prefetch(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
                cache::row_failure* failure) override {
    const bool gpu = rt_.backend() == backend::gpu;
    const auto threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, gpu ? 65536 : 16));
    run_job(rt_, threads,
            cache::row_segments_prefetch_job<handle>{cache_.device(), segments, segment_count, count, failure});
  }
  void flush() override { cache_.flush(); }
  cache_counters counters() const override { return cache_.counters(); }
  void reset_counters() override { cache_.reset_counters(); }

 private:
  using handle = typename software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO>::handle;
  std::uint32_t threads(std::uint64_t count) const {
    return cache::row_job_threads(count, rt_.backend() == backend::gpu);
  }

  runtime& rt_;
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> cache_;
};

template <class Policy, class IO>
std::unique_ptr<array_cache> make_array_cache_of(runtime& rt, const cache_options& options) {
  return std::make_unique<typed_array_cache<Policy, IO>>(rt, options);
}

}  // namespace agio::python
