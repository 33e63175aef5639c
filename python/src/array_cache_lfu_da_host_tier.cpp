// The array caches of policy lfu_da above a host tier, for device code using io_handle.
#include "agio/cache/policies/lfu_da.hpp"
#include "array_cache_impl.hpp"

namespace agio::python {
template std::unique_ptr<array_cache> make_tiered_array_cache_of<cache::lfu_da, cache::admit_always>(
    runtime&, const cache_options&, const host_tier_settings&);
template std::unique_ptr<array_cache> make_tiered_array_cache_of<cache::lfu_da, cache::admit_on_reuse>(
    runtime&, const cache_options&, const host_tier_settings&);
template std::unique_ptr<array_cache> make_tiered_array_cache_of<cache::lfu_da, cache::admit_on_eviction>(
    runtime&, const cache_options&, const host_tier_settings&);
}  // namespace agio::python
