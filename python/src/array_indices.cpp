#include "array_indices.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "arrays.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "agio/runtime/cuda_error.hpp"
#endif

namespace nb = nanobind;

namespace agio::python {
namespace {

// Checks indices of type T against `rows` and, when `out` is set, widens them into it; notes
// every bad one's position (negative ones included) in `failure`.
template <class T>
struct index_check_job {
  const T* in;
  std::uint64_t* out;
  std::uint64_t count;
  std::uint64_t rows;
  cache::row_failure* failure;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t i = t; i < count; i += threads) {
      const T v = in[i];
      bool bad = static_cast<std::uint64_t>(v) >= rows;
      if constexpr (std::is_signed_v<T>) bad = bad || v < 0;
      if (bad) failure->note(i, {outcome::invalid_argument, 0});
      if (out != nullptr) out[i] = static_cast<std::uint64_t>(v);
    }
  }
};

template <class T>
std::int64_t value_at(const void* data, std::uint64_t i, bool cuda) {
  T v{};
  const auto* p = static_cast<const std::byte*>(data) + i * sizeof(T);
  if (cuda) {
#if defined(__CUDACC__)
    throw_on_cuda_error(cudaMemcpy(&v, p, sizeof v, cudaMemcpyDeviceToHost), "copying a bad index");
#endif
  } else {
    std::memcpy(&v, p, sizeof v);
  }
  return static_cast<std::int64_t>(v);
}

[[noreturn]] void refuse(const char* name, std::uint64_t position, std::int64_t value, bool is_signed,
                         std::uint64_t rows) {
  const std::string at = std::string("agio: ") + name + "[" + std::to_string(position) + "] = ";
  if (is_signed && value < 0) throw std::invalid_argument(at + std::to_string(value) + " is negative");
  const std::string v = is_signed ? std::to_string(value) : std::to_string(static_cast<std::uint64_t>(value));
  throw std::out_of_range(at + v + " is out of range for an array of " + std::to_string(rows) + " rows");
}

template <class T>
const std::uint64_t* checked_on_gpu(runtime& rt, const char* name, const nb::ndarray<>& a, std::uint64_t rows,
                                    device_scratch& scratch, cache::row_failure* failure) {
  const std::uint64_t count = a.shape(0);
  const T* in = static_cast<const T*>(a.data());
  // No rows, no job (a launch of no threads is an error); the pointer is never read.
  if (count == 0) return static_cast<const std::uint64_t*>(scratch.get(rt, sizeof(std::uint64_t)));
  // 64-bit indices are used where they are; narrower ones are widened into the scratch.
  std::uint64_t* out =
      sizeof(T) == 8 ? nullptr : static_cast<std::uint64_t*>(scratch.get(rt, count * sizeof(std::uint64_t)));
  const cache::row_failure none = cache::row_failure::none(count);
  rt.copy_to_device(failure, &none, sizeof none);
  {
    nb::gil_scoped_release unlocked;
    run_job(rt, static_cast<std::uint32_t>(std::min<std::uint64_t>(count, 65536)),
            index_check_job<T>{in, out, count, rows, failure});
  }
  cache::row_failure found;
  rt.copy_to_host(&found, failure, sizeof found);
  if (found.failed != 0) refuse(name, found.lowest, value_at<T>(in, found.lowest, true), std::is_signed_v<T>, rows);
  return out != nullptr ? out : reinterpret_cast<const std::uint64_t*>(in);
}

}  // namespace

void* device_scratch::get(runtime& rt, std::size_t bytes) {
  if (bytes <= bytes_ && p_ != nullptr) return p_;
  release(rt);
  p_ = rt.allocate_device(bytes == 0 ? 1 : bytes);
  bytes_ = bytes;
  return p_;
}
void device_scratch::release(runtime& rt) {
  if (p_ != nullptr) rt.free(p_);
  p_ = nullptr;
  bytes_ = 0;
}

const std::uint64_t* checked_indices(runtime& rt, const char* name, const nb::ndarray<>& a, std::uint64_t rows,
                                     device_scratch& scratch, cache::row_failure* failure) {
  const bool gpu = rt.backend() == backend::gpu;
  if (gpu && a.device_type() == nb::device::cuda::value && a.ndim() == 1 && c_contiguous(a)) {
    const nb::dlpack::dtype t = a.dtype();
    const bool is_signed = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
    const bool is_unsigned = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt);
    if (is_signed || is_unsigned) {
      switch (t.bits) {
        case 8:
          return is_signed ? checked_on_gpu<std::int8_t>(rt, name, a, rows, scratch, failure)
                           : checked_on_gpu<std::uint8_t>(rt, name, a, rows, scratch, failure);
        case 16:
          return is_signed ? checked_on_gpu<std::int16_t>(rt, name, a, rows, scratch, failure)
                           : checked_on_gpu<std::uint16_t>(rt, name, a, rows, scratch, failure);
        case 32:
          return is_signed ? checked_on_gpu<std::int32_t>(rt, name, a, rows, scratch, failure)
                           : checked_on_gpu<std::uint32_t>(rt, name, a, rows, scratch, failure);
        case 64:
          return is_signed ? checked_on_gpu<std::int64_t>(rt, name, a, rows, scratch, failure)
                           : checked_on_gpu<std::uint64_t>(rt, name, a, rows, scratch, failure);
        default: break;
      }
    }
  }
  // Host memory (and anything host_indices refuses with its own message).
  const std::vector<std::uint64_t> host = host_indices(name, a);
  for (std::size_t i = 0; i < host.size(); ++i) {
    if (host[i] >= rows) refuse(name, i, static_cast<std::int64_t>(host[i]), false, rows);
  }
  auto* out = static_cast<std::uint64_t*>(scratch.get(rt, host.size() * sizeof(std::uint64_t)));
  rt.copy_to_device(out, host.data(), host.size() * sizeof(std::uint64_t));
  return out;
}

}  // namespace agio::python
