// agio bench gather's gathers through a cache of policy lfu_da.
#include "agio/cache/policies/lfu_da.hpp"
#include "gather_bench/gather_run_impl.hpp"

namespace agio::bench {
template std::vector<repeat_result> gather_with<cache::lfu_da>(runtime&, const gather_config&, const gather_buffers&,
                                                               bool&);
}  // namespace agio::bench
