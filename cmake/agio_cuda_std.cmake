# Teaches CMake nvcc's C++20 flag where it does not know it (CMake 3.25, Debian 12's, knows
# none past C++17 for nvcc although CUDA 12 and later accept -std=c++20), so that the
# cuda_std_20 compile feature works: agio::agio requires it of every CUDA source that uses it.
# Included by agio's own build and, for projects that compile CUDA, by agioConfig.cmake.
get_property(agio_enabled_languages GLOBAL PROPERTY ENABLED_LANGUAGES)
if("CUDA" IN_LIST agio_enabled_languages AND CMAKE_CUDA_COMPILER_ID STREQUAL "NVIDIA"
   AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0 AND NOT "cuda_std_20" IN_LIST CMAKE_CUDA_COMPILE_FEATURES)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
endif()
