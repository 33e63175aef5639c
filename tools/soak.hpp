#pragma once
// `agio soak`: the cache's shadow model (tools/harness/shadow_run.hpp) at scale, with faults.
// It is a program of its own, agio-soak, that `agio soak` hands over to: its GPU shadow kernels
// take nvcc minutes to compile, and a build of agio for the demo or for staging data should not
// wait for them.
#include "harness/command.hpp"

namespace agio::tools {

// The soak itself (soak.cpp, linked into agio-soak).
int soak_main(int argc, char** argv, int first);

// Replaces the process with agio-soak from agio's own folder, passing argv[first..] on
// (soak_launch.cpp, linked into agio). Throws when agio-soak is not there.
int run_soak_program(int argc, char** argv, int first);

// The soak's command-line entry, the same in both programs; `main` runs it.
bench::command soak_command(int (*main)(int argc, char** argv, int first));

}  // namespace agio::tools
