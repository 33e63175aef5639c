#pragma once
// The shadow runs that agio-soak and the GPU suite make (the LFU-DA cache, with and without a
// share table, under either completion mode), each compiled once in a translation unit of its own
// under shadow_runs/: each compiles the shadow job into a kernel, which takes nvcc minutes, so
// apart they compile in parallel and only once for both programs. Include this instead of
// shadow_run.hpp and link agio_shadow_runs (shadow_runs.cmake).
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

}  // namespace agio::bench::shadow_detail
