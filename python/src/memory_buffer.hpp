#pragma once
// LMB's memory buffer (agio/runtime/memory_buffer.hpp) for the Python package: a runtime's
// buffer of pinned host memory handing out regions its stores read into and its GPU kernels
// read, and a region shared by another runtime or process, mapped for this one. The package's
// agio.MemoryBuffer and agio.SharedRegion wrap them.
#include <nanobind/nanobind.h>

namespace agio::python {

void bind_memory_buffer(nanobind::module_& m);

}  // namespace agio::python
