#pragma once
// The --backend option every command takes, and --completion for those that choose it.
#include <stdexcept>
#include <string>

#include "agio/runtime/runtime.hpp"
#include "harness/options.hpp"

namespace agio::bench {

// --backend cpu|gpu|auto: gpu insists on the GPU (the runtime fails and says why without one),
// auto takes the GPU when there is one and CPU threads otherwise.
inline backend backend_option(const options& opt, const std::string& fallback = "auto") {
  const std::string name = opt.get("backend", fallback);
  if (name == "cpu") return backend::cpu;
  if (name == "gpu") return backend::gpu;
  if (name == "auto") return backend::automatic;
  throw std::invalid_argument("--backend is cpu, gpu or auto, not '" + name + "'");
}

// --completion service|waiters|on_demand (runtime_options::completion).
inline completion_mode completion_option(const options& opt) {
  const std::string name = opt.get("completion", "service");
  if (name == "service") return completion_mode::service;
  if (name == "waiters") return completion_mode::waiters;
  if (name == "on_demand") return completion_mode::on_demand;
  throw std::invalid_argument("--completion is service, waiters or on_demand, not '" + name + "'");
}

inline std::string completion_name(completion_mode mode) {
  switch (mode) {
    case completion_mode::service: return "service";
    case completion_mode::waiters: return "waiters";
    case completion_mode::on_demand: return "on_demand";
  }
  return "?";
}

}  // namespace agio::bench
