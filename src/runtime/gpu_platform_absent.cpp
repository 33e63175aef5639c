// Linked instead of gpu_platform.cu when agio is built without a CUDA compiler.
#include "agio/runtime/gpu_memory.hpp"
#include "runtime/platform.hpp"

namespace agio {

std::unique_ptr<runtime::platform> make_gpu_platform(std::string& why_not) {
  why_not = "this build of agio has no GPU backend (configured without a CUDA compiler)";
  return nullptr;
}

std::vector<gpu_memory> gpu_memories() { return {}; }

}  // namespace agio
