// agio-soak: the program behind `agio soak` (soak.hpp says why it is one of its own). Takes the
// soak's options and answers as `agio soak` would.
#include <vector>

#include "harness/command.hpp"
#include "soak.hpp"

int main(int argc, char** argv) {
  std::vector<char*> args{argv[0], const_cast<char*>("soak")};
  for (int i = 1; i < argc; ++i) args.push_back(argv[i]);
  return agio::bench::run_command_line("agio", "agio: the cache soak test",
                                       {agio::tools::soak_command(agio::tools::soak_main)},
                                       static_cast<int>(args.size()), args.data());
}
