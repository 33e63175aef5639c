#include "memory_buffer.hpp"

#include <nanobind/stl/tuple.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>

#include "agio/runtime/memory_buffer.hpp"
#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

// A region as Python sees it: its id, its address (the host's, which the runtime's GPU
// kernels share) and its size.
using region_tuple = std::tuple<std::uint64_t, std::uintptr_t, std::size_t>;

region_tuple as_tuple(const host_region& r) { return {r.id, reinterpret_cast<std::uintptr_t>(r.data), r.bytes}; }

// What `held` holds, or a refusal naming `what` once it was closed.
template <class T>
T& open(const std::unique_ptr<T>& held, const char* what) {
  if (!held) throw std::logic_error(std::string("agio: this ") + what + " is closed");
  return *held;
}

// The buffer until close(): the package closes it before its runtime stops, and a closed one
// refuses every call.
class buffer_binding {
 public:
  buffer_binding(core& c, std::size_t capacity_bytes, int numa_node)
      : buffer_(std::make_unique<memory_buffer>(c.rt(), capacity_bytes, numa_node)) {}

  region_tuple allocate(std::size_t bytes) { return as_tuple(live().allocate(bytes)); }
  void free(std::uint64_t id) { live().free(id); }
  int descriptor(std::uint64_t id) { return live().descriptor(id); }
  std::size_t capacity() { return live().capacity(); }
  std::size_t used() { return live().used(); }
  int numa_node() { return live().numa_node(); }
  void close() { buffer_.reset(); }

 private:
  memory_buffer& live() { return open(buffer_, "memory buffer"); }
  std::unique_ptr<memory_buffer> buffer_;
};

class shared_binding {
 public:
  shared_binding(core& c, int descriptor) : region_(std::make_unique<shared_region>(c.rt(), descriptor)) {}

  std::uintptr_t address() { return reinterpret_cast<std::uintptr_t>(live().data()); }
  std::size_t bytes() { return live().bytes(); }
  void close() { region_.reset(); }

 private:
  shared_region& live() { return open(region_, "shared region"); }
  std::unique_ptr<shared_region> region_;
};

}  // namespace

void bind_memory_buffer(nb::module_& m) {
  // keep_alive: the runtime (Core) outlives what maps memory for it.
  nb::class_<buffer_binding>(m, "MemoryBuffer")
      .def(nb::init<core&, std::size_t, int>(), nb::arg("core"), nb::arg("capacity_bytes"), nb::arg("numa_node"),
           nb::keep_alive<1, 2>())
      .def("allocate", &buffer_binding::allocate)
      .def("free", &buffer_binding::free)
      .def("descriptor", &buffer_binding::descriptor)
      .def("capacity", &buffer_binding::capacity)
      .def("used", &buffer_binding::used)
      .def("numa_node", &buffer_binding::numa_node)
      .def("close", &buffer_binding::close);
  nb::class_<shared_binding>(m, "SharedRegion")
      .def(nb::init<core&, int>(), nb::arg("core"), nb::arg("descriptor"), nb::keep_alive<1, 2>())
      .def("address", &shared_binding::address)
      .def("bytes", &shared_binding::bytes)
      .def("close", &shared_binding::close);
}

}  // namespace agio::python
