#pragma once
// How C++ failures reach Python: agio::io_error becomes agio.IOError (an OSError, defined by the
// package and handed in by _set_io_error_type) with the C++ error's fields as attributes, and a
// std::system_error becomes OSError with its errno.
#include <nanobind/nanobind.h>

namespace agio::python {

void bind_errors(nanobind::module_& m);

}  // namespace agio::python
