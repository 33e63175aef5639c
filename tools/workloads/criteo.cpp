// Criteo-shaped samples and the click-log text format: see criteo.hpp.
#include "workloads/criteo.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <istream>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <system_error>

#include "harness/mix.hpp"

namespace agio::bench::criteo {
namespace {

constexpr std::size_t fields = 1 + dense_features + sparse_features;

// DLRM's transform of a count, the one place both the generator and the loader compute it, so a
// written and reloaded sample compares equal.
float dense_value(std::int64_t count) {
  return static_cast<float>(std::log1p(static_cast<double>(std::max<std::int64_t>(count, 0))));
}

// The count to write for dense value d: an integer whose dense_value is d exactly when there is
// one. expm1 of the rounded float can be off by about one for counts near 2^24 / d, hence the
// look around; beyond that, neighbouring counts share d and the nearest does.
std::int64_t count_of(float d) {
  if (!(d > 0)) return 0;
  const double guess = std::expm1(static_cast<double>(d));
  if (!(guess < 9.0e18)) return std::numeric_limits<std::int64_t>::max();
  const std::int64_t x = std::llround(guess);
  for (const std::int64_t off : {0, -1, 1, -2, 2})
    if (x + off >= 0 && dense_value(x + off) == d) return x + off;
  return x;
}

// Per integer feature: how often it is missing and the scale of its Lomax tail (about its
// median count). Rough magnitudes of Criteo's I1..I13, not a fit.
struct dense_law {
  double missing;
  double scale;
};
constexpr std::array<dense_law, dense_features> dense_laws{{{0.45, 1.5},
                                                            {0.0, 4},
                                                            {0.21, 10},
                                                            {0.22, 4},
                                                            {0.03, 2000},
                                                            {0.22, 30},
                                                            {0.04, 3},
                                                            {0.0005, 8},
                                                            {0.04, 30},
                                                            {0.45, 0.5},
                                                            {0.04, 1.5},
                                                            {0.77, 0.5},
                                                            {0.22, 4}}};
constexpr double dense_tail = 1.2;          // Lomax shape: a power-law tail of exponent 1.2
constexpr double dense_max = 2147483647.0;  // counts stay in Criteo's 32-bit range

void check_vocab(const std::vector<std::uint32_t>& vocab) {
  if (vocab.size() != sparse_features)
    throw std::invalid_argument("criteo: need " + std::to_string(sparse_features) + " vocabulary sizes, got " +
                                std::to_string(vocab.size()));
  for (const std::uint32_t v : vocab)
    if (v == 0) throw std::invalid_argument("criteo: a vocabulary size is 0");
}

std::string field_name(std::size_t field) {
  if (field == 0) return "label";
  if (field <= dense_features) return "I" + std::to_string(field);
  return "C" + std::to_string(field - dense_features);
}

}  // namespace

std::vector<std::uint32_t> criteo_vocab_sizes(double scale, std::uint32_t cap) {
  if (!(scale > 0) || !std::isfinite(scale)) throw std::invalid_argument("criteo_vocab_sizes: scale must be positive");
  if (cap == 0) throw std::invalid_argument("criteo_vocab_sizes: cap must be at least 1");
  std::vector<std::uint32_t> out;
  for (const std::uint32_t original : terabyte_cardinalities) {
    const double floor = original >= 2 ? 2 : 1;
    const double v = std::clamp(std::round(original * scale), floor, static_cast<double>(cap));
    out.push_back(static_cast<std::uint32_t>(v));
  }
  return out;
}

// --- Zipf by rejection-inversion -------------------------------------------------------------
// The integral of h(x) = x^-exponent is inverted in closed form; a uniform draw under the
// integral picks x, rounded to rank k, accepted unless it fell in the sliver between h's
// integral and the histogram of 1/k^exponent (rare: most draws take one try). The helpers keep
// the closed forms accurate at exponent 1, where they would divide by 0.

namespace {
double helper1(double x) { return std::abs(x) > 1e-8 ? std::log1p(x) / x : 1 - x * (0.5 - x * (1.0 / 3 - 0.25 * x)); }
double helper2(double x) { return std::abs(x) > 1e-8 ? std::expm1(x) / x : 1 + x * 0.5 * (1 + x / 3 * (1 + 0.25 * x)); }
}  // namespace

double generator::zipf::h(double x) const { return std::exp(-exponent * std::log(x)); }

double generator::zipf::h_integral(double x) const {
  const double log_x = std::log(x);
  return helper2((1 - exponent) * log_x) * log_x;
}

double generator::zipf::h_integral_inverse(double x) const {
  const double t = std::max(x * (1 - exponent), -1.0);
  return std::exp(helper1(t) * x);
}

std::uint64_t generator::rank(const zipf& z) {
  for (;;) {
    const double u = z.h_integral_n + uniform() * (z.h_integral_x1 - z.h_integral_n);
    const double x = z.h_integral_inverse(u);
    const double k = std::clamp(std::floor(x + 0.5), 1.0, z.n);
    if (k - x <= z.s || u >= z.h_integral(k + 0.5) - z.h(k)) return static_cast<std::uint64_t>(k) - 1;
  }
}

// --- scatter: rank -> row ----------------------------------------------------------------------
// Adding a key, multiplying by an odd number and xor-shifting right are each bijections modulo a
// power of two; two rounds move neighbouring ranks far apart. Walking the cycle until the value
// is below n restricts the bijection to [0, n).

std::uint64_t generator::scatter::operator()(std::uint64_t rank) const {
  std::uint64_t x = rank;
  do {
    x = ((x + k0) * m0) & mask;
    x ^= x >> shift;
    x = ((x + k1) * m1) & mask;
    x ^= x >> shift;
  } while (x >= n);
  return x;
}

generator::generator(std::vector<std::uint32_t> vocab, double alpha, std::uint64_t seed)
    : vocab_(std::move(vocab)), alpha_(alpha), state_(mix64(seed ^ 0x5bd1e9955bd1e995ull)) {
  check_vocab(vocab_);
  if (!(alpha >= 0) || !std::isfinite(alpha)) throw std::invalid_argument("criteo::generator: alpha must be >= 0");
  for (std::size_t t = 0; t < vocab_.size(); ++t) {
    table_state tb;
    zipf& z = tb.ranks;
    z.n = vocab_[t];
    z.exponent = alpha;
    z.h_integral_x1 = z.h_integral(1.5) - 1;
    z.h_integral_n = z.h_integral(z.n + 0.5);
    z.s = 2 - z.h_integral_inverse(z.h_integral(2.5) - z.h(2));

    scatter& sc = tb.rows;
    unsigned bits = 1;
    while ((std::uint64_t{1} << bits) < vocab_[t]) ++bits;
    sc.n = vocab_[t];
    sc.mask = (std::uint64_t{1} << bits) - 1;
    sc.shift = (bits + 1) / 2;
    // Keyed by the table alone: the hot rows are a property of the table, not of the run.
    const std::uint64_t key = 0xc7ee0000ull + t;
    sc.k0 = mix64(key * 4 + 0);
    sc.k1 = mix64(key * 4 + 1);
    sc.m0 = mix64(key * 4 + 2) | 1;
    sc.m1 = mix64(key * 4 + 3) | 1;
    tables_.push_back(tb);
  }
}

double generator::uniform() {
  state_ += 0x9e3779b97f4a7c15ull;  // SplitMix64's Weyl sequence, finished by mix64
  return static_cast<double>(mix64(state_) >> 11) * 0x1p-53;
}

std::uint32_t generator::row(std::size_t table, std::uint64_t rank) const {
  return static_cast<std::uint32_t>(tables_.at(table).rows(rank));
}

std::uint32_t generator::draw(std::size_t table) {
  const table_state& tb = tables_.at(table);
  return static_cast<std::uint32_t>(tb.rows(rank(tb.ranks)));
}

sample generator::next() {
  sample s;
  s.label = uniform() < positive_rate ? 1.0f : 0.0f;
  for (std::size_t i = 0; i < dense_features; ++i) {
    const dense_law& law = dense_laws[i];
    const double u = uniform();
    if (u < law.missing) {
      s.dense[i] = 0;
      continue;
    }
    // Reuse u's remainder above the missing rate: one draw per feature. 1 - v is in (0, 1].
    const double v = (u - law.missing) / (1 - law.missing);
    const double count = std::min(std::floor(law.scale * (std::pow(1 - v, -1 / dense_tail) - 1)), dense_max);
    s.dense[i] = dense_value(static_cast<std::int64_t>(count));
  }
  for (std::size_t t = 0; t < sparse_features; ++t) s.sparse[t] = draw(t);
  return s;
}

void generator::fill(std::span<sample> out) {
  for (sample& s : out) s = next();
}

// --- text format ----------------------------------------------------------------------------

void write_tsv(std::ostream& out, std::span<const sample> samples) {
  std::string line;
  char buf[24];
  for (const sample& s : samples) {
    line.clear();
    line.push_back(s.label > 0.5f ? '1' : '0');
    for (const float d : s.dense) {
      line.push_back('\t');
      const auto r = std::to_chars(buf, buf + sizeof buf, count_of(d));
      line.append(buf, r.ptr);
    }
    for (const std::uint32_t c : s.sparse) {
      line.push_back('\t');
      const auto r = std::to_chars(buf, buf + sizeof buf, c, 16);
      line.append(8 - static_cast<std::size_t>(r.ptr - buf), '0');  // Criteo's fixed 8 digits
      line.append(buf, r.ptr);
    }
    line.push_back('\n');
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
  }
  if (!out) throw std::runtime_error("criteo::write_tsv: write failed");
}

tsv_loader::tsv_loader(std::istream& in, std::vector<std::uint32_t> vocab) : in_(&in), vocab_(std::move(vocab)) {
  check_vocab(vocab_);
}

tsv_loader::tsv_loader(const std::filesystem::path& file, std::vector<std::uint32_t> vocab)
    : owned_(std::make_unique<std::ifstream>(file, std::ios::binary)), in_(owned_.get()), vocab_(std::move(vocab)) {
  check_vocab(vocab_);
  if (!*owned_) throw std::runtime_error("criteo::tsv_loader: cannot open " + file.string());
}

std::size_t tsv_loader::read(std::span<sample> out) {
  std::size_t n = 0;
  while (n < out.size() && std::getline(*in_, line_)) {
    ++line_no_;
    if (!line_.empty() && line_.back() == '\r') line_.pop_back();  // files written on Windows
    parse(out[n++]);
  }
  if (in_->bad()) throw std::runtime_error("criteo::tsv_loader: read error after line " + std::to_string(line_no_));
  return n;
}

void tsv_loader::fail(std::size_t field, std::string_view text, std::string_view why) const {
  std::string message = "criteo tsv line " + std::to_string(line_no_);
  message.append(", field ").append(field_name(field)).append(": '").append(text).append("' ").append(why);
  throw std::runtime_error(message);
}

void tsv_loader::parse(sample& s) const {
  std::size_t count = 1;
  for (const char c : line_) count += c == '\t';
  if (count != fields)
    throw std::runtime_error("criteo tsv line " + std::to_string(line_no_) + ": " + std::to_string(count) +
                             " tab-separated fields, expected " + std::to_string(fields));

  const char* p = line_.data();
  const char* const end = p + line_.size();
  for (std::size_t f = 0; f < fields; ++f) {
    const char* stop = std::find(p, end, '\t');
    const std::string_view text(p, static_cast<std::size_t>(stop - p));
    if (f == 0) {
      if (text != "0" && text != "1") fail(f, text, "is not 0 or 1");
      s.label = text == "1" ? 1.0f : 0.0f;
    } else if (f <= dense_features) {
      std::int64_t v = 0;
      if (!text.empty()) {
        const auto r = std::from_chars(p, stop, v);
        if (r.ec != std::errc{} || r.ptr != stop) fail(f, text, "is not an integer");
      }
      s.dense[f - 1] = dense_value(v);
    } else {
      std::uint64_t v = 0;
      if (!text.empty()) {
        const auto r = std::from_chars(p, stop, v, 16);
        if (r.ec != std::errc{} || r.ptr != stop || text.size() > 16) fail(f, text, "is not a hex value");
      }
      const std::size_t t = f - 1 - dense_features;
      s.sparse[t] = static_cast<std::uint32_t>(v % vocab_[t]);
    }
    p = stop + 1;
  }
}

}  // namespace agio::bench::criteo
