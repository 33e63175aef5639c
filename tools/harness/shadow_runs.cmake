# agio_shadow_runs: the shadow runs of harness/shadow_runs.hpp, for agio-soak and the GPU suite,
# which both include this file (tests build without tools); defined once.
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
