#pragma once
// The evaluation command: Figures 4, 7-10, 11 and 12 of the AGILE paper in one run.
#include <vector>

#include "harness/registers.hpp"

namespace agio::bench {
int evaluation_main(int argc, char** argv, int first);

// Every workload's kernels and their registers per thread (-1 where there is no GPU).
std::vector<register_row> register_report();
}  // namespace agio::bench
