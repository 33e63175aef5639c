// agio's Python extension, _agio: the runtime (options, devices, start/stop, counters, check),
// batch reads and writes of rows at byte offsets, and arrays of rows gathered and scattered
// through HBM caches (agio.Array, agio.Cache), run as agio jobs (GPU kernels on the GPU
// backend, CPU threads on the CPU one); LMB's memory buffer of pinned host memory (its regions
// and regions shared with it); and the benchmarks' Criteo-shaped generator
// (agio.workloads). The Python package (python/agio) wraps it. Its sources are compiled by nvcc
// when CUDA is available, so that the jobs run as GPU kernels.
#include <nanobind/nanobind.h>

#include "agio/config.hpp"
#include "array.hpp"
#include "cache.hpp"
#include "core.hpp"
#include "errors.hpp"
#include "memory_buffer.hpp"
#include "workloads.hpp"

NB_MODULE(_agio, m) {
  m.doc() = "agio's C++ runtime; use the agio package, which wraps it";
  m.attr("cuda_backend") = agio::config::cuda_backend;
  agio::python::bind_errors(m);
  agio::python::bind_runtime(m);
  agio::python::bind_array(m);
  agio::python::bind_cache(m);
  agio::python::bind_memory_buffer(m);
  agio::python::bind_workloads(m);
}
