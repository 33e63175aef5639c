// agio's Python extension, _agio: the runtime (options, devices, start/stop, counters, check)
// and batch reads and writes of rows at byte offsets, run as agio jobs (GPU kernels on the GPU
// backend, CPU threads on the CPU one). The Python package (python/agio) wraps it; agio.IOError
// is defined there and handed in by _set_io_error_type, so that a failed request raises it with
// the C++ error's fields as attributes. Compiled by nvcc when CUDA is available.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "agio/config.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "batch_job.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "agio/runtime/cuda_error.hpp"
#endif

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

// An array argument in words for messages: "out (shape (4, 128), host memory)".
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

// The offsets as unsigned 64-bit integers in host memory, whatever integer type and memory
// they came in.
std::vector<std::uint64_t> host_offsets(const nb::ndarray<>& offsets) {
  if (offsets.ndim() != 1)
    throw std::invalid_argument("agio: offsets must be one-dimensional, got " + what_array("offsets", offsets));
  const nb::dlpack::dtype t = offsets.dtype();
  if (t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) &&
      t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::UInt)) {
    throw nb::type_error("agio: offsets must be an array of integers (byte offsets)");
  }
  if (!c_contiguous(offsets)) throw std::invalid_argument("agio: offsets must be contiguous");
  const std::size_t n = offsets.shape(0);
  const std::size_t width = t.bits / 8;
  std::vector<std::byte> raw(n * width);
  if (offsets.device_type() == nb::device::cuda::value) {
#if defined(__CUDACC__)
    throw_on_cuda_error(cudaMemcpy(raw.data(), offsets.data(), raw.size(), cudaMemcpyDeviceToHost), "copying offsets");
#else
    throw std::invalid_argument("agio: offsets in CUDA memory, but this agio was built without CUDA");
#endif
  } else if (n != 0) {
    std::memcpy(raw.data(), offsets.data(), raw.size());
  }
  const bool is_signed = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int);
  std::vector<std::uint64_t> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::int64_t v = 0;
    const std::byte* p = raw.data() + i * width;
    switch (width) {
      case 1:
        v = is_signed ? std::int64_t{*reinterpret_cast<const std::int8_t*>(p)}
                      : std::int64_t{*reinterpret_cast<const std::uint8_t*>(p)};
        break;
      case 2:
        v = is_signed ? std::int64_t{*reinterpret_cast<const std::int16_t*>(p)}
                      : std::int64_t{*reinterpret_cast<const std::uint16_t*>(p)};
        break;
      case 4:
        v = is_signed ? std::int64_t{*reinterpret_cast<const std::int32_t*>(p)}
                      : std::int64_t{*reinterpret_cast<const std::uint32_t*>(p)};
        break;
      default: v = *reinterpret_cast<const std::int64_t*>(p); break;
    }
    if (is_signed && v < 0)
      throw std::invalid_argument("agio: offsets[" + std::to_string(i) + "] is negative (" + std::to_string(v) + ")");
    out[i] = static_cast<std::uint64_t>(v);
  }
  return out;
}

std::string backend_name(backend b) { return b == backend::automatic ? "auto" : b == backend::gpu ? "gpu" : "cpu"; }
backend backend_named(const std::string& name) {
  if (name == "auto") return backend::automatic;
  if (name == "gpu") return backend::gpu;
  if (name == "cpu") return backend::cpu;
  throw std::invalid_argument("agio: backend must be 'auto', 'gpu' or 'cpu', not '" + name + "'");
}
data_mover mover_named(const std::string& name) {
  if (name == "gpu_warps") return data_mover::gpu_warps;
  if (name == "copy_engine") return data_mover::copy_engine;
  throw std::invalid_argument("agio: mover must be 'gpu_warps' or 'copy_engine', not '" + name + "'");
}
completion_mode completion_named(const std::string& name) {
  if (name == "service") return completion_mode::service;
  if (name == "waiters") return completion_mode::waiters;
  throw std::invalid_argument("agio: completion must be 'service' or 'waiters', not '" + name + "'");
}

class core {
 public:
  explicit core(const runtime_options& options) : rt_(options) {}

  std::uint32_t attach(const std::string& uri, std::uint32_t queue_pairs, std::uint32_t queue_depth) {
    if (rt_.running()) throw std::logic_error("agio: attach devices before the runtime starts");
    return rt_.attach(device_options{uri, queue_pairs, queue_depth});
  }
  void start() {
    nb::gil_scoped_release unlocked;
    rt_.start();
  }
  void stop() {
    nb::gil_scoped_release unlocked;
    rt_.stop();
  }
  bool running() const { return rt_.running(); }
  std::string backend() const { return backend_name(rt_.backend()); }
  std::string describe() const { return rt_.describe(); }
  void check() const { rt_.check(); }

  nb::list devices() const {
    nb::list out;
    for (const device_description& d : rt_.devices()) {
      nb::dict one;
      one["uri"] = d.uri;
      one["capacity_bytes"] = d.capacity_blocks * d.lba_bytes;
      one["lba_bytes"] = d.lba_bytes;
      one["queue_pairs"] = d.queue_pairs;
      one["queue_depth"] = d.queue_depth;
      out.append(one);
    }
    return out;
  }

  nb::list counters() const {
    nb::list out;
    for (const device_counters& c : rt_.counters()) {
      nb::dict one;
      one["uri"] = c.uri;
      one["submitted"] = c.submitted;
      one["completed"] = c.completed;
      one["errors"] = c.errors;
      one["rejected"] = c.rejected;
      one["queue_full_retries"] = c.queue_full_retries;
      one["bytes"] = c.bytes;
      one["latency_p50_ns"] = c.latency_quantile_ns(0.5);
      one["latency_p99_ns"] = c.latency_quantile_ns(0.99);
      out.append(one);
    }
    return out;
  }

  // Rows of `data` (its first dimension) read from or written to the byte offsets `offsets`.
  void transfer(std::uint32_t dev, bool write, const nb::ndarray<>& offsets, const nb::ndarray<>& data) {
    const char* name = write ? "src" : "out";
    if (!rt_.running())
      throw std::logic_error("agio: the runtime is not running; start it (with agio.Runtime(...) as rt:) first");
    const std::vector<device_description> devices = rt_.devices();
    if (dev >= devices.size()) throw std::invalid_argument("agio: no device " + std::to_string(dev));
    const device_description& d = devices[dev];
    const std::vector<std::uint64_t> at = host_offsets(offsets);
    if (data.ndim() == 0)
      throw std::invalid_argument(std::string("agio: ") + name + " needs a first dimension of rows");
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
      throw std::invalid_argument("agio: rows of " + std::to_string(row_bytes) + " bytes are not a multiple of " +
                                  d.uri + "'s " + std::to_string(d.lba_bytes) + "-byte LBA");
    }
    for (std::size_t i = 0; i < at.size(); ++i) {
      if (at[i] % d.lba_bytes != 0) {
        throw std::invalid_argument("agio: offsets[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
                                    " is not a multiple of " + d.uri + "'s " + std::to_string(d.lba_bytes) +
                                    "-byte LBA");
      }
      if (at[i] > capacity || capacity - at[i] < row_bytes) {
        throw std::invalid_argument("agio: offsets[" + std::to_string(i) + "] = " + std::to_string(at[i]) +
                                    " plus a row of " + std::to_string(row_bytes) + " bytes runs past the end of " +
                                    d.uri + " (" + std::to_string(capacity) + " bytes)");
      }
    }
    run(dev, write, at, rows, row_bytes, static_cast<std::byte*>(data.data()));
  }

 private:
  void run(std::uint32_t dev, bool write, const std::vector<std::uint64_t>& at, std::uint64_t rows,
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
  void release(std::byte* data, std::uint64_t* offsets, std::uint64_t* failures) {
    rt_.unregister_memory(data);
    rt_.free(offsets);
    rt_.free(failures);
  }

  runtime rt_;
};

}  // namespace
}  // namespace agio::python

NB_MODULE(_agio, m) {
  using namespace agio;
  using namespace agio::python;
  m.doc() = "agio's C++ runtime; use the agio package, which wraps it";
  m.attr("cuda_backend") = config::cuda_backend;
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

  nb::class_<runtime_options>(m, "RuntimeOptions")
      .def(nb::init<>())
      .def_prop_rw(
          "backend", [](const runtime_options& o) { return backend_name(o.backend); },
          [](runtime_options& o, const std::string& v) { o.backend = backend_named(v); })
      .def_prop_rw(
          "mover",
          [](const runtime_options& o) {
            return std::string(o.mover == data_mover::gpu_warps ? "gpu_warps" : "copy_engine");
          },
          [](runtime_options& o, const std::string& v) { o.mover = mover_named(v); })
      .def_prop_rw(
          "completion",
          [](const runtime_options& o) {
            return std::string(o.completion == completion_mode::service ? "service" : "waiters");
          },
          [](runtime_options& o, const std::string& v) { o.completion = completion_named(v); })
      .def_rw("max_transfer_bytes", &runtime_options::max_transfer_bytes)
      .def_rw("controller_threads", &runtime_options::controller_threads)
      .def_rw("service_warps", &runtime_options::service_warps)
      .def_rw("transaction_records", &runtime_options::transaction_records)
      .def_rw("submit_timeout_ms", &runtime_options::submit_timeout_ms)
      .def_rw("wait_timeout_ms", &runtime_options::wait_timeout_ms)
      .def_rw("stop_timeout_ms", &runtime_options::stop_timeout_ms)
      .def_rw("controller_spin_us", &runtime_options::controller_spin_us)
      .def_rw("gpu_thread_stack_bytes", &runtime_options::gpu_thread_stack_bytes);

  nb::class_<core>(m, "Core")
      .def(nb::init<const runtime_options&>())
      .def("attach", &core::attach)
      .def("start", &core::start)
      .def("stop", &core::stop)
      .def("running", &core::running)
      .def("backend", &core::backend)
      .def("describe", &core::describe)
      .def("check", &core::check)
      .def("devices", &core::devices)
      .def("counters", &core::counters)
      .def("transfer", &core::transfer);
}
