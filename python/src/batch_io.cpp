// Device.read and Device.write: the batch is checked whole before anything is issued, then run as
// one agio job (GPU threads on the GPU backend, CPU threads on the CPU one).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "arrays.hpp"
#include "batch_job.hpp"
#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {

void core::transfer(std::uint32_t dev, bool write, const nb::ndarray<>& offsets, const nb::ndarray<>& data) {
  const char* name = write ? "src" : "out";
  if (!rt_.running())
    throw std::logic_error("agio: the runtime is not running; start it (with agio.Runtime(...) as rt:) first");
  const std::vector<device_description> devices = rt_.devices();
  if (dev >= devices.size()) throw std::invalid_argument("agio: no device " + std::to_string(dev));
  const device_description& d = devices[dev];
  const std::vector<std::uint64_t> at = host_indices("offsets", offsets);
  if (data.ndim() == 0) throw std::invalid_argument(std::string("agio: ") + name + " needs a first dimension of rows");
  const std::uint64_t rows = data.shape(0);
  if (rows != at.size()) {
    throw std::invalid_argument("agio: " + std::to_string(at.size()) + " offsets for " + std::to_string(rows) +
                                " rows of " + what_array(name, data));
  }
  if (!c_contiguous(data))
    throw std::invalid_argument(std::string("agio: ") + name +
                                " must be C-contiguous (call .contiguous() or numpy.ascontiguousarray)");
  const bool on_gpu = rt_.backend() == agio::backend::gpu;
  const bool cuda_memory = data.device_type() == nb::device::cuda::value;
  if (on_gpu != cuda_memory) {
    throw std::invalid_argument("agio: " + what_array(name, data) + " must be in " +
                                (on_gpu ? "CUDA memory on the GPU backend" : "host memory on the CPU backend"));
  }
  if (rows == 0) return;
  const std::uint64_t row_bytes = data.nbytes() / rows;
  const std::uint64_t capacity = d.capacity_blocks * d.lba_bytes;
  if (row_bytes % d.lba_bytes != 0) {
    throw std::invalid_argument("agio: rows of " + std::to_string(row_bytes) + " bytes are not a multiple of " + d.uri +
                                "'s " + std::to_string(d.lba_bytes) + "-byte LBA");
  }
  for (std::size_t i = 0; i < at.size(); ++i) {
    if (at[i] % d.lba_bytes != 0) {
      throw std::invalid_argument("agio: offsets[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
                                  " is not a multiple of " + d.uri + "'s " + std::to_string(d.lba_bytes) + "-byte LBA");
    }
    if (at[i] > capacity || capacity - at[i] < row_bytes) {
      throw std::invalid_argument("agio: offsets[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
                                  " plus a row of " + std::to_string(row_bytes) + " bytes runs past the end of " +
                                  d.uri + " (" + std::to_string(capacity) + " bytes)");
    }
  }
  run(dev, write, at, rows, row_bytes, static_cast<std::byte*>(data.data()));
}

void core::run(std::uint32_t dev, bool write, const std::vector<std::uint64_t>& at, std::uint64_t rows,
               std::uint64_t row_bytes, std::byte* data) {
  nb::gil_scoped_release unlocked;
  auto* offsets = static_cast<std::uint64_t*>(rt_.allocate_device(at.size() * sizeof(std::uint64_t)));
  auto* failures = static_cast<std::uint64_t*>(rt_.allocate_device(2 * sizeof(std::uint64_t)));
  const std::uint64_t none[2] = {0, rows};
  rt_.copy_to_device(offsets, at.data(), at.size() * sizeof(std::uint64_t));
  rt_.copy_to_device(failures, none, sizeof none);
  rt_.register_memory(data, rows * row_bytes);
  const bool gpu = rt_.backend() == agio::backend::gpu;
  const auto threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(rows, gpu ? 8192 : 16));
  std::uint64_t failed[2] = {0, 0};
  try {
    with_io(rt_, [&](const auto& io) {
      run_job(rt_, threads,
              batch_job<std::decay_t<decltype(io)>>{io, dev, write, offsets, rows, row_bytes, data, failures});
    });
    rt_.copy_to_host(failed, failures, sizeof failed);
  } catch (...) {
    release(data, offsets, failures);
    throw;
  }
  release(data, offsets, failures);
  if (failed[0] != 0) {
    rt_.check();  // throws io_error with the first failed request's fields
    throw io_error("agio: " + std::to_string(failed[0]) + " of " + std::to_string(rows) +
                   " rows failed, the first being row " + std::to_string(failed[1]));
  }
}
void core::release(std::byte* data, std::uint64_t* offsets, std::uint64_t* failures) {
  rt_.unregister_memory(data);
  rt_.free(offsets);
  rt_.free(failures);
}

}  // namespace agio::python
