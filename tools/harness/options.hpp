#pragma once
// Command-line options of the form --name=value or --name value, and list values "a,b,c",
// read lazily by the command that owns them. A value that does not parse and an option the
// command never asked for are errors that name the option (std::invalid_argument).
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

namespace agio::bench {

class options {
 public:
  options(int argc, char** argv, int first);

  bool has(const std::string& k) const { return values_.count(k) != 0; }
  // A switch such as --full: present or not (--full=0 or --full=off turn it off).
  bool flag(const std::string& k) const;
  std::string get(const std::string& k, const std::string& fallback) const;
  // A number; "--name: 'x' is not a number" otherwise.
  double number(const std::string& k, double fallback) const;
  // A size in bytes: "4096", "64K", "64M", "1G" (binary multiples); fractions allowed ("1.5G").
  std::uint64_t bytes(const std::string& k, const std::string& fallback) const;
  // A whole number from 0 to T's largest; "--name: 'x' is not a whole number ..." otherwise.
  template <class T>
  T whole(const std::string& k, T fallback) const {
    return has(k) ? static_cast<T>(whole_number(k, static_cast<double>(std::numeric_limits<T>::max())))
                  : (used_[k] = true, fallback);
  }
  std::vector<std::string> list(const std::string& k, const std::string& fallback) const;
  std::vector<std::uint64_t> numbers(const std::string& k, const std::string& fallback) const;
  // Throws for options nobody asked for: a typo must not silently fall back to a default.
  void reject_unknown() const;

 private:
  std::uint64_t whole_number(const std::string& k, double max) const;
  std::map<std::string, std::string> values_;
  mutable std::map<std::string, bool> used_;
};

// True when an argument from `first` on asks for help (-h or --help).
bool wants_help(int argc, char** argv, int first);

}  // namespace agio::bench
