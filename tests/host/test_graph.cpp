// The graph benchmarks' data: generators (determinism, counts, Kronecker skew), the binary CSR
// file (round trip, bad files), edge-list and Matrix Market parsing (malformed lines named),
// the host references on hand-made graphs, and the BFS and connected-components jobs on CPU
// threads against those references.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "graph/csr_file.hpp"
#include "graph/edge_list_file.hpp"
#include "graph/generate.hpp"
#include "graph/kernels.hpp"
#include "graph/reference.hpp"
#include "test_support.hpp"

namespace agio::bench::graph {
namespace {

csr from_pairs(std::uint32_t n, const std::vector<std::pair<std::uint32_t, std::uint32_t>>& pairs,
               build_options o = {}) {
  edge_list e;
  e.n = n;
  for (const auto& [u, v] : pairs) {
    e.from.push_back(u);
    e.to.push_back(v);
  }
  return build_csr(e, o);
}

std::vector<std::uint32_t> neighbours(const csr& g, std::uint32_t v) {
  return {g.col.begin() + static_cast<std::ptrdiff_t>(g.row[v]),
          g.col.begin() + static_cast<std::ptrdiff_t>(g.row[v + 1])};
}

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

using test::error_of;

TEST(GraphBuild, SymmetrizeAndSquish) {
  const csr g = from_pairs(4, {{0, 1}, {0, 1}, {1, 1}, {2, 0}, {3, 2}}, {.symmetrize = true, .squish = true});
  EXPECT_EQ(neighbours(g, 0), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(neighbours(g, 1), (std::vector<std::uint32_t>{0}));  // the self-loop and the repeat are gone
  EXPECT_EQ(neighbours(g, 2), (std::vector<std::uint32_t>{0, 3}));
  EXPECT_EQ(neighbours(g, 3), (std::vector<std::uint32_t>{2}));
  const csr directed = from_pairs(3, {{2, 0}, {0, 1}, {0, 1}});
  EXPECT_EQ(neighbours(directed, 0), (std::vector<std::uint32_t>{1, 1}));
  EXPECT_EQ(directed.edges(), 3u);
  EXPECT_THROW(from_pairs(2, {{0, 2}}), std::invalid_argument);
}

TEST(GraphGenerate, Deterministic) {
  const edge_list a = kronecker_edges(10, 8, 42), b = kronecker_edges(10, 8, 42), c = kronecker_edges(10, 8, 43);
  EXPECT_EQ(a.from, b.from);
  EXPECT_EQ(a.to, b.to);
  EXPECT_NE(a.from, c.from);
  const edge_list u = uniform_edges(1000, 5000, 1), v = uniform_edges(1000, 5000, 1);
  EXPECT_EQ(u.from, v.from);
  EXPECT_EQ(u.to, v.to);
  csr g = build_csr(u), h = build_csr(v);
  random_weights(g, 3);
  random_weights(h, 3);
  EXPECT_EQ(g.val, h.val);
  EXPECT_TRUE(std::all_of(g.val.begin(), g.val.end(), [](float w) { return w >= -1 && w < 1; }));
}

TEST(GraphGenerate, Counts) {
  const edge_list k = kronecker_edges(12, 16, 7);
  EXPECT_EQ(k.n, 4096u);
  EXPECT_EQ(k.from.size(), 4096u * 16);
  const edge_list u = uniform_edges(4096, 4096 * 16, 7);
  EXPECT_EQ(u.from.size(), 4096u * 16);
  EXPECT_LT(*std::max_element(u.to.begin(), u.to.end()), 4096u);
  // Symmetrized, every edge has its reverse; squished, no self-loop or repeat.
  const csr g = build_csr(u, {.symmetrize = true, .squish = true});
  EXPECT_LE(g.edges(), 2u * 4096 * 16);
  EXPECT_GT(g.edges(), 2u * 4096 * 15);  // few repeats among 2^16 draws over 2^24 pairs
  for (std::uint32_t v = 0; v < g.n; ++v) {
    const auto adj = neighbours(g, v);
    EXPECT_TRUE(std::is_sorted(adj.begin(), adj.end()));
    EXPECT_EQ(std::adjacent_find(adj.begin(), adj.end()), adj.end());
    EXPECT_EQ(std::count(adj.begin(), adj.end(), v), 0);
    for (const std::uint32_t w : adj) {
      const auto back = neighbours(g, w);
      ASSERT_TRUE(std::binary_search(back.begin(), back.end(), v));
    }
  }
}

TEST(GraphGenerate, KroneckerIsSkewedUniformIsNot) {
  const auto max_over_mean = [](const csr& g) {
    std::uint64_t top = 0;
    for (std::uint32_t v = 0; v < g.n; ++v) top = std::max(top, g.degree(v));
    return static_cast<double>(top) / (static_cast<double>(g.edges()) / g.n);
  };
  const build_options gap{.symmetrize = true, .squish = true};
  const csr k = build_csr(kronecker_edges(14, 16, 5), gap);
  const csr u = build_csr(uniform_edges(1u << 14, (1u << 14) * 16, 5), gap);
  EXPECT_GT(max_over_mean(k), 20.0);
  EXPECT_LT(max_over_mean(u), 3.0);
  // Power law: many vertices without an edge in a Kronecker graph, almost none in a uniform one.
  const auto isolated = [](const csr& g) {
    std::uint32_t count = 0;
    for (std::uint32_t v = 0; v < g.n; ++v) count += g.degree(v) == 0 ? 1 : 0;
    return count;
  };
  EXPECT_GT(isolated(k), k.n / 10);
  EXPECT_LT(isolated(u), 10u);
}

TEST(GraphFile, CsrRoundTrip) {
  test::temp_file file("graph.csr");
  csr g = build_csr(kronecker_edges(8, 4, 9), {.symmetrize = true, .squish = true});
  random_weights(g, 9);
  write_csr_file(file.path(), g);
  EXPECT_TRUE(is_csr_file(file.path()));
  const csr back = read_csr_file(file.path());
  EXPECT_EQ(back.n, g.n);
  EXPECT_EQ(back.row, g.row);
  EXPECT_EQ(back.col, g.col);
  EXPECT_EQ(back.val, g.val);
  const csr plain = from_pairs(3, {{0, 2}, {2, 1}});
  write_csr_file(file.path(), plain);
  const csr plain_back = read_graph_file(file.path());
  EXPECT_EQ(plain_back.col, plain.col);
  EXPECT_TRUE(plain_back.val.empty());
}

TEST(GraphFile, CsrBadFiles) {
  test::temp_file file("bad.csr");
  write_text(file.path(), "AGIOCS");
  EXPECT_NE(error_of([&] { read_csr_file(file.path()); }).find("shorter than the 32-byte CSR header"),
            std::string::npos);
  write_text(file.path(), std::string(40, 'x'));
  EXPECT_NE(error_of([&] { read_csr_file(file.path()); }).find("bad magic"), std::string::npos);
  write_csr_file(file.path(), from_pairs(3, {{0, 2}, {2, 1}}));
  std::filesystem::resize_file(file.path(), std::filesystem::file_size(file.path()) - 4);
  const std::string truncated = error_of([&] { read_csr_file(file.path()); });
  EXPECT_NE(truncated.find(file.path()), std::string::npos);
  EXPECT_NE(truncated.find("header"), std::string::npos);
  csr wrong = from_pairs(3, {{0, 2}, {2, 1}});
  wrong.col[1] = 7;
  write_csr_file(file.path(), wrong);
  EXPECT_NE(error_of([&] { read_csr_file(file.path()); }).find("goes to vertex 7"), std::string::npos);
  EXPECT_NE(error_of([] { read_csr_file("/nonexistent/agio.csr"); }).find("cannot open"), std::string::npos);
}

TEST(GraphFile, SnapEdgeList) {
  test::temp_file file("graph.txt");
  write_text(file.path(), "# SNAP-style header\n% another comment\n0 1\n\n1\t2\n4 0\r\n");
  const edge_list e = read_edge_list(file.path());
  EXPECT_EQ(e.n, 5u);
  EXPECT_EQ(e.from, (std::vector<std::uint32_t>{0, 1, 4}));
  EXPECT_EQ(e.to, (std::vector<std::uint32_t>{1, 2, 0}));
  EXPECT_TRUE(e.weight.empty());
  write_text(file.path(), "0 1 0.5\n1 2 -2\n");
  EXPECT_EQ(read_edge_list(file.path()).weight, (std::vector<float>{0.5f, -2.0f}));
  const csr g = read_graph_file(file.path());
  EXPECT_EQ(g.val, (std::vector<float>{0.5f, -2.0f}));

  write_text(file.path(), "0 1\n1 x\n");
  const std::string bad = error_of([&] { read_edge_list(file.path()); });
  EXPECT_NE(bad.find(file.path() + ":2:"), std::string::npos) << bad;
  EXPECT_NE(bad.find("target vertex 'x'"), std::string::npos) << bad;
  write_text(file.path(), "0 1\n2\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":2: expected target vertex"), std::string::npos);
  write_text(file.path(), "0 1 1.0\n2 3\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":2: some lines have a weight"), std::string::npos);
  write_text(file.path(), "0 1 2 3\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":1: extra words"), std::string::npos);
  write_text(file.path(), "-1 2\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find("not a non-negative integer"), std::string::npos);
}

TEST(GraphFile, MatrixMarket) {
  test::temp_file file("graph.mtx");
  write_text(file.path(),
             "%%MatrixMarket matrix coordinate real symmetric\n% comment\n3 3 3\n1 1 4.0\n2 1 -1.5\n3 2 2\n");
  const edge_list e = read_edge_list(file.path());
  EXPECT_EQ(e.n, 3u);
  // The diagonal once, each off-diagonal entry both ways.
  EXPECT_EQ(e.from, (std::vector<std::uint32_t>{0, 1, 0, 2, 1}));
  EXPECT_EQ(e.to, (std::vector<std::uint32_t>{0, 0, 1, 1, 2}));
  EXPECT_EQ(e.weight, (std::vector<float>{4.0f, -1.5f, -1.5f, 2.0f, 2.0f}));
  write_text(file.path(), "%%MatrixMarket matrix coordinate pattern general\n2 4 2\n1 4\n2 3\n");
  const edge_list p = read_edge_list(file.path());
  EXPECT_EQ(p.n, 4u);
  EXPECT_TRUE(p.weight.empty());
  EXPECT_EQ(p.to, (std::vector<std::uint32_t>{3, 2}));

  write_text(file.path(), "%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 1.0\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":4: entry outside"), std::string::npos);
  write_text(file.path(), "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n2 2 zz\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":4: value 'zz'"), std::string::npos);
  write_text(file.path(), "%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.0\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find("ends after 1 of the 3 entries"), std::string::npos);
  write_text(file.path(), "%%MatrixMarket matrix array real general\n3 3\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find(":1: Matrix Market format 'array'"), std::string::npos);
  write_text(file.path(), "%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1 0\n");
  EXPECT_NE(error_of([&] { read_edge_list(file.path()); }).find("field 'complex'"), std::string::npos);
}

// 0 -> 1 -> 2 -> 3, 0 -> 2, 4 -> 0, 5 alone, 6 -> 7.
csr hand_graph() { return from_pairs(8, {{0, 1}, {1, 2}, {2, 3}, {0, 2}, {4, 0}, {6, 7}}); }

TEST(GraphReference, Bfs) {
  const std::vector<std::uint32_t> expected{0, 1, 1, 2, unvisited, unvisited, unvisited, unvisited};
  EXPECT_EQ(bfs_reference(hand_graph(), 0), expected);
  EXPECT_EQ(bfs_reference(hand_graph(), 4)[3], 3u);
}

TEST(GraphReference, Spmv) {
  csr g = from_pairs(3, {{0, 0}, {0, 2}, {2, 1}});
  g.val = {2.0f, -1.0f, 0.5f};
  const spmv_expected r = spmv_reference(g, {1.0f, 4.0f, 3.0f});
  EXPECT_EQ(r.y, (std::vector<double>{2.0 - 3.0, 0.0, 2.0}));
  EXPECT_EQ(r.magnitude, (std::vector<double>{5.0, 0.0, 2.0}));
  EXPECT_TRUE(spmv_matches(r, {-1.0f, 0.0f, 2.0f}));
  EXPECT_FALSE(spmv_matches(r, {-1.0f, 0.0f, 2.01f}));
}

TEST(GraphReference, ConnectedComponents) {
  // Directed edges, undirected components: 4 -> 0 joins 4 to {0, 1, 2, 3}.
  EXPECT_EQ(cc_reference(hand_graph()), (std::vector<std::uint32_t>{0, 0, 0, 0, 0, 5, 6, 6}));
  // The smallest id labels a component even when no edge leaves it.
  EXPECT_EQ(cc_reference(from_pairs(4, {{3, 1}, {2, 3}})), (std::vector<std::uint32_t>{0, 1, 1, 1}));
}

TEST(GraphReference, SourceHasEdges) {
  const csr g = hand_graph();
  for (std::uint64_t seed = 0; seed < 20; ++seed) EXPECT_GT(g.degree(pick_source(g, seed)), 0u);
}

// The benchmark's jobs, native variant, on 4 CPU threads against the references.
TEST(GraphKernels, BfsAndComponentsOnThreads) {
  const csr g = build_csr(kronecker_edges(10, 4, 11), {.symmetrize = false, .squish = true});
  std::vector<std::uint32_t> levels(g.n, unvisited), labels(g.n);
  const std::uint32_t source = pick_source(g, 1);
  levels[source] = 0;
  std::uint32_t changed = 1;
  for (std::uint32_t level = 0; changed != 0; ++level) {
    changed = 0;
    const bfs_job<native_source<std::uint32_t>> job{{g.col.data()}, g.row.data(), levels.data(), &changed, g.n, level};
    test::run_threads(4, [&](unsigned t) { job(t, 4); });
  }
  EXPECT_EQ(levels, bfs_reference(g, source));
  for (std::uint32_t v = 0; v < g.n; ++v) labels[v] = v;
  for (changed = 1; changed != 0;) {
    changed = 0;
    const cc_job<native_source<std::uint32_t>> job{{g.col.data()}, g.row.data(), labels.data(), &changed, g.n};
    test::run_threads(4, [&](unsigned t) { job(t, 4); });
  }
  EXPECT_EQ(labels, cc_reference(g));
}

}  // namespace
}  // namespace agio::bench::graph
