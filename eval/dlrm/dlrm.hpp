#pragma once
// The DLRM inference benchmark (AGILE Figures 7-10): embedding tables on storage, fetched
// through agio in async, sync and BaM-style modes, beside a CPU-driven pipeline.
#include <vector>

#include "harness/registers.hpp"

namespace agio::bench {
int dlrm_main(int argc, char** argv, int first);
// Registers per thread of the gather and prefetch kernels in each I/O model (Figure 12).
std::vector<register_row> dlrm_registers();
}  // namespace agio::bench
