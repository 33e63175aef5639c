#include "graph/csr.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "graph/parallel.hpp"

namespace agio::bench::graph {
namespace {

// Sorts each row by target and keeps the first of each run of equal targets (and its weight),
// dropping self-loops; returns the rows' new lengths.
std::vector<std::uint64_t> squish_rows(csr& g) {
  const bool weighted = !g.val.empty();
  std::vector<std::uint64_t> kept(g.n);
  parallel_for(g.n, [&](std::uint64_t begin, std::uint64_t end) {
    std::vector<std::pair<std::uint32_t, float>> scratch;
    for (std::uint64_t v = begin; v < end; ++v) {
      const std::uint64_t first = g.row[v], last = g.row[v + 1];
      std::uint64_t out = first;
      if (weighted) {
        scratch.clear();
        for (std::uint64_t e = first; e < last; ++e) scratch.emplace_back(g.col[e], g.val[e]);
        std::stable_sort(scratch.begin(), scratch.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (std::size_t i = 0; i < scratch.size(); ++i) {
          if (scratch[i].first == v || (i > 0 && scratch[i].first == scratch[i - 1].first)) continue;
          g.col[out] = scratch[i].first;
          g.val[out++] = scratch[i].second;
        }
      } else {
        std::sort(g.col.begin() + static_cast<std::ptrdiff_t>(first),
                  g.col.begin() + static_cast<std::ptrdiff_t>(last));
        for (std::uint64_t e = first; e < last; ++e) {
          if (g.col[e] == v || (e > first && g.col[e] == g.col[e - 1])) continue;
          g.col[out++] = g.col[e];
        }
      }
      kept[v] = out - first;
    }
  });
  return kept;
}

// Moves each row's first kept[v] entries together and rewrites the offsets.
void compact(csr& g, const std::vector<std::uint64_t>& kept) {
  std::vector<std::uint64_t> row(g.n + std::size_t{1}, 0);
  for (std::uint32_t v = 0; v < g.n; ++v) row[v + 1] = row[v] + kept[v];
  // Rows only move towards the front, so moving them in order never overwrites unread data.
  for (std::uint32_t v = 0; v < g.n; ++v) {
    const auto from = static_cast<std::ptrdiff_t>(g.row[v]), to = static_cast<std::ptrdiff_t>(row[v]);
    const auto count = static_cast<std::ptrdiff_t>(kept[v]);
    std::copy(g.col.begin() + from, g.col.begin() + from + count, g.col.begin() + to);
    if (!g.val.empty()) std::copy(g.val.begin() + from, g.val.begin() + from + count, g.val.begin() + to);
  }
  g.row = std::move(row);
  g.col.resize(g.row.back());
  g.col.shrink_to_fit();
  if (!g.val.empty()) {
    g.val.resize(g.row.back());
    g.val.shrink_to_fit();
  }
}

}  // namespace

csr build_csr(const edge_list& edges, build_options options) {
  const std::uint64_t m = edges.from.size();
  if (edges.to.size() != m || (!edges.weight.empty() && edges.weight.size() != m)) {
    throw std::invalid_argument("build_csr: the edge list's arrays differ in length");
  }
  const bool weighted = !edges.weight.empty();
  csr g;
  g.n = edges.n;
  g.row.assign(g.n + std::size_t{1}, 0);
  const auto add = [&](auto&& visit) {
    for (std::uint64_t e = 0; e < m; ++e) {
      if (edges.from[e] >= g.n || edges.to[e] >= g.n) {
        throw std::invalid_argument("build_csr: edge " + std::to_string(e) + " names a vertex past " +
                                    std::to_string(g.n - 1));
      }
      const float w = weighted ? edges.weight[e] : 0.0f;
      visit(edges.from[e], edges.to[e], w);
      if (options.symmetrize) visit(edges.to[e], edges.from[e], w);
    }
  };
  add([&](std::uint32_t u, std::uint32_t, float) { ++g.row[u + 1]; });
  for (std::uint32_t v = 0; v < g.n; ++v) g.row[v + 1] += g.row[v];
  g.col.resize(g.row.back());
  if (weighted) g.val.resize(g.row.back());
  std::vector<std::uint64_t> next(g.row.begin(), g.row.end() - 1);
  add([&](std::uint32_t u, std::uint32_t v, float w) {
    const std::uint64_t slot = next[u]++;
    g.col[slot] = v;
    if (weighted) g.val[slot] = w;
  });
  if (options.squish) compact(g, squish_rows(g));
  return g;
}

}  // namespace agio::bench::graph
