#pragma once
// Host references that every benchmark run is checked against.
#include <cstdint>
#include <vector>

#include "graph/csr.hpp"

namespace agio::bench::graph {

inline constexpr std::uint32_t unvisited = ~std::uint32_t{0};  // the BFS level of an unreached vertex

// Levels from `source` along out-edges: 0 at the source, unvisited where it does not reach.
std::vector<std::uint32_t> bfs_reference(const csr& g, std::uint32_t source);

// y = A x in double, with each row's sum of |a x| terms, which bounds the rounding error of a
// float sum of the same terms in any order.
struct spmv_expected {
  std::vector<double> y, magnitude;
};
spmv_expected spmv_reference(const csr& g, const std::vector<float>& x);
bool spmv_matches(const spmv_expected& expected, const std::vector<float>& got);

// Connected components with edges taken as undirected (weak components of a directed graph):
// each vertex labelled with the smallest vertex id of its component.
std::vector<std::uint32_t> cc_reference(const csr& g);

// A vertex with out-edges, drawn from `seed` (GAP's BFS skips sources without neighbours too);
// vertex 0 when no vertex has an edge.
std::uint32_t pick_source(const csr& g, std::uint64_t seed);

}  // namespace agio::bench::graph
