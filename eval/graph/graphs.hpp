#pragma once
// The graph benchmark (AGILE Figure 11): BFS, SpMV and connected components on a Kronecker
// and a uniform graph, native against agio's cache API and I/O path, in agio's I/O model and a
// BaM-style one.
#include <vector>

#include "harness/registers.hpp"

namespace agio::bench {
int graphs_main(int argc, char** argv, int first);
// Registers per thread of the cached BFS, SpMV and CC kernels in each I/O model (Figure 12).
std::vector<register_row> graphs_registers();
}  // namespace agio::bench
