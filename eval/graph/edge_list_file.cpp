#include "graph/edge_list_file.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string_view>

#include "graph/csr_file.hpp"

namespace agio::bench::graph {
namespace {

// Walks a file line by line and words within a line; errors name the file and line.
class line_reader {
 public:
  explicit line_reader(const std::string& path) : path_(path), in_(path) {
    if (!in_) throw std::runtime_error(path + ": cannot open");
  }
  bool next() {
    if (!std::getline(in_, line_)) return false;
    ++number_;
    rest_ = line_;
    return true;
  }
  const std::string& line() const { return line_; }
  std::uint64_t number() const { return number_; }

  // The next whitespace-separated word of the line, empty at its end.
  std::string_view word() {
    const auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
    while (!rest_.empty() && space(rest_.front())) rest_.remove_prefix(1);
    std::size_t len = 0;
    while (len < rest_.size() && !space(rest_[len])) ++len;
    const std::string_view w = rest_.substr(0, len);
    rest_.remove_prefix(len);
    return w;
  }
  bool blank_or_comment(std::string_view comment_marks) {
    const std::string_view first = word();
    rest_ = line_;
    return first.empty() || comment_marks.find(first.front()) != std::string_view::npos;
  }

  std::uint64_t unsigned_word(const char* what) {
    const std::string_view w = word();
    if (w.empty()) fail(std::string("expected ") + what);
    std::uint64_t v = 0;
    for (const char c : w) {
      if (c < '0' || c > '9') fail(std::string(what) + " '" + std::string(w) + "' is not a non-negative integer");
      if (v > (~std::uint64_t{0} - 9) / 10) fail(std::string(what) + " '" + std::string(w) + "' is too large");
      v = v * 10 + static_cast<std::uint64_t>(c - '0');
    }
    return v;
  }
  float float_word(const char* what) { return parse_float(word(), what); }
  float parse_float(std::string_view w, const char* what) const {
    const std::string text(w);
    if (text.empty()) fail(std::string("expected ") + what);
    char* end = nullptr;
    errno = 0;
    const float v = std::strtof(text.c_str(), &end);
    if (end != text.c_str() + text.size() || errno == ERANGE)
      fail(std::string(what) + " '" + text + "' is not a number");
    return v;
  }
  void expect_end(const char* form) {
    if (!word().empty()) fail(std::string("extra words; expected ") + form);
  }

  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(path_ + ":" + std::to_string(number_) + ": " + what + " (line: '" + line_.substr(0, 80) +
                             "')");
  }
  [[noreturn]] void fail_file(const std::string& what) const { throw std::runtime_error(path_ + ": " + what); }

 private:
  std::string path_;
  std::ifstream in_;
  std::string line_;
  std::string_view rest_;
  std::uint64_t number_ = 0;
};

constexpr std::uint64_t max_vertices = 0xffffffffull;  // ids below 2^32 - 1, so n fits 32 bits

std::string lower(std::string_view w) {
  std::string s(w);
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

edge_list read_snap(line_reader& in) {
  edge_list e;
  std::uint64_t top = 0;
  bool any = false;
  do {
    if (in.blank_or_comment("#%")) continue;
    const std::uint64_t u = in.unsigned_word("source vertex");
    const std::uint64_t v = in.unsigned_word("target vertex");
    if (u >= max_vertices || v >= max_vertices) in.fail("vertex id past 2^32 - 2");
    const std::string_view w = in.word();
    const bool weighted = !w.empty();
    if (any && weighted != !e.weight.empty()) in.fail("some lines have a weight and others not");
    if (weighted) e.weight.push_back(in.parse_float(w, "weight"));
    in.expect_end("'u v' or 'u v w'");
    any = true;
    e.from.push_back(static_cast<std::uint32_t>(u));
    e.to.push_back(static_cast<std::uint32_t>(v));
    top = std::max({top, u + 1, v + 1});
  } while (in.next());
  e.n = static_cast<std::uint32_t>(top);
  return e;
}

edge_list read_matrix_market(line_reader& in) {
  in.word();  // the banner's "%%MatrixMarket"
  const std::string object = lower(in.word()), format = lower(in.word());
  const std::string field = lower(in.word()), symmetry = lower(in.word());
  if (object != "matrix") in.fail("Matrix Market object '" + object + "': only 'matrix' is a graph");
  if (format != "coordinate")
    in.fail("Matrix Market format '" + format + "': only sparse 'coordinate' files are graphs");
  if (field != "real" && field != "double" && field != "integer" && field != "pattern") {
    in.fail("Matrix Market field '" + field + "': real, double, integer or pattern");
  }
  if (symmetry != "general" && symmetry != "symmetric" && symmetry != "skew-symmetric") {
    in.fail("Matrix Market symmetry '" + symmetry + "': general, symmetric or skew-symmetric");
  }
  const bool valued = field != "pattern";
  bool sized = false;
  std::uint64_t rows = 0, cols = 0, entries = 0, seen = 0;
  edge_list e;
  while (in.next()) {
    if (in.blank_or_comment("%")) continue;
    if (!sized) {
      rows = in.unsigned_word("row count");
      cols = in.unsigned_word("column count");
      entries = in.unsigned_word("entry count");
      in.expect_end("'rows columns entries'");
      if (std::max(rows, cols) > max_vertices) in.fail("more than 2^32 - 1 rows or columns");
      e.n = static_cast<std::uint32_t>(std::max(rows, cols));
      sized = true;
      continue;
    }
    if (seen == entries) in.fail("more entries than the " + std::to_string(entries) + " the size line announced");
    const std::uint64_t i = in.unsigned_word("row index");
    const std::uint64_t j = in.unsigned_word("column index");
    if (i == 0 || i > rows || j == 0 || j > cols)
      in.fail("entry outside the 1-based " + std::to_string(rows) + " x " + std::to_string(cols) + " matrix");
    const float w = valued ? in.float_word("value") : 0.0f;
    in.expect_end(valued ? "'row column value'" : "'row column'");
    ++seen;
    const auto add = [&](std::uint64_t from, std::uint64_t to, float weight) {
      e.from.push_back(static_cast<std::uint32_t>(from - 1));
      e.to.push_back(static_cast<std::uint32_t>(to - 1));
      if (valued) e.weight.push_back(weight);
    };
    add(i, j, w);
    if (symmetry != "general" && i != j) add(j, i, symmetry == "skew-symmetric" ? -w : w);
  }
  if (!sized) in.fail_file("no 'rows columns entries' line");
  if (seen != entries)
    in.fail_file("ends after " + std::to_string(seen) + " of the " + std::to_string(entries) +
                 " entries the size line announced");
  return e;
}

}  // namespace

edge_list read_edge_list(const std::string& path) {
  line_reader in(path);
  if (!in.next()) in.fail_file("empty file");
  if (lower(in.line().substr(0, 14)) == "%%matrixmarket") return read_matrix_market(in);
  return read_snap(in);
}

csr read_graph_file(const std::string& path) {
  if (is_csr_file(path)) return read_csr_file(path);
  return build_csr(read_edge_list(path));
}

}  // namespace agio::bench::graph
