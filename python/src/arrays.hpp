#pragma once
// Checks and conversions of the arrays Python hands in (anything nanobind takes as an ndarray:
// DLPack producers such as PyTorch, CuPy and JAX, and the buffer protocol of NumPy).
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <cstdint>
#include <string>
#include <vector>

#include "integers.hpp"

namespace agio::python {

// An array argument in words for messages: "out (shape (4, 128), host memory)".
std::string what_array(const char* name, const nanobind::ndarray<>& a);

bool c_contiguous(const nanobind::ndarray<>& a);

// `a` as integers read where they lie, once it is checked to be a one-dimensional, contiguous
// array of integers; `name` is the argument's name in messages.
integers integer_array(const char* name, const nanobind::ndarray<>& a);

// The elements of a one-dimensional integer array as unsigned 64-bit integers in host memory,
// whatever integer type and memory they came in; `name` is the argument's name in messages
// (a negative element is refused naming its index).
std::vector<std::uint64_t> host_indices(const char* name, const nanobind::ndarray<>& a);

}  // namespace agio::python
