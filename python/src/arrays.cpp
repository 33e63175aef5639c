#include "arrays.hpp"

#include <cstddef>
#include <cstring>
#include <stdexcept>

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "agio/runtime/cuda_error.hpp"
#endif

namespace nb = nanobind;

namespace agio::python {

std::string what_array(const char* name, const nb::ndarray<>& a) {
  std::string shape;
  for (std::size_t d = 0; d < a.ndim(); ++d) shape += (d ? ", " : "") + std::to_string(a.shape(d));
  return std::string(name) + " (shape (" + shape + "), " +
         (a.device_type() == nb::device::cuda::value ? "cuda" : "host") + " memory)";
}

bool c_contiguous(const nb::ndarray<>& a) {
  if (a.size() == 0) return true;
  std::int64_t expected = 1;
  for (std::size_t d = a.ndim(); d-- > 0;) {
    if (a.shape(d) != 1 && a.stride(d) != expected) return false;
    expected *= static_cast<std::int64_t>(a.shape(d));
  }
  return true;
}

integers integer_array(const char* name, const nb::ndarray<>& a) {
  if (a.ndim() != 1)
    throw std::invalid_argument(std::string("agio: ") + name + " must be one-dimensional, got " + what_array(name, a));
  const nb::dlpack::dtype t = a.dtype();
  const bool is_signed = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
  if (!is_signed && t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)) {
    throw nb::type_error((std::string("agio: ") + name + " must be an array of integers").c_str());
  }
  if (!c_contiguous(a)) throw std::invalid_argument(std::string("agio: ") + name + " must be contiguous");
  return {a.data(), static_cast<std::uint32_t>(t.bits / 8), is_signed};
}

std::vector<std::uint64_t> host_indices(const char* name, const nb::ndarray<>& a) {
  const integers given = integer_array(name, a);
  const std::size_t n = a.shape(0);
  std::vector<std::byte> raw(n * given.width);
  if (a.device_type() == nb::device::cuda::value) {
#if defined(__CUDACC__)
    throw_on_cuda_error(cudaMemcpy(raw.data(), a.data(), raw.size(), cudaMemcpyDeviceToHost),
                        (std::string("copying ") + name).c_str());
#else
    throw std::invalid_argument(std::string("agio: ") + name +
                                " is in CUDA memory, but this agio was built without CUDA");
#endif
  } else if (n != 0) {
    std::memcpy(raw.data(), a.data(), raw.size());
  }
  const integers host{raw.data(), given.width, given.is_signed};
  std::vector<std::uint64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t v = host[i];
    if (given.is_signed && v < 0)
      throw std::invalid_argument(std::string("agio: ") + name + "[" + std::to_string(i) + "] is negative (" +
                                  std::to_string(v) + ")");
    out[i] = static_cast<std::uint64_t>(v);
  }
  return out;
}

}  // namespace agio::python
