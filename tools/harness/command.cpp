#include "harness/command.hpp"

#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>

#include "harness/options.hpp"

namespace agio::bench {
namespace {

std::vector<std::string> words_of(const std::string& name) {
  std::istringstream in(name);
  std::vector<std::string> w;
  for (std::string s; in >> s;) w.push_back(s);
  return w;
}

// Arguments argv[1..] that spell `name`'s words.
bool names(const std::string& name, int argc, char** argv) {
  const auto w = words_of(name);
  if (static_cast<int>(w.size()) >= argc) return false;
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] != argv[i + 1]) return false;
  }
  return true;
}

void print_usage(std::FILE* to, const std::string& program, const command& c) {
  std::fprintf(to, "usage: %s %s %s\n", program.c_str(), c.name.c_str(), c.synopsis.c_str());
  std::fprintf(to, "%s\n", c.summary.c_str());
}

// Every listed command whose name starts with `prefix` ("" for all).
void print_list(std::FILE* to, const std::string& program, const std::string& about,
                const std::vector<command>& commands, const std::string& prefix) {
  std::fprintf(to, "usage: %s <command> [options]   (%s <command> --help for its options)\n%s\n\ncommands:\n",
               program.c_str(), program.c_str(), about.c_str());
  for (const command& c : commands) {
    if (!c.listed || c.name.rfind(prefix, 0) != 0) continue;
    std::string first_line = c.summary.substr(0, c.summary.find('\n'));
    std::fprintf(to, "  %-18s %s\n", c.name.c_str(), first_line.c_str());
  }
}

}  // namespace

int run_command_line(const std::string& program, const std::string& about, const std::vector<command>& commands,
                     int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (first == "-h" || first == "--help" || first == "help") {
    print_list(stdout, program, about, commands, "");
    return 0;
  }
  // The longest name the arguments spell ("bench io" before a command named "bench").
  const command* chosen = nullptr;
  for (const command& c : commands) {
    if (names(c.name, argc, argv) && (chosen == nullptr || c.name.size() > chosen->name.size())) chosen = &c;
  }
  if (chosen == nullptr) {
    // A group's first word alone ("agio bench"): list the group.
    const std::string group = first + " ";
    bool is_group = !first.empty();
    if (is_group) {
      is_group = false;
      for (const command& c : commands) is_group = is_group || (c.listed && c.name.rfind(group, 0) == 0);
    }
    if (is_group) {
      const bool help = wants_help(argc, argv, 2);
      print_list(help ? stdout : stderr, program, about, commands, group);
      return help ? 0 : 2;
    }
    if (!first.empty()) std::fprintf(stderr, "%s: unknown command '%s'\n", program.c_str(), first.c_str());
    print_list(stderr, program, about, commands, "");
    return 2;
  }
  const int skip = 1 + static_cast<int>(words_of(chosen->name).size());
  if (wants_help(argc, argv, skip)) {
    print_usage(stdout, program, *chosen);
    return 0;
  }
  const std::string who = program + " " + chosen->name;
  try {
    return chosen->main(argc, argv, skip);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s: %s\n(%s --help lists its options)\n", who.c_str(), e.what(), who.c_str());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", who.c_str(), e.what());
    return 1;
  }
}

}  // namespace agio::bench
