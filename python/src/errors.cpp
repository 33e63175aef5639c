#include "errors.hpp"

#include <nanobind/stl/string.h>

#include <cerrno>
#include <exception>
#include <system_error>
#include <utility>

#include "agio/runtime/runtime.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

nb::object& io_error_type() {
  static nb::object type;  // agio.IOError, set by the package on import
  return type;
}

const char* opcode_name(spec::opcode op) {
  switch (op) {
    case spec::opcode::read: return "read";
    case spec::opcode::write: return "write";
    case spec::opcode::flush: return "flush";
    default: return "other";
  }
}

// Raises agio.IOError (an OSError) carrying the fields of `e`.
void raise_io_error(const io_error& e) {
  nb::object type = io_error_type();
  if (!type.is_valid()) {
    PyErr_SetString(PyExc_OSError, e.what());
    return;
  }
  const int number = e.error_number() != 0 ? e.error_number() : EIO;
  nb::object error = type(number, e.what());
  error.attr("has_request") = e.has_request();
  error.attr("device") = e.device();
  error.attr("uri") = e.uri();
  error.attr("opcode") = opcode_name(e.opcode());
  error.attr("lba") = e.lba();
  error.attr("blocks") = e.blocks();
  error.attr("result") = to_string(e.result());
  error.attr("nvme_status") = e.nvme_status();
  error.attr("error_number") = e.error_number();
  error.attr("refusal") = e.has_request() ? describe(e.refusal()) : "";
  error.attr("controller_failure") = e.controller_failure();
  error.attr("store_error") = e.request().store_error;
  PyErr_SetObject(type.ptr(), error.ptr());
}

}  // namespace

void bind_errors(nb::module_& m) {
  m.def("_set_io_error_type", [](nb::object type) { io_error_type() = std::move(type); });
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const io_error& e) {
      raise_io_error(e);
    } catch (const std::system_error& e) {
      // A store that cannot open or a failed system call: OSError with its errno.
      nb::object error = nb::handle(PyExc_OSError)(e.code().value(), e.what());
      PyErr_SetObject(PyExc_OSError, error.ptr());
    }
  });
}

}  // namespace agio::python
