// Python's view of agio::runtime_options (RuntimeOptions, every field by name) and of the runtime
// (Core).
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <stdexcept>
#include <string>

#include "agio/runtime/host_memory_nodes.hpp"
#include "core.hpp"

namespace nb = nanobind;

namespace agio::python {
namespace {

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
  if (name == "on_demand") return completion_mode::on_demand;
  throw std::invalid_argument("agio: completion must be 'on_demand', 'service' or 'waiters', not '" + name + "'");
}

}  // namespace

std::string backend_name(backend b) { return b == backend::automatic ? "auto" : b == backend::gpu ? "gpu" : "cpu"; }

void bind_runtime(nb::module_& m) {
  // The folder is an argument so that tests can give a fake tree (and nvcc warns of a comparison
  // with zero in nanobind's template for a function of no arguments).
  m.def(
      "host_memory_nodes",
      [](const std::string& sysfs_node_dir) {
        nb::list nodes;
        for (const host_memory_node& n : agio::host_memory_nodes(sysfs_node_dir)) {
          nb::dict d;
          d["id"] = n.id;
          d["total_bytes"] = n.total_bytes;
          d["free_bytes"] = n.free_bytes;
          d["cpus"] = n.cpus;
          d["memory_only"] = n.memory_only();
          nodes.append(d);
        }
        return nodes;
      },
      nb::arg("sysfs_node_dir") = "/sys/devices/system/node");
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
            switch (o.completion) {
              case completion_mode::service: return std::string("service");
              case completion_mode::waiters: return std::string("waiters");
              default: return std::string("on_demand");
            }
          },
          [](runtime_options& o, const std::string& v) { o.completion = completion_named(v); })
      .def_rw("max_transfer_bytes", &runtime_options::max_transfer_bytes)
      .def_rw("controller_threads", &runtime_options::controller_threads)
      .def_rw("service_warps", &runtime_options::service_warps)
      .def_rw("service_staging_bytes", &runtime_options::service_staging_bytes)
      .def_rw("transaction_records", &runtime_options::transaction_records)
      .def_rw("submit_timeout_ms", &runtime_options::submit_timeout_ms)
      .def_rw("posted_slots", &runtime_options::posted_slots)
      .def_rw("wait_timeout_ms", &runtime_options::wait_timeout_ms)
      .def_rw("stop_timeout_ms", &runtime_options::stop_timeout_ms)
      .def_rw("controller_spin_us", &runtime_options::controller_spin_us)
      .def_rw("controller_copy_depth", &runtime_options::controller_copy_depth)
      .def_rw("lanes_per_queue", &runtime_options::lanes_per_queue)
      .def_rw("wait_together_ns", &runtime_options::wait_together_ns)
      .def_rw("gpu_thread_stack_bytes", &runtime_options::gpu_thread_stack_bytes)
      .def_rw("job_start_timeout_ms", &runtime_options::job_start_timeout_ms)
      .def_rw("host_tier_bytes", &runtime_options::host_tier_bytes)
      .def_rw("host_tier_numa_node", &runtime_options::host_tier_numa_node)
      .def_rw("trip_stamps", &runtime_options::trip_stamps);

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
      .def("host_tier_memory", &core::host_tier_memory)
      .def("transfer", &core::transfer, nb::arg("dev"), nb::arg("write"), nb::arg("offsets"), nb::arg("data"),
           nb::arg("in_flight"), nb::arg("stream"))
      .def("transfer_range", &core::transfer_range, nb::arg("dev"), nb::arg("write"), nb::arg("data"), nb::arg("size"),
           nb::arg("file_offset"), nb::arg("data_offset"), nb::arg("stream"))
      .def("registered_regions", &core::registered_regions);

  nb::class_<batch>(m, "Batch")
      .def("done", &batch::done)
      .def("wait", &batch::wait, nb::call_guard<nb::gil_scoped_release>());
}

}  // namespace agio::python
