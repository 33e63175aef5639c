#pragma once
// Synthetic graphs as the GAP Benchmark Suite makes them (its -g and -u), deterministic from a
// seed whatever the number of host threads:
//   kronecker_edges: 2^scale vertices, edge_factor * 2^scale edges, each placed by descending
//     `scale` levels of the adjacency matrix with Graph500's quadrant probabilities A = 0.57,
//     B = C = 0.19 (D = 0.05), then vertex ids shuffled by a random permutation so that the
//     high-degree vertices are not the low ids. Degrees follow a power law.
//   uniform_edges: n vertices, m edges with both ends uniform: degrees nearly equal.
// GAP's graphs are undirected without self-loops or repeated edges: build them with
// build_options{.symmetrize = true, .squish = true}.
#include <cstdint>

#include "graph/csr.hpp"

namespace agio::bench::graph {

edge_list kronecker_edges(std::uint32_t scale, std::uint32_t edge_factor, std::uint64_t seed);
edge_list uniform_edges(std::uint32_t n, std::uint64_t m, std::uint64_t seed);

// Gives every edge of `g` a weight uniform in [-1, 1) (the SpMV matrix's values).
void random_weights(csr& g, std::uint64_t seed);

}  // namespace agio::bench::graph
