#pragma once
// agio.workloads' C++ half: the Criteo-shaped generator of the DLRM benchmark
// (tools/workloads/criteo.hpp), bound as it is, so that Python and C++ benchmarks run on the
// same samples.
#include <nanobind/nanobind.h>

namespace agio::python {

void bind_workloads(nanobind::module_& m);

}  // namespace agio::python
