#pragma once
// The shadow runs that agio-soak and the GPU suite make (the LFU-DA cache, with and without a
// share table, under either completion mode; and for the GPU suite above a host tier, under each
// admission policy), each compiled once in a translation unit of its own under shadow_runs/:
// each compiles the shadow job into a kernel, which takes nvcc minutes, so apart they compile
// in parallel and only once for both programs. Include this instead of shadow_run.hpp and link
// agio_shadow_runs, and agio_host_tier_shadow_runs for the runs above a host tier
// (shadow_runs.cmake).
#include "agio/cache/host_tier.hpp"
#include "agio/cache/policies/lfu_da.hpp"
#include "agio/cache/share_table.hpp"
#include "harness/shadow_run.hpp"

namespace agio::bench::shadow_detail {

extern template bool run_rounds<cache::lfu_da, cache::no_share_table, io_handle>(runtime&, const io_handle&,
                                                                                 const shadow_config&, std::uint32_t,
                                                                                 const phase_memory&,
                                                                                 const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, waiting_io_handle>(
    runtime&, const waiting_io_handle&, const shadow_config&, std::uint32_t, const phase_memory&,
    const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::share_table, io_handle>(runtime&, const io_handle&,
                                                                              const shadow_config&, std::uint32_t,
                                                                              const phase_memory&,
                                                                              const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::share_table, waiting_io_handle>(
    runtime&, const waiting_io_handle&, const shadow_config&, std::uint32_t, const phase_memory&,
    const phase_progress&);

// Above a host tier (agio_host_tier_shadow_runs).
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, io_handle, cache::admit_always>(
    runtime&, const io_handle&, const shadow_config&, std::uint32_t, const phase_memory&, const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, waiting_io_handle, cache::admit_always>(
    runtime&, const waiting_io_handle&, const shadow_config&, std::uint32_t, const phase_memory&,
    const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, io_handle, cache::admit_on_reuse>(
    runtime&, const io_handle&, const shadow_config&, std::uint32_t, const phase_memory&, const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, waiting_io_handle, cache::admit_on_reuse>(
    runtime&, const waiting_io_handle&, const shadow_config&, std::uint32_t, const phase_memory&,
    const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, io_handle, cache::admit_on_eviction>(
    runtime&, const io_handle&, const shadow_config&, std::uint32_t, const phase_memory&, const phase_progress&);
extern template bool run_rounds<cache::lfu_da, cache::no_share_table, waiting_io_handle, cache::admit_on_eviction>(
    runtime&, const waiting_io_handle&, const shadow_config&, std::uint32_t, const phase_memory&,
    const phase_progress&);

}  // namespace agio::bench::shadow_detail
