#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "soak.hpp"

namespace agio::tools {

bench::command soak_command(int (*main)(int argc, char** argv, int first)) {
  return {"soak",
          "[--quick] [--backend cpu|gpu|auto] [--ops N] [--seconds S] [--threads N] [--faults on|off] [--cycles N]\n"
          "       [--dir DIR] [--json FILE]",
          "cache soak test against a shadow model\n"
          "Mixed cache operations from many threads against a shadow model, small and large caches, store\n"
          "faults, stop/restart cycles; fails on a wrong value, a lost acknowledged write or a fault not\n"
          "surfaced. Its store files go in DIR (default: the temp directory), each removed after its run.\n"
          "Runs agio-soak, built beside agio (target agio_soak).",
          main};
}

int run_soak_program(int argc, char** argv, int first) {
  const std::filesystem::path program = std::filesystem::read_symlink("/proc/self/exe").parent_path() / "agio-soak";
  if (!std::filesystem::exists(program)) {
    throw std::runtime_error("agio soak runs " + program.string() +
                             ", which is not built (cmake --build BUILD --target agio_soak)");
  }
  std::vector<char*> args{const_cast<char*>(program.c_str())};
  for (int i = first; i < argc; ++i) args.push_back(argv[i]);
  args.push_back(nullptr);
  ::execv(program.c_str(), args.data());
  throw std::system_error(errno, std::generic_category(), "cannot run " + program.string());
}

}  // namespace agio::tools
