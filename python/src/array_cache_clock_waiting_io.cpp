// The array cache of policy clock, for device code using waiting_io_handle.
#include "agio/cache/policies/clock.hpp"
#include "array_cache_impl.hpp"

namespace agio::python {
template std::unique_ptr<array_cache> make_array_cache_of<cache::clock, waiting_io_handle>(runtime&,
                                                                                           const cache_options&);
}  // namespace agio::python
