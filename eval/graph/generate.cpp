#include "graph/generate.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>

#include "graph/parallel.hpp"
#include "harness/mix.hpp"

namespace agio::bench::graph {
namespace {

// Edges are drawn in fixed blocks, each from a generator seeded by (seed, block), so the result
// does not depend on how blocks are spread over threads (GAP seeds its blocks the same way).
constexpr std::uint64_t block_edges = std::uint64_t{1} << 16;

std::mt19937_64 block_rng(std::uint64_t seed, std::uint64_t block) {
  return std::mt19937_64(mix64(seed) ^ mix64(block + 1));
}

// Below n, from the top 32 bits of r (multiply-shift: no division, no modulo bias worth noting).
std::uint32_t below(std::uint64_t r, std::uint32_t n) {
  return static_cast<std::uint32_t>(((r >> 32) * std::uint64_t{n}) >> 32);
}
// In [0, 1) with 24 bits, as GAP draws its float.
float unit(std::uint64_t r) { return static_cast<float>(r >> 40) * 0x1.0p-24f; }

edge_list sized(std::uint32_t n, std::uint64_t m) {
  edge_list e;
  e.n = n;
  e.from.resize(m);
  e.to.resize(m);
  return e;
}

template <class Draw>
void draw_blocks(std::uint64_t m, std::uint64_t seed, Draw&& draw) {
  parallel_for((m + block_edges - 1) / block_edges, [&](std::uint64_t first, std::uint64_t last) {
    for (std::uint64_t b = first; b < last; ++b) {
      std::mt19937_64 rng = block_rng(seed, b);
      const std::uint64_t end = std::min(m, (b + 1) * block_edges);
      for (std::uint64_t e = b * block_edges; e < end; ++e) draw(e, rng);
    }
  });
}

}  // namespace

edge_list kronecker_edges(std::uint32_t scale, std::uint32_t edge_factor, std::uint64_t seed) {
  if (scale == 0 || scale > 31)
    throw std::invalid_argument("kronecker_edges: scale must be 1..31, not " + std::to_string(scale));
  const std::uint32_t n = std::uint32_t{1} << scale;
  edge_list e = sized(n, std::uint64_t{n} * edge_factor);
  constexpr float a = 0.57f, b = 0.19f, c = 0.19f;
  std::vector<std::uint32_t> permutation(n);
  for (std::uint32_t v = 0; v < n; ++v) permutation[v] = v;
  std::mt19937_64 shuffle_rng(mix64(seed ^ 0x9e3779b97f4a7c15ull));
  for (std::uint32_t v = n - 1; v > 0; --v) std::swap(permutation[v], permutation[below(shuffle_rng(), v + 1)]);
  draw_blocks(e.from.size(), seed, [&](std::uint64_t i, std::mt19937_64& rng) {
    std::uint32_t src = 0, dst = 0;
    for (std::uint32_t depth = 0; depth < scale; ++depth) {
      const float p = unit(rng());
      src <<= 1;
      dst <<= 1;
      if (p < a + b) {
        if (p > a) ++dst;  // quadrant B
      } else {
        ++src;                     // quadrant C or D
        if (p > a + b + c) ++dst;  // D
      }
    }
    e.from[i] = permutation[src];
    e.to[i] = permutation[dst];
  });
  return e;
}

edge_list uniform_edges(std::uint32_t n, std::uint64_t m, std::uint64_t seed) {
  if (n == 0) throw std::invalid_argument("uniform_edges: a graph needs a vertex");
  edge_list e = sized(n, m);
  draw_blocks(m, seed, [&](std::uint64_t i, std::mt19937_64& rng) {
    e.from[i] = below(rng(), n);
    e.to[i] = below(rng(), n);
  });
  return e;
}

void random_weights(csr& g, std::uint64_t seed) {
  g.val.resize(g.edges());
  const std::uint64_t key = mix64(seed ^ 0x5851f42d4c957f2dull);
  parallel_for(g.edges(), [&](std::uint64_t begin, std::uint64_t end) {
    for (std::uint64_t e = begin; e < end; ++e) g.val[e] = 2 * unit(mix64(key + e)) - 1;
  });
}

}  // namespace agio::bench::graph
