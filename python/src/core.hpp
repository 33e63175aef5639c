#pragma once
// The extension's runtime object (Python's agio.Runtime holds one): an agio::runtime with the
// calls the package makes on it. Batch reads and writes (transfer) are in batch_io.cpp, with
// the buffers they registered, the device memory they reuse and the batches still in flight.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/runtime/memory_buffer.hpp"
#include "agio/runtime/runtime.hpp"
#include "batch.hpp"
#include "registrations.hpp"

namespace agio::python {

std::string backend_name(backend b);

class core {
 public:
  explicit core(const runtime_options& options) : options_(options), rt_(options) {}
  ~core();

  std::uint32_t attach(const std::string& uri, std::uint32_t queue_pairs, std::uint32_t queue_depth) {
    if (rt_.running()) throw std::logic_error("agio: attach devices before the runtime starts");
    return rt_.attach(device_options{uri, queue_pairs, queue_depth});
  }
  void start() {
    nanobind::gil_scoped_release unlocked;
    rt_.start();
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

  // The runtime's host tier memory (runtime_options::host_tier_bytes) as a dict, or None.
  nanobind::object host_tier_memory() const {
    const memory_buffer* memory = rt_.host_tier_memory();
    if (memory == nullptr) return nanobind::none();
    nanobind::dict d;
    d["capacity_bytes"] = memory->capacity();
    d["used_bytes"] = memory->used();
    d["numa_node"] = memory->numa_node();
    return d;
  }

  // Starts reading or writing row i of `data` (its first dimension) at byte offset offsets[i],
  // with at most `in_flight` requests at once (0: as many as the backend runs threads), on
  // `stream` (a cudaStream_t; GPU backend). Every argument is checked first; offsets in GPU
  // memory are checked there, and a refused one then comes out of batch::wait().
  std::shared_ptr<batch> transfer(std::uint32_t dev, bool write, const nanobind::ndarray<nanobind::ro>& offsets,
                                  const nanobind::ndarray<nanobind::ro>& data, std::uint64_t in_flight,
                                  std::uintptr_t stream);
  // Starts reading or writing `size` bytes at byte `file_offset` of the device from or into
  // `data` at byte `data_offset`, split into transfers of at most max_transfer_bytes.
  std::shared_ptr<batch> transfer_range(std::uint32_t dev, bool write, const nanobind::ndarray<nanobind::ro>& data,
                                        std::uint64_t size, std::uint64_t file_offset, std::uint64_t data_offset,
                                        std::uintptr_t stream);
  // Waits for every batch still in flight, then stops the runtime.
  void stop();

  runtime& rt() { return rt_; }
  std::size_t registered_regions() const { return registrations_.size(); }

 private:
  friend class batch;
  // What a batch needs that the caller's arguments do not say.
  struct launch_plan {
    std::uint32_t dev;
    bool write;
    row_offsets offsets;
    row_bounds bounds;
    bool offsets_in_gpu_memory;
    std::byte* data;
    std::uint64_t threads;
    std::uintptr_t stream;
  };
  std::shared_ptr<batch> launch(const launch_plan& plan, const std::vector<std::uint64_t>& host_offsets);
  void launch_on_gpu(batch& b, const launch_plan& plan, const std::vector<std::uint64_t>& host_offsets);
  void launch_on_cpu(batch& b, const launch_plan& plan, const std::vector<std::uint64_t>& host_offsets);
  device_description checked_device(std::uint32_t dev) const;
  std::shared_ptr<scratch> take_scratch(std::size_t offsets);
  void give_back(std::shared_ptr<scratch> s);

  runtime_options options_;
  runtime rt_;
  registrations registrations_{rt_};
  std::mutex mutex_;
  std::vector<std::shared_ptr<scratch>> spare_scratch_;
  std::vector<std::weak_ptr<batch>> pending_;
};

// Binds RuntimeOptions and Core.
void bind_runtime(nanobind::module_& m);

}  // namespace agio::python
