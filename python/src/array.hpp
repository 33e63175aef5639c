#pragma once
// agio.Array's C++ half (_agio.ArrayCache): one table of rows on a device, its cache, and the
// gathers, scatters and prefetches through it. The Python class (python/agio/_array.py) checks
// dtypes and shapes and makes the output arrays; this one checks bytes, memory and indices.
#include <nanobind/nanobind.h>

namespace agio::python {

void bind_array(nanobind::module_& m);

}  // namespace agio::python
