#include "graph/reference.hpp"

#include <cmath>
#include <random>
#include <stdexcept>

namespace agio::bench::graph {

std::vector<std::uint32_t> bfs_reference(const csr& g, std::uint32_t source) {
  std::vector<std::uint32_t> level(g.n, unvisited), frontier{source}, next;
  level[source] = 0;
  for (std::uint32_t l = 0; !frontier.empty(); ++l, frontier.swap(next)) {
    next.clear();
    for (const std::uint32_t v : frontier) {
      for (std::uint64_t e = g.row[v]; e < g.row[v + 1]; ++e) {
        if (level[g.col[e]] == unvisited) {
          level[g.col[e]] = l + 1;
          next.push_back(g.col[e]);
        }
      }
    }
  }
  return level;
}

spmv_expected spmv_reference(const csr& g, const std::vector<float>& x) {
  if (g.val.size() != g.edges() || x.size() != g.n)
    throw std::invalid_argument("spmv_reference: needs a weight per edge and an x per vertex");
  spmv_expected r{std::vector<double>(g.n), std::vector<double>(g.n)};
  for (std::uint32_t v = 0; v < g.n; ++v) {
    for (std::uint64_t e = g.row[v]; e < g.row[v + 1]; ++e) {
      const double term = double{g.val[e]} * x[g.col[e]];
      r.y[v] += term;
      r.magnitude[v] += std::fabs(term);
    }
  }
  return r;
}

bool spmv_matches(const spmv_expected& expected, const std::vector<float>& got) {
  if (got.size() != expected.y.size()) return false;
  for (std::size_t v = 0; v < got.size(); ++v) {
    // Far above float rounding of a row (about sqrt(terms) * 2^-24 of its magnitude), far below
    // what a wrong or missing term changes.
    if (!(std::fabs(got[v] - expected.y[v]) <= 1e-5 * expected.magnitude[v] + 1e-6)) return false;
  }
  return true;
}

std::vector<std::uint32_t> cc_reference(const csr& g) {
  // Union-find whose root is always the smallest id of its set: a union links the larger root
  // under the smaller.
  std::vector<std::uint32_t> parent(g.n);
  for (std::uint32_t v = 0; v < g.n; ++v) parent[v] = v;
  const auto find = [&](std::uint32_t v) {
    while (parent[v] != v) v = parent[v] = parent[parent[v]];
    return v;
  };
  for (std::uint32_t v = 0; v < g.n; ++v) {
    for (std::uint64_t e = g.row[v]; e < g.row[v + 1]; ++e) {
      const std::uint32_t a = find(v), b = find(g.col[e]);
      if (a < b) parent[b] = a;
      if (b < a) parent[a] = b;
    }
  }
  for (std::uint32_t v = 0; v < g.n; ++v) parent[v] = find(v);
  return parent;
}

std::uint32_t pick_source(const csr& g, std::uint64_t seed) {
  if (g.n == 0 || g.edges() == 0) return 0;
  std::mt19937_64 rng(seed);
  for (;;) {
    const auto v = static_cast<std::uint32_t>(rng() % g.n);
    if (g.degree(v) > 0) return v;
  }
}

}  // namespace agio::bench::graph
