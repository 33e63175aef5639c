#include "array_cache.hpp"

#include <stdexcept>

#include "agio/cache/policies/clock.hpp"
#include "agio/cache/policies/direct_mapped.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/policies/s3_fifo.hpp"

namespace agio::python {
namespace {

// The handle type follows the completion mode: waiters retire completions themselves; in every
// other mode a service does. Above a host tier, a service only: its instantiations are
// io_handle's.
template <class Policy>
std::unique_ptr<array_cache> for_mode(runtime& rt, const cache_options& options, const host_tier_settings& tier) {
  if (tier.bytes != 0) {
    if (rt.completion() == completion_mode::waiters) {
      throw std::invalid_argument(
          "agio: a host tier needs a runtime whose completions a service retires (completion 'on_demand' or "
          "'service', not 'waiters')");
    }
    if (tier.admission == "always") return make_tiered_array_cache_of<Policy, cache::admit_always>(rt, options, tier);
    if (tier.admission == "on_reuse")
      return make_tiered_array_cache_of<Policy, cache::admit_on_reuse>(rt, options, tier);
    if (tier.admission == "on_eviction")
      return make_tiered_array_cache_of<Policy, cache::admit_on_eviction>(rt, options, tier);
    throw std::invalid_argument("agio: host_tier_admission must be 'always', 'on_reuse' or 'on_eviction', not '" +
                                tier.admission + "'");
  }
  if (rt.completion() == completion_mode::waiters) return make_array_cache_of<Policy, waiting_io_handle>(rt, options);
  return make_array_cache_of<Policy, io_handle>(rt, options);
}

}  // namespace

std::unique_ptr<array_cache> make_array_cache(runtime& rt, const std::string& policy, const cache_options& options,
                                              const host_tier_settings& tier) {
  if (policy == "clock") return for_mode<cache::clock>(rt, options, tier);
  if (policy == "lfu_da") return for_mode<cache::lfu_da>(rt, options, tier);
  if (policy == "s3_fifo") return for_mode<cache::s3_fifo>(rt, options, tier);
  if (policy == "direct_mapped") return for_mode<cache::direct_mapped>(rt, options, tier);
  throw std::invalid_argument("agio: policy must be 'clock', 'lfu_da', 's3_fifo' or 'direct_mapped', not '" + policy +
                              "'");
}

}  // namespace agio::python
