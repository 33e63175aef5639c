// The array cache of policy s3_fifo, for device code using waiting_io_handle.
#include "agio/cache/policies/s3_fifo.hpp"
#include "array_cache_impl.hpp"

namespace agio::python {
template std::unique_ptr<array_cache> make_array_cache_of<cache::s3_fifo, waiting_io_handle>(runtime&,
                                                                                             const cache_options&);
}  // namespace agio::python
