#pragma once
// The --backend option every command takes.
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

}  // namespace agio::bench
