# agio_shadow_runs: the shadow runs of harness/shadow_runs.hpp, for agio-soak and the GPU suite,
# which both include this file (tests build without tools); defined once. The GPU suite also
# links agio_host_tier_shadow_runs.
include_guard(GLOBAL)
set(agio_shadow_run_sources
    ${CMAKE_CURRENT_LIST_DIR}/shadow_runs/lfu_da_no_share_table_io_handle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/shadow_runs/lfu_da_no_share_table_waiting_io_handle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/shadow_runs/lfu_da_share_table_io_handle.cpp
    ${CMAKE_CURRENT_LIST_DIR}/shadow_runs/lfu_da_share_table_waiting_io_handle.cpp)
add_library(agio_shadow_runs STATIC ${agio_shadow_run_sources})
if(AGIO_WITH_CUDA)
  set_source_files_properties(${agio_shadow_run_sources} PROPERTIES LANGUAGE CUDA)
endif()
target_include_directories(agio_shadow_runs PUBLIC ${CMAKE_CURRENT_LIST_DIR}/..)
target_link_libraries(agio_shadow_runs PUBLIC agio::agio)
target_compile_options(agio_shadow_runs PRIVATE ${agio_warnings})

# The GPU suite's runs above a host tier, one per admission policy and completion mode: apart,
# the longest of them bounds the suite's build, where in the test files two admission policies'
# four kernels compiled one after another. Built only for the GPU suite.
set(agio_host_tier_shadow_run_sources)
foreach(admission admit_always admit_on_reuse admit_on_eviction)
  foreach(handle io_handle waiting_io_handle)
    list(APPEND agio_host_tier_shadow_run_sources
         ${CMAKE_CURRENT_LIST_DIR}/shadow_runs/lfu_da_host_tier_${admission}_${handle}.cpp)
  endforeach()
endforeach()
add_library(agio_host_tier_shadow_runs STATIC EXCLUDE_FROM_ALL ${agio_host_tier_shadow_run_sources})
if(AGIO_WITH_CUDA)
  set_source_files_properties(${agio_host_tier_shadow_run_sources} PROPERTIES LANGUAGE CUDA)
endif()
target_link_libraries(agio_host_tier_shadow_runs PUBLIC agio_shadow_runs)
target_compile_options(agio_host_tier_shadow_runs PRIVATE ${agio_warnings})
