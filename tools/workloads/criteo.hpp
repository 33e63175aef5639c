#pragma once
// Criteo-shaped input for the DLRM inference benchmark (AGILE §4.4 runs on the Criteo 1TB click
// logs): a deterministic generator with Criteo's table sizes and skewed lookups, and the click
// logs' text format (write and stream-load), so the benchmark runs on real days of the logs
// where they are at hand and on generated data where they are not.
//
// Plain host C++: samples are made and parsed on the host, then copied to the device.
#include <array>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <iosfwd>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace agio::bench::criteo {

inline constexpr std::size_t dense_features = 13;
inline constexpr std::size_t sparse_features = 26;

// One click-log line, as DLRM consumes it: dense[i] = log(1 + max(I_i, 0)), sparse[i] a row of
// table i, already in [0, vocab[i]).
struct sample {
  float label = 0;
  std::array<float, dense_features> dense{};
  std::array<std::uint32_t, sparse_features> sparse{};
  friend bool operator==(const sample&, const sample&) = default;
};

// Rows per table of the Criteo 1TB logs as MLPerf's DLRM uses them (categories seen in the
// 24 days, hashed into at most 40 M rows).
inline constexpr std::array<std::uint32_t, sparse_features> terabyte_cardinalities{
    39884406, 39043, 17289, 7420, 20263, 3,  7120,     1543,     63,       38532951, 2953546, 403346, 10,
    2208,     11938, 155,   4,    976,   14, 39979771, 25641295, 39664984, 585935,   12972,   108,    36};

// terabyte_cardinalities scaled (rounded), each at least 1 (2 where the original has 2 or more:
// a table of two rows stays a choice), then capped at `cap`. Throws std::invalid_argument for
// a scale that is not positive and finite or a cap of 0.
std::vector<std::uint32_t> criteo_vocab_sizes(double scale = 1.0,
                                              std::uint32_t cap = std::numeric_limits<std::uint32_t>::max());

// Deterministic Criteo-like samples: the same (vocab, alpha, seed) gives the same sequence on
// every platform. Lookups into each table follow Zipf (P(rank k) ∝ 1/k^alpha, k = 1..vocab),
// sampled exactly by rejection-inversion (no per-row table, so 40 M-row tables cost nothing);
// rank k is row scatter(k), a fixed bijection per table that does not depend on the seed: the
// hot rows are the same rows in every run, spread over the whole table. Dense features are
// heavy-tailed counts (a Lomax law per feature, roughly Criteo's typical magnitudes and missing
// rates, not fitted), labels 1 with probability positive_rate.
class generator {
 public:
  static constexpr double positive_rate = 0.03;  // Criteo 1TB click-through ballpark

  // Throws std::invalid_argument unless vocab has sparse_features entries, each at least 1, and
  // alpha is finite and >= 0 (0: uniform lookups).
  explicit generator(std::vector<std::uint32_t> vocab, double alpha = 1.05, std::uint64_t seed = 1);

  sample next();
  void fill(std::span<sample> out);
  // One lookup into `table` alone, from the same stream (for traces of one table).
  std::uint32_t draw(std::size_t table);
  // The row that popularity rank `rank` (0 = hottest) of `table` lands on.
  std::uint32_t row(std::size_t table, std::uint64_t rank) const;

  const std::vector<std::uint32_t>& vocab() const { return vocab_; }
  double alpha() const { return alpha_; }

 private:
  // Rejection-inversion Zipf sampling (Hörmann and Derflinger 1996) over ranks 1..n.
  struct zipf {
    double n = 1, exponent = 0, h_integral_x1 = 0, h_integral_n = 0, s = 0;
    double h(double x) const;
    double h_integral(double x) const;
    double h_integral_inverse(double x) const;
  };
  // A bijection of [0, n): a keyed invertible mix on the smallest power of two >= n, walked
  // until it lands inside (fewer than 2 steps on average).
  struct scatter {
    std::uint64_t n = 1, mask = 1, k0 = 0, k1 = 0, m0 = 1, m1 = 1;
    unsigned shift = 1;
    std::uint64_t operator()(std::uint64_t rank) const;
  };
  struct table_state {
    zipf ranks;
    scatter rows;
  };

  double uniform();  // [0, 1), 53 bits
  std::uint64_t rank(const zipf& z);

  std::vector<std::uint32_t> vocab_;
  double alpha_;
  std::uint64_t state_;
  std::vector<table_state> tables_;
};

// Writes samples in the click-log format: label, I1..I13, C1..C26, tab-separated, one line each.
// I_i is the count whose log(1 + count) is dense[i] (the count of the generator or the loader);
// C_i is the row index in 8 hex digits, so tsv_loader maps it back to the same row. Throws
// std::runtime_error if the stream fails.
void write_tsv(std::ostream& out, std::span<const sample> samples);

// Reads click-log lines into samples, a batch at a time (files larger than memory stream
// through). Missing or negative I_i reads as 0; C_i is its hex value modulo vocab[i] (missing:
// 0). Lines must be exactly label (0 or 1), 13 integers and 26 hex values of at most 16 digits,
// tab-separated; anything else throws std::runtime_error naming the line and field, after which
// the loader is not to be used again.
class tsv_loader {
 public:
  // Throws std::invalid_argument unless vocab has sparse_features entries, each at least 1.
  tsv_loader(std::istream& in, std::vector<std::uint32_t> vocab);
  // Opens the file; throws std::runtime_error if it cannot.
  tsv_loader(const std::filesystem::path& file, std::vector<std::uint32_t> vocab);

  // Fills out from the next lines; returns how many, fewer than out.size() only at the end.
  std::size_t read(std::span<sample> out);
  std::uint64_t lines_read() const { return line_no_; }

 private:
  void parse(sample& s) const;
  [[noreturn]] void fail(std::size_t field, std::string_view text, std::string_view why) const;

  std::unique_ptr<std::istream> owned_;  // set when the loader opened the file itself
  std::istream* in_;
  std::vector<std::uint32_t> vocab_;
  std::string line_;
  std::uint64_t line_no_ = 0;
};

}  // namespace agio::bench::criteo
