// Linked instead of gpu_platform.cu when agio is built without a CUDA compiler.
#include "runtime/platform.hpp"

namespace agio {

std::unique_ptr<runtime::platform> make_gpu_platform(std::string& why_not) {
  why_not = "this build of agio has no GPU backend (configured without a CUDA compiler)";
  return nullptr;
}

}  // namespace agio
