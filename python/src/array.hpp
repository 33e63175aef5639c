#pragma once
// agio.Array's C++ half (_agio.RowTable): where one table of rows lives on a device, checked
// once against the device when the Array is made. The rows are gathered and scattered through
// an _agio.Cache (cache.hpp), which takes a RowTable for each table a call covers. The Python
// class (python/agio/_array.py) checks dtypes and shapes and makes the output arrays.
#include <nanobind/nanobind.h>

#include <cstdint>

#include "agio/cache/row_access.hpp"

namespace agio::python {

class core;

class array_table {
 public:
  array_table(nanobind::object core_object, std::uint32_t dev, std::uint64_t offset, std::uint64_t row_bytes,
              std::uint64_t rows);

  const cache::row_table& table() const { return table_; }
  // The runtime whose device holds the table.
  const core* owner() const { return core_; }

 private:
  nanobind::object core_object_;  // keeps the runtime, and so core_, alive
  const core* core_;
  cache::row_table table_;
};

void bind_array(nanobind::module_& m);

}  // namespace agio::python
