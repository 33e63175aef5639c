#pragma once
// What a result file records about the run besides the device: the source commit the tools
// were built from and the GPU driver.
#include <string>

namespace agio::bench {

// The commit of the source tree at configure time (CMake's AGIO_COMMIT), "unknown" without git.
std::string source_commit();

// "CUDA driver 12.4", "no NVIDIA driver" or "none (CPU-only build)".
std::string driver_version();

}  // namespace agio::bench
