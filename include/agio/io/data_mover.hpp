#pragma once
// Who moves data between host memory and GPU memory on the proxy transport (DESIGN §4).
#include <cstdint>

namespace agio {

enum class data_mover : std::uint8_t {
  gpu_warps,    // the completion service's warps copy reads out of mapped host memory, and
                // submitters stage writes into their entry's bounce slot
  copy_engine,  // the controller threads drive the DMA copy engine in batches
};

}  // namespace agio
