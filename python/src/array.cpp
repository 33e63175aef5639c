#include "array.hpp"

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {

array_table::array_table(nb::object core_object, std::uint32_t dev, std::uint64_t offset, std::uint64_t row_bytes,
                         std::uint64_t rows)
    : core_object_(std::move(core_object)), core_(nb::cast<core*>(core_object_)) {
  const runtime& rt = nb::cast<core*>(core_object_)->rt();
  if (!rt.running()) throw std::logic_error("agio: an Array needs a started runtime");
  const std::vector<device_description> devices = rt.devices();
  if (dev >= devices.size()) throw std::invalid_argument("agio: no device " + std::to_string(dev));
  if (row_bytes == 0) throw std::invalid_argument("agio: an Array's rows need at least one byte");
  const device_description& d = devices[dev];
  const std::uint64_t capacity = d.capacity_blocks * d.lba_bytes;
  if (offset > capacity || rows > (capacity - offset) / row_bytes) {
    throw std::invalid_argument("agio: " + std::to_string(rows) + " rows of " + std::to_string(row_bytes) +
                                " bytes from byte " + std::to_string(offset) + " run past the end of " + d.uri + " (" +
                                std::to_string(capacity) + " bytes)");
  }
  table_ = {dev, offset, row_bytes, rows};
}

void bind_array(nb::module_& m) {
  nb::class_<array_table>(m, "RowTable")
      .def(nb::init<nb::object, std::uint32_t, std::uint64_t, std::uint64_t, std::uint64_t>());
}

}  // namespace agio::python
