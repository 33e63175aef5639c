#pragma once
// `agio soak`: the cache's shadow model (tools/harness/shadow_run.hpp) at scale, with faults.
namespace agio::tools {
int soak_main(int argc, char** argv, int first);
}
