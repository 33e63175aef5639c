#pragma once
// Command-line options of the form --name=value or --name value, and list values "a,b,c".
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace agio::bench {

class options {
 public:
  options(int argc, char** argv, int first) {
    for (int i = first; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument '" + a + "'");
      a = a.substr(2);
      const auto eq = a.find('=');
      if (eq != std::string::npos) {
        values_[a.substr(0, eq)] = a.substr(eq + 1);
      } else if (i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0) {
        values_[a] = argv[++i];
      } else {
        values_[a] = "1";
      }
    }
  }
  bool has(const std::string& k) const { return values_.count(k) != 0; }
  // A switch such as --full: present or not.
  bool flag(const std::string& k) const {
    used_[k] = true;
    return has(k);
  }
  std::string get(const std::string& k, const std::string& fallback) const {
    used_[k] = true;
    auto it = values_.find(k);
    return it == values_.end() ? fallback : it->second;
  }
  double number(const std::string& k, double fallback) const {
    return has(k) ? std::stod(get(k, "")) : (used_[k] = true, fallback);
  }
  std::vector<std::string> list(const std::string& k, const std::string& fallback) const {
    std::vector<std::string> out;
    std::string v = get(k, fallback);
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
  std::vector<std::uint64_t> numbers(const std::string& k, const std::string& fallback) const {
    std::vector<std::uint64_t> out;
    for (const auto& s : list(k, fallback)) out.push_back(std::stoull(s));
    return out;
  }
  // Throws for options nobody asked for: a typo must not silently fall back to a default.
  void reject_unknown() const {
    for (const auto& [k, v] : values_) {
      if (!used_.count(k)) throw std::invalid_argument("unknown option --" + k);
    }
  }

 private:
  std::map<std::string, std::string> values_;
  mutable std::map<std::string, bool> used_;
};

}  // namespace agio::bench
