// agio bench gather's gathers through a cache of policy clock.
#include "agio/cache/policies/clock.hpp"
#include "gather_bench/gather_run_impl.hpp"

namespace agio::bench {
template std::vector<repeat_result> gather_with<cache::clock>(runtime&, const gather_config&, const gather_buffers&,
                                                              bool&);
}  // namespace agio::bench
