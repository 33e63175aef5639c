// The array cache of policy direct_mapped, for device code using io_handle.
#include "agio/cache/policies/direct_mapped.hpp"
#include "array_cache_impl.hpp"

namespace agio::python {
template std::unique_ptr<array_cache> make_array_cache_of<cache::direct_mapped, io_handle>(runtime&,
                                                                                           const cache_options&);
}  // namespace agio::python
