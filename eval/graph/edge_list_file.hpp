#pragma once
// Reading graphs that others publish:
//   edge lists as SNAP and most collections write them: one edge a line, "u v" or "u v w"
//     (0-based vertex ids, whitespace-separated, optional weight), lines starting with # or %
//     are comments; every line must have a weight or none does;
//   Matrix Market coordinate files (.mtx, first line "%%MatrixMarket matrix coordinate ..."):
//     1-based "i j [value]" entries after a "rows cols entries" line; real, integer or pattern
//     values; general, symmetric (both directions added) or skew-symmetric.
// A malformed line is an error naming the file and the line. Edges are kept as listed (directed,
// repeats kept).
#include <string>

#include "graph/csr.hpp"

namespace agio::bench::graph {

// Matrix Market when the first line is its banner, an edge list otherwise.
edge_list read_edge_list(const std::string& path);

// A binary CSR file (graph/csr_file.hpp) when it starts with the CSR magic, an edge list or
// Matrix Market file otherwise.
csr read_graph_file(const std::string& path);

}  // namespace agio::bench::graph
