#pragma once
// The extension's runtime object (Python's agio.Runtime holds one): an agio::runtime with the
// calls the package makes on it. Batch reads and writes (transfer) are in batch_io.cpp.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/runtime/runtime.hpp"

namespace agio::python {

std::string backend_name(backend b);

class core {
 public:
  explicit core(const runtime_options& options) : rt_(options) {}

  std::uint32_t attach(const std::string& uri, std::uint32_t queue_pairs, std::uint32_t queue_depth) {
    if (rt_.running()) throw std::logic_error("agio: attach devices before the runtime starts");
    return rt_.attach(device_options{uri, queue_pairs, queue_depth});
  }
  void start() {
    nanobind::gil_scoped_release unlocked;
    rt_.start();
  }
  void stop() {
    nanobind::gil_scoped_release unlocked;
    rt_.stop();
  }
  bool running() const { return rt_.running(); }
  std::string backend() const { return backend_name(rt_.backend()); }
  std::string describe() const { return rt_.describe(); }
  void check() const { rt_.check(); }

  nanobind::list devices() const {
    nanobind::list out;
    for (const device_description& d : rt_.devices()) {
      nanobind::dict one;
      one["uri"] = d.uri;
      one["capacity_bytes"] = d.capacity_blocks * d.lba_bytes;
      one["lba_bytes"] = d.lba_bytes;
      one["queue_pairs"] = d.queue_pairs;
      one["queue_depth"] = d.queue_depth;
      out.append(one);
    }
    return out;
  }

  nanobind::list counters() const {
    nanobind::list out;
    for (const device_counters& c : rt_.counters()) {
      nanobind::dict one;
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
  void transfer(std::uint32_t dev, bool write, const nanobind::ndarray<>& offsets, const nanobind::ndarray<>& data);

  runtime& rt() { return rt_; }

 private:
  void run(std::uint32_t dev, bool write, const std::vector<std::uint64_t>& at, std::uint64_t rows,
           std::uint64_t row_bytes, std::byte* data);
  void release(std::byte* data, std::uint64_t* offsets, std::uint64_t* failures);

  runtime rt_;
};

// Binds RuntimeOptions and Core.
void bind_runtime(nanobind::module_& m);

}  // namespace agio::python
