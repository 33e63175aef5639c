// Criteo-shaped DLRM input: the generator's determinism, ranges, skew and spread, and the
// click-log text format (round trip, missing fields, malformed lines); and the batch plan the
// baselines without agio read by.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "dlrm/batch_plan.hpp"
#include "workloads/criteo.hpp"

namespace agio::bench::criteo {
namespace {

// A valid line's fields, to be spoilt one at a time.
std::vector<std::string> good_fields() {
  std::vector<std::string> f{"0"};
  for (std::size_t i = 0; i < dense_features; ++i) f.push_back(std::to_string(i));
  for (std::size_t i = 0; i < sparse_features; ++i) f.push_back("68fd1e64");
  return f;
}

std::string join(const std::vector<std::string>& f) {
  std::string line;
  for (std::size_t i = 0; i < f.size(); ++i) line += (i ? "\t" : "") + f[i];
  return line + "\n";
}

std::vector<sample> load_all(std::istream& in, const std::vector<std::uint32_t>& vocab, std::size_t batch) {
  tsv_loader loader(in, vocab);
  std::vector<sample> all, buf(batch);
  while (const std::size_t n = loader.read(buf)) all.insert(all.end(), buf.begin(), buf.begin() + n);
  return all;
}

// The vocabulary with table 0 replaced: a big table to measure, the rest as Criteo's.
std::vector<std::uint32_t> with_table0(std::uint32_t rows) {
  std::vector<std::uint32_t> v = criteo_vocab_sizes();
  v[0] = rows;
  return v;
}

TEST(Criteo, VocabSizesScaleAndClamp) {
  const std::vector<std::uint32_t> full = criteo_vocab_sizes();
  ASSERT_EQ(full.size(), sparse_features);
  EXPECT_TRUE(std::equal(full.begin(), full.end(), terabyte_cardinalities.begin()));
  EXPECT_EQ(*std::max_element(full.begin(), full.end()), 39979771u);

  const std::vector<std::uint32_t> tiny = criteo_vocab_sizes(1e-9);
  for (std::size_t i = 0; i < sparse_features; ++i) EXPECT_EQ(tiny[i], 2u) << i;  // every original is >= 2

  const std::vector<std::uint32_t> capped = criteo_vocab_sizes(0.01, 100000);
  EXPECT_EQ(capped[0], 100000u);               // 398844 capped
  EXPECT_EQ(capped[1], 390u);                  // 390.43 rounded
  EXPECT_EQ(capped[5], 2u);                    // 0.03 raised to 2
  EXPECT_EQ(criteo_vocab_sizes(1, 1)[3], 1u);  // the cap wins

  EXPECT_THROW(criteo_vocab_sizes(0), std::invalid_argument);
  EXPECT_THROW(criteo_vocab_sizes(std::nan("")), std::invalid_argument);
  EXPECT_THROW(criteo_vocab_sizes(1, 0), std::invalid_argument);
  EXPECT_THROW(generator(std::vector<std::uint32_t>(25, 10)), std::invalid_argument);
  EXPECT_THROW(generator(full, -1.0), std::invalid_argument);
}

TEST(Criteo, SameSeedSameSamples) {
  const std::vector<std::uint32_t> vocab = criteo_vocab_sizes();
  generator a(vocab, 1.05, 7), b(vocab, 1.05, 7), c(vocab, 1.05, 8);
  std::vector<sample> sa(500), sb(500), sc(500);
  a.fill(sa);
  b.fill(sb);
  c.fill(sc);
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
  EXPECT_EQ(a.next(), b.next());
}

// The generator's output for one (vocab, alpha, seed), pinned: it changes only on purpose.
// python/tests/test_workloads.py asserts the same values of agio.workloads.CriteoGenerator, which
// binds this generator.
TEST(Criteo, FixedSeedGivesThePinnedSamples) {
  generator g(criteo_vocab_sizes(0.001, 20000), 1.05, 42);
  std::vector<sample> s(1000);
  g.fill(s);
  const std::array<std::uint32_t, sparse_features> first{19249, 20, 7, 6, 9, 1, 3,    1,     0,     2093, 2231, 110, 1,
                                                         1,     4,  0, 0, 1, 0, 1612, 17008, 12571, 241,  0,    0,   1};
  EXPECT_EQ(s[0].sparse, first);
  EXPECT_FLOAT_EQ(s[0].dense[1], std::log1p(16.0f));
  EXPECT_FLOAT_EQ(s[0].dense[4], std::log1p(411.0f));
  std::uint64_t positives = 0, rows = 0, counts = 0;
  for (const sample& x : s) {
    positives += x.label == 1;
    for (const std::uint32_t r : x.sparse) rows += r;
    for (const float d : x.dense) counts += static_cast<std::uint64_t>(std::llround(std::expm1(double{d})));
  }
  EXPECT_EQ(positives, 33u);
  EXPECT_EQ(rows, 54411414u);
  EXPECT_EQ(counts, 10220084u);
}

TEST(Criteo, IndicesStayInsideTheirTablesAndCoverSmallOnes) {
  std::vector<std::uint32_t> vocab = criteo_vocab_sizes();
  vocab[1] = 1;
  vocab[2] = 2;
  generator g(vocab, 1.05, 3);
  std::vector<std::vector<bool>> seen(sparse_features);
  for (std::size_t t = 0; t < sparse_features; ++t) seen[t].assign(std::min<std::uint32_t>(vocab[t], 64), false);
  for (int i = 0; i < 5000; ++i) {
    const sample s = g.next();
    for (std::size_t t = 0; t < sparse_features; ++t) {
      ASSERT_LT(s.sparse[t], vocab[t]) << "table " << t;
      if (s.sparse[t] < seen[t].size()) seen[t][s.sparse[t]] = true;
    }
  }
  for (const std::size_t t : {1, 2, 5, 16, 12})  // 1, 2, 3, 4 and 10 rows: every row shows up
    EXPECT_TRUE(std::all_of(seen[t].begin(), seen[t].end(), [](bool b) { return b; })) << "table " << t;
}

TEST(Criteo, RowOfRankIsABijection) {
  for (const std::uint32_t n : {1u, 2u, 3u, 5u, 63u, 1000u, 4097u, 65536u}) {
    generator g(with_table0(n));
    std::vector<int> hits(n, 0);
    for (std::uint32_t r = 0; r < n; ++r) ++hits[g.row(0, r)];
    EXPECT_TRUE(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; })) << n;
  }
}

// Ranks follow Zipf: the hottest ranks at their exact probabilities, the top 1% of a 1 M-row
// table with most of the lookups (about 75% for alpha 1.05), none of that skew for alpha 0.
TEST(Criteo, LookupsAreZipfSkewed) {
  constexpr std::uint32_t n = 1u << 20;
  constexpr int draws = 200000;
  for (const double alpha : {1.05, 0.0}) {
    generator g(with_table0(n), alpha, 11);
    std::vector<std::uint32_t> rank_of(n);
    for (std::uint32_t r = 0; r < n; ++r) rank_of[g.row(0, r)] = r;
    std::vector<int> by_rank(n, 0);
    for (int i = 0; i < draws; ++i) ++by_rank[rank_of[g.draw(0)]];

    std::vector<double> p(n);
    double norm = 0;
    for (std::uint32_t k = 0; k < n; ++k) norm += p[k] = std::pow(k + 1.0, -alpha);
    for (std::uint32_t k = 0; k < 4; ++k) {
      const double expect = p[k] / norm * draws;
      EXPECT_NEAR(by_rank[k], expect, 5 * std::sqrt(expect) + 1) << "alpha " << alpha << " rank " << k;
    }
    double top = 0;
    for (std::uint32_t k = 0; k < n / 100; ++k) top += by_rank[k];
    top /= draws;
    if (alpha > 0) {
      EXPECT_GT(top, 0.7);
    } else {
      EXPECT_LT(top, 0.015);
    }
  }
}

// The hottest 1000 rows land on different 4 KiB lines (8 rows of 128 floats each) all over the
// table, not packed at its start.
TEST(Criteo, HotRowsSpreadOverTheTable) {
  constexpr std::uint32_t n = 1u << 20, rows_per_line = 8, hot = 1000;
  generator g(with_table0(n));
  std::vector<std::uint32_t> lines;
  std::uint32_t first_tenth = 0;
  for (std::uint32_t r = 0; r < hot; ++r) {
    lines.push_back(g.row(0, r) / rows_per_line);
    first_tenth += g.row(0, r) < n / 10;
  }
  std::sort(lines.begin(), lines.end());
  EXPECT_GT(std::unique(lines.begin(), lines.end()) - lines.begin(), 990);
  EXPECT_GT(first_tenth, 50u);
  EXPECT_LT(first_tenth, 150u);
}

TEST(Criteo, DenseIsFiniteNonNegativeAndHeavyTailedLabelsRare) {
  generator g(criteo_vocab_sizes(0.001), 1.05, 5);
  int positives = 0, zeros = 0, large = 0;
  constexpr int samples = 20000;
  for (int i = 0; i < samples; ++i) {
    const sample s = g.next();
    ASSERT_TRUE(s.label == 0 || s.label == 1);
    positives += s.label == 1;
    for (const float d : s.dense) {
      ASSERT_TRUE(std::isfinite(d) && d >= 0) << d;
      zeros += d == 0;
      large += d > std::log1p(1e5);
    }
  }
  EXPECT_NEAR(positives / double(samples), generator::positive_rate, 0.006);
  EXPECT_GT(zeros, samples);  // missing features: about 2.8 per sample
  EXPECT_GT(large, 100);      // and a tail of big counts
}

TEST(Criteo, WrittenSamplesLoadBackExactly) {
  const std::vector<std::uint32_t> vocab = criteo_vocab_sizes();
  generator g(vocab, 1.05, 21);
  std::vector<sample> samples(3000);
  g.fill(samples);
  std::stringstream text;
  write_tsv(text, samples);
  EXPECT_EQ(std::count(std::istreambuf_iterator<char>(text), {}, '\n'), 3000);
  text.seekg(0);
  EXPECT_EQ(load_all(text, vocab, 333), samples);
}

TEST(Criteo, LoadsFromAFile) {
  const std::vector<std::uint32_t> vocab = criteo_vocab_sizes(0.01);
  std::vector<sample> samples(10);
  generator(vocab).fill(samples);
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("agio_criteo_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + ".tsv");
  {
    std::ofstream out(file, std::ios::binary);
    write_tsv(out, samples);
  }
  tsv_loader loader(file, vocab);
  std::vector<sample> back(16);
  EXPECT_EQ(loader.read(back), 10u);
  back.resize(10);
  EXPECT_EQ(back, samples);
  EXPECT_EQ(loader.lines_read(), 10u);
  std::filesystem::remove(file);
  EXPECT_THROW(tsv_loader(file, vocab), std::runtime_error);
}

TEST(Criteo, MissingAndNegativeFieldsParse) {
  std::vector<std::string> f = good_fields();
  f[0] = "1";
  f[1] = "";    // I1 missing
  f[2] = "-1";  // I2 negative
  f[3] = "1000";
  f[14] = "";          // C1 missing
  f[15] = "FFFFFFFF";  // C2, upper case
  f[16] = "0000000a";
  std::vector<std::string> g = good_fields();
  g[40 - 1] = "";  // C26 missing at the end of the line
  std::istringstream in(join(f) + join(g) + "0" + std::string(39, '\t') + "\r\n");
  std::vector<std::uint32_t> vocab(sparse_features, 1000);
  const std::vector<sample> s = load_all(in, vocab, 2);
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].label, 1.0f);
  EXPECT_EQ(s[0].dense[0], 0.0f);
  EXPECT_EQ(s[0].dense[1], 0.0f);
  EXPECT_EQ(s[0].dense[2], static_cast<float>(std::log1p(1000.0)));
  EXPECT_EQ(s[0].dense[3], static_cast<float>(std::log1p(3.0)));
  EXPECT_EQ(s[0].sparse[0], 0u);
  EXPECT_EQ(s[0].sparse[1], 0xffffffffu % 1000);
  EXPECT_EQ(s[0].sparse[2], 10u);
  EXPECT_EQ(s[0].sparse[3], 0x68fd1e64u % 1000);
  EXPECT_EQ(s[1].label, 0.0f);
  EXPECT_EQ(s[1].sparse[25], 0u);
  EXPECT_EQ(s[2], sample{});  // every field empty
}

TEST(Criteo, MalformedLinesNameTheLineAndField) {
  const std::vector<std::uint32_t> vocab(sparse_features, 1000);
  const auto expect_error = [&](std::size_t field, const std::string& value, const std::string& where) {
    std::vector<std::string> bad = good_fields();
    if (field < bad.size()) {
      bad[field] = value;
    } else {
      bad.push_back(value);
    }
    std::istringstream in(join(good_fields()) + join(good_fields()) + join(bad) + join(good_fields()));
    try {
      load_all(in, vocab, 2);
      ADD_FAILURE() << "no error for '" << value << "' in field " << field;
    } catch (const std::runtime_error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("line 3"), std::string::npos) << what;
      EXPECT_NE(what.find(where), std::string::npos) << what;
    }
  };
  expect_error(0, "2", "label");
  expect_error(0, "", "label");
  expect_error(0, "0.0", "label");
  expect_error(1, "1.5", "I1");
  expect_error(5, "abc", "I5");
  expect_error(13, " 3", "I13");
  expect_error(13, "99999999999999999999", "I13");
  expect_error(14, "xyz1", "C1");
  expect_error(20, "0x12", "C7");
  expect_error(39, "-1", "C26");
  expect_error(39, "1ffffffffffffffff", "C26");
  expect_error(40, "extra", "41 tab-separated fields");
  expect_error(39, "a\tb", "41 tab-separated fields");

  std::istringstream short_line(join(good_fields()) + "1\t2\t3\n");
  EXPECT_THROW(load_all(short_line, vocab, 8), std::runtime_error);
  EXPECT_THROW(tsv_loader(short_line, std::vector<std::uint32_t>(sparse_features, 0)), std::invalid_argument);
}

// Two samples over three tables of 64-row blocks (dim 16): tables 0, 1 and 2 start at blocks
// 0, 2 and 3. Each distinct block is read once, in order; each lookup finds its row by slot.
TEST(DlrmBatchPlan, SmallBatchByHand) {
  const dlrm::table_layout layout(16, {100, 3, 1000});
  const std::vector<std::uint32_t> indices{70, 2, 999, 65, 0, 5};  // blocks 1, 2, 18, 1, 2, 3
  const dlrm::batch_plan p = dlrm::plan_batch(layout, indices.data(), 6);
  EXPECT_EQ(p.blocks, (std::vector<std::uint64_t>{1, 2, 3, 18}));
  EXPECT_EQ(p.slot_indices,
            (std::vector<std::uint32_t>{0 * 64 + 6, 1 * 64 + 2, 3 * 64 + 39, 0 * 64 + 1, 1 * 64 + 0, 2 * 64 + 5}));
}

// On generated batches: the blocks are exactly the lookups' blocks, each once and sorted, and
// every slot index names the lookup's own row in its block.
TEST(DlrmBatchPlan, SlotsNameEachLookupsRow) {
  const std::vector<std::uint32_t> vocab = criteo_vocab_sizes(0.001, 20000);
  const dlrm::table_layout layout(16, vocab);
  generator gen(vocab, 1.05, 3);
  std::vector<sample> samples(256);
  gen.fill(samples);
  std::vector<std::uint32_t> indices;
  for (const sample& x : samples) indices.insert(indices.end(), x.sparse.begin(), x.sparse.end());
  const auto lookups = static_cast<std::uint32_t>(indices.size());
  const dlrm::batch_plan p = dlrm::plan_batch(layout, indices.data(), lookups);

  ASSERT_EQ(p.slot_indices.size(), indices.size());
  EXPECT_TRUE(std::adjacent_find(p.blocks.begin(), p.blocks.end(), std::greater_equal<>()) == p.blocks.end());
  std::vector<bool> used(p.blocks.size(), false);
  const std::uint32_t rpb = layout.rows_per_block;
  for (std::uint32_t i = 0; i < lookups; ++i) {
    const std::uint32_t slot = p.slot_indices[i] / rpb;
    ASSERT_LT(slot, p.blocks.size()) << "lookup " << i;
    EXPECT_EQ(p.blocks[slot], layout.first_block[i % layout.tables()] + indices[i] / rpb) << "lookup " << i;
    EXPECT_EQ(p.slot_indices[i] % rpb, indices[i] % rpb) << "lookup " << i;
    used[slot] = true;
  }
  EXPECT_TRUE(std::all_of(used.begin(), used.end(), [](bool u) { return u; })) << "a planned block no lookup needs";
  EXPECT_LT(p.blocks.size(), indices.size());  // Zipf lookups repeat blocks: the plan reads fewer
}

}  // namespace
}  // namespace agio::bench::criteo
