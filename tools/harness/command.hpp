#pragma once
// The subcommands of a program (agio, agio-eval): dispatch on the leading words, one usage
// text for `PROGRAM -h`, `PROGRAM --help` and `PROGRAM help` (stdout, exit 0), each command's
// own for `PROGRAM COMMAND -h|--help`, and errors that name the command: an option error
// (std::invalid_argument) exits 2 and points at the command's help, any other failure exits 1.
#include <string>
#include <vector>

namespace agio::bench {

struct command {
  std::string name;                               // one or more words: "demo", "bench io"
  std::string synopsis;                           // its options, as printed after the name
  std::string summary;                            // what it does, one or more lines
  int (*main)(int argc, char** argv, int first);  // parses argv[first..] (options only)
  bool listed = true;                             // false for an alias kept for old scripts
};

int run_command_line(const std::string& program, const std::string& about, const std::vector<command>& commands,
                     int argc, char** argv);

}  // namespace agio::bench
