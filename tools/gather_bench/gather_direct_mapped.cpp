// agio bench gather's gathers through a cache of policy direct_mapped.
#include "agio/cache/policies/direct_mapped.hpp"
#include "gather_bench/gather_run_impl.hpp"

namespace agio::bench {
template std::vector<repeat_result> gather_with<cache::direct_mapped>(runtime&, const gather_config&,
                                                                      const gather_buffers&, bool&);
}  // namespace agio::bench
