#pragma once
// agio.Cache's C++ half (_agio.Cache): one software cache in the runtime's memory, and the
// gathers, scatters and prefetches through it of rows of any number of tables (RowTable,
// array.hpp), all a call's tables in one agio job.
#include <nanobind/nanobind.h>

namespace agio::python {

void bind_cache(nanobind::module_& m);

}  // namespace agio::python
