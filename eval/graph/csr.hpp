#pragma once
// Graphs in compressed sparse row form, built from edge lists. Vertex ids are 32-bit; row
// offsets are 64-bit so that graphs past 2^32 edges (BaM's GAP graphs have 4.2 billion) fit.
#include <cstdint>
#include <vector>

namespace agio::bench::graph {

// The out-edges of vertex v are col[row[v]] .. col[row[v + 1] - 1], with weights val[...] when
// the graph has them.
struct csr {
  std::uint32_t n = 0;
  std::vector<std::uint64_t> row{0};  // n + 1 offsets
  std::vector<std::uint32_t> col;
  std::vector<float> val;  // empty, or one weight per edge
  std::uint64_t edges() const { return col.size(); }
  std::uint64_t degree(std::uint32_t v) const { return row[v + 1] - row[v]; }
};

// Edge e goes from from[e] to to[e]; every id is below n.
struct edge_list {
  std::uint32_t n = 0;
  std::vector<std::uint32_t> from, to;
  std::vector<float> weight;  // empty, or one per edge
};

struct build_options {
  bool symmetrize = false;  // add (v, u) for every (u, v): an undirected graph
  bool squish = false;      // drop self-loops and repeated edges, as GAP's builder does
};

// Rows come out sorted by target when squished, in edge-list order otherwise.
csr build_csr(const edge_list& edges, build_options options = {});

}  // namespace agio::bench::graph
