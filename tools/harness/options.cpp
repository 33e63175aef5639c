#include "harness/options.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

namespace agio::bench {
namespace {

std::invalid_argument bad_value(const std::string& k, const std::string& v, const char* want) {
  return std::invalid_argument("--" + k + ": '" + v + "' is not " + want);
}

double parse_number(const std::string& k, const std::string& v) {
  char* end = nullptr;
  errno = 0;
  const double d = std::strtod(v.c_str(), &end);
  if (v.empty() || end != v.c_str() + v.size() || errno == ERANGE || !std::isfinite(d))
    throw bad_value(k, v, "a number");
  return d;
}

}  // namespace

options::options(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0 || a.size() == 2)
      throw std::invalid_argument("unexpected argument '" + a + "' (options are --name value)");
    a = a.substr(2);
    const auto eq = a.find('=');
    if (eq != std::string::npos) {
      values_[a.substr(0, eq)] = a.substr(eq + 1);
    } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
      values_[a] = argv[++i];
    } else {
      // A switch. Moved in rather than assigned from the literal: GCC 12 at -O3 draws a false
      // -Wrestrict warning from string::operator=(const char*) here.
      values_.insert_or_assign(a, std::string(1, '1'));
    }
  }
}

bool options::flag(const std::string& k) const {
  used_[k] = true;
  const auto it = values_.find(k);
  if (it == values_.end()) return false;
  const std::string& v = it->second;
  if (v == "1" || v == "on" || v == "true" || v == "yes") return true;
  if (v == "0" || v == "off" || v == "false" || v == "no") return false;
  throw std::invalid_argument("--" + k + " is a switch: '" + v + "' is not on or off");
}

std::string options::get(const std::string& k, const std::string& fallback) const {
  used_[k] = true;
  const auto it = values_.find(k);
  return it == values_.end() ? fallback : it->second;
}

double options::number(const std::string& k, double fallback) const {
  used_[k] = true;
  const auto it = values_.find(k);
  return it == values_.end() ? fallback : parse_number(k, it->second);
}

std::uint64_t options::whole_number(const std::string& k, double max) const {
  const std::string v = get(k, "");
  const double d = parse_number(k, v);
  if (d < 0 || d != std::floor(d) || d > max) {
    throw bad_value(k, v, ("a whole number from 0 to " + std::to_string(static_cast<std::uint64_t>(max))).c_str());
  }
  return static_cast<std::uint64_t>(d);
}

std::uint64_t options::bytes(const std::string& k, const std::string& fallback) const {
  std::string v = get(k, fallback);
  double scale = 1;
  if (!v.empty()) {
    switch (v.back()) {
      case 'K':
      case 'k': scale = 1ull << 10; break;
      case 'M':
      case 'm': scale = 1ull << 20; break;
      case 'G':
      case 'g': scale = 1ull << 30; break;
      case 'T':
      case 't': scale = 1ull << 40; break;
      default: break;
    }
  }
  const std::string digits = scale == 1 ? v : v.substr(0, v.size() - 1);
  double n = 0;
  try {
    n = parse_number(k, digits);
  } catch (const std::invalid_argument&) {
    throw bad_value(k, v, "a size (4096, 64K, 64M, 1G)");
  }
  if (n < 0 || n * scale >= 18446744073709551616.0) throw bad_value(k, v, "a size (4096, 64K, 64M, 1G)");
  return static_cast<std::uint64_t>(n * scale);
}

std::vector<std::string> options::list(const std::string& k, const std::string& fallback) const {
  std::vector<std::string> out;
  const std::string v = get(k, fallback);
  std::size_t start = 0;
  while (start <= v.size()) {
    const auto comma = v.find(',', start);
    const std::string item = v.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (!item.empty()) out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::vector<std::uint64_t> options::numbers(const std::string& k, const std::string& fallback) const {
  std::vector<std::uint64_t> out;
  for (const auto& s : list(k, fallback)) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long n = std::strtoull(s.c_str(), &end, 10);
    if (s.empty() || s[0] == '-' || end != s.c_str() + s.size() || errno == ERANGE) {
      throw bad_value(k, s, "a whole number (a list is written 1,2,3)");
    }
    out.push_back(n);
  }
  return out;
}

void options::reject_unknown() const {
  for (const auto& [k, v] : values_) {
    if (!used_.count(k)) throw std::invalid_argument("unknown option --" + k);
  }
}

bool wants_help(int argc, char** argv, int first) {
  for (int i = first; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "-h" || a == "--help") return true;
  }
  return false;
}

}  // namespace agio::bench
