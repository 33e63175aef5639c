// The array cache of policy lfu_da, for device code using waiting_io_handle.
#include "agio/cache/policies/lfu_da.hpp"
#include "array_cache_impl.hpp"

namespace agio::python {
template std::unique_ptr<array_cache> make_array_cache_of<cache::lfu_da, waiting_io_handle>(runtime&,
                                                                                            const cache_options&);
}  // namespace agio::python
