#pragma once
// The row indices an agio.Array call takes: any one-dimensional integer array, in host or CUDA
// memory, checked against the array's rows and handed to the row jobs as 64-bit integers in
// memory their threads reach. Indices in CUDA memory are checked on the GPU (a job of their
// own), so a gather's indices never travel to the host; only a bad one's value does, for the
// message.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstddef>
#include <cstdint>

#include "agio/cache/row_access.hpp"
#include "agio/runtime/runtime.hpp"

namespace agio::python {

// Memory from rt.allocate_device that grows to the largest size asked of it.
class device_scratch {
 public:
  void* get(runtime& rt, std::size_t bytes);
  void release(runtime& rt);

 private:
  void* p_ = nullptr;
  std::size_t bytes_ = 0;
};

// `name`'s elements as 64-bit row numbers below `rows`, in host memory on the CPU backend and
// device memory on the GPU one: the array's own memory when it already holds such integers
// there, else a copy in `scratch`. `failure` is device memory for the GPU's check. Throws
// std::out_of_range (IndexError) naming the first index past the rows, std::invalid_argument
// (ValueError) for a negative one or an array of another shape, nb::type_error for one of
// non-integers.
const std::uint64_t* checked_indices(runtime& rt, const char* name, const nanobind::ndarray<>& a, std::uint64_t rows,
                                     device_scratch& scratch, cache::row_failure* failure);

}  // namespace agio::python
