#pragma once
// make_array_cache_of's and make_tiered_array_cache_of's definitions, for the files that
// instantiate them (one policy and handle type, or one policy above a host tier, each).
#include <algorithm>
#include <memory>

#include "agio/cache/host_tier.hpp"
#include "agio/cache/row_access.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/software_cache.hpp"
#include "array_cache.hpp"

namespace agio::python {

// A cache straight above the stores.
template <class Policy, class IO>
struct caches_alone {
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, IO> cache;
  caches_alone(runtime& rt, const cache_options& options) : cache(rt, options) {}
  cache_counters tier_counters() const { return {}; }
  void reset_tier_counters() {}
};

// A cache above a host tier of the same policy; the tier is made first and goes last.
template <class Policy, class Admission>
struct caches_above_tier {
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, io_handle> tier;
  software_cache<Policy, cache::no_lock_chain, cache::no_share_table, cache::tiered_io<Policy, Admission, io_handle>>
      cache;
  caches_above_tier(runtime& rt, const cache_options& options, const host_tier_settings& t)
      : tier(rt, tier_options(options, t)), cache(rt, tier, options, host_tier_options{t.added_latency_ns}) {}
  static cache_options tier_options(cache_options options, const host_tier_settings& t) {
    options.bytes = t.bytes;
    options.memory = cache_memory::host;
    options.numa_node = t.numa_node;
    return options;
  }
  cache_counters tier_counters() const { return tier.counters(); }
  void reset_tier_counters() { tier.reset_counters(); }
};

template <class Caches>
class typed_array_cache final : public array_cache {
 public:
  template <class... Args>
  explicit typed_array_cache(runtime& rt, const Args&... args) : rt_(rt), caches_(rt, args...) {}

  void gather(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
              cache::row_failure* failure) override {
    run_job(rt_, threads(count),
            cache::row_segments_gather_job<handle>{caches_.cache.device(), segments, segment_count, count, failure});
  }
  void scatter(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
               cache::row_failure* failure) override {
    run_job(rt_, threads(count),
            cache::row_segments_scatter_job<handle>{caches_.cache.device(), segments, segment_count, count, failure});
  }
  void prefetch(const cache::row_segment* segments, std::uint32_t segment_count, std::uint64_t count,
                cache::row_failure* failure) override {
    const bool gpu = rt_.backend() == backend::gpu;
    const auto threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, gpu ? 65536 : 16));
    run_job(rt_, threads,
            cache::row_segments_prefetch_job<handle>{caches_.cache.device(), segments, segment_count, count, failure});
  }
  void flush() override { caches_.cache.flush(); }
  cache_counters counters() const override { return caches_.cache.counters(); }
  void reset_counters() override {
    caches_.cache.reset_counters();
    caches_.reset_tier_counters();
  }
  cache_counters host_tier_counters() const override { return caches_.tier_counters(); }

 private:
  using handle = typename decltype(Caches::cache)::handle;
  std::uint32_t threads(std::uint64_t count) const {
    return cache::row_job_threads(count, rt_.backend() == backend::gpu);
  }

  runtime& rt_;
  Caches caches_;
};

template <class Policy, class IO>
std::unique_ptr<array_cache> make_array_cache_of(runtime& rt, const cache_options& options) {
  return std::make_unique<typed_array_cache<caches_alone<Policy, IO>>>(rt, options);
}

template <class Policy, class Admission>
std::unique_ptr<array_cache> make_tiered_array_cache_of(runtime& rt, const cache_options& options,
                                                        const host_tier_settings& tier) {
  return std::make_unique<typed_array_cache<caches_above_tier<Policy, Admission>>>(rt, options, tier);
}

}  // namespace agio::python
