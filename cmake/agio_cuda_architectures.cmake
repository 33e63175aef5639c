# Picks the GPU architectures agio's CUDA code is compiled for, before enable_language(CUDA)
# would fall back on CMake's own default (sm_75 with CUDA 13: an H100 would JIT-compile every
# kernel from PTX at start). What the user gives wins: -DCMAKE_CUDA_ARCHITECTURES=... or the
# CUDAARCHS environment variable. Otherwise: the GPUs of this machine, as nvidia-smi reports
# their compute capability (what CMake's `native` would pick, but named in the configure
# output), and on a machine without a GPU the documented list below.
set(AGIO_DEFAULT_CUDA_ARCHITECTURES "80;90" CACHE STRING
    "CUDA architectures built when no GPU is found at configure time (80: A100, 90: H100/H200)")
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES AND NOT DEFINED ENV{CUDAARCHS})
  set(agio_found_architectures "")
  find_program(AGIO_NVIDIA_SMI nvidia-smi)
  if(AGIO_NVIDIA_SMI)
    execute_process(COMMAND ${AGIO_NVIDIA_SMI} --query-gpu=compute_cap --format=csv,noheader
                    OUTPUT_VARIABLE agio_compute_caps RESULT_VARIABLE agio_smi_result ERROR_QUIET
                    OUTPUT_STRIP_TRAILING_WHITESPACE TIMEOUT 30)
    if(agio_smi_result EQUAL 0)
      string(REPLACE "\n" ";" agio_compute_caps "${agio_compute_caps}")
      foreach(cap IN LISTS agio_compute_caps)
        string(STRIP "${cap}" cap)
        if(cap MATCHES "^([0-9]+)\\.([0-9]+)$")
          list(APPEND agio_found_architectures "${CMAKE_MATCH_1}${CMAKE_MATCH_2}")
        endif()
      endforeach()
      list(REMOVE_DUPLICATES agio_found_architectures)
    endif()
  endif()
  if(agio_found_architectures)
    set(agio_architectures_why "the GPUs of this machine (nvidia-smi)")
  else()
    set(agio_found_architectures "${AGIO_DEFAULT_CUDA_ARCHITECTURES}")
    set(agio_architectures_why "no GPU found at configure time: AGIO_DEFAULT_CUDA_ARCHITECTURES")
  endif()
  set(CMAKE_CUDA_ARCHITECTURES "${agio_found_architectures}" CACHE STRING "CUDA architectures to build for")
  message(STATUS "agio: CUDA architectures ${CMAKE_CUDA_ARCHITECTURES} (${agio_architectures_why}; "
                 "-DCMAKE_CUDA_ARCHITECTURES=... overrides)")
endif()
