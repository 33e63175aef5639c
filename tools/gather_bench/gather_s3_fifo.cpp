// agio bench gather's gathers through a cache of policy s3_fifo.
#include "agio/cache/policies/s3_fifo.hpp"
#include "gather_bench/gather_run_impl.hpp"

namespace agio::bench {
template std::vector<repeat_result> gather_with<cache::s3_fifo>(runtime&, const gather_config&, const gather_buffers&,
                                                                bool&);
}  // namespace agio::bench
