// One of the shadow runs of shadow_runs.hpp, compiled apart (that header says why).
#include "harness/shadow_runs.hpp"

namespace agio::bench::shadow_detail {

template bool run_rounds<cache::lfu_da, cache::no_share_table, io_handle, cache::admit_on_reuse>(
    runtime&, const io_handle&, const shadow_config&, std::uint32_t, const phase_memory&, const phase_progress&);

}  // namespace agio::bench::shadow_detail
