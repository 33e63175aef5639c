#pragma once
// The GPUs this build of agio can use and their memory: where a cache's lines live
// (cache_options::bytes), the level above a host tier (host_memory_nodes.hpp) and the stores.
#include <cstdint>
#include <string>
#include <vector>

namespace agio {

struct gpu_memory {
  int index = 0;  // the CUDA device ordinal
  std::string name;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
};

// Every GPU CUDA reports, by ordinal. Empty in a build without a GPU backend and on a machine
// where CUDA finds no GPU. Makes a context on each GPU to read its free memory; the calling
// thread's current device is left as it was. Throws std::runtime_error naming the call when
// CUDA fails on a GPU it reported.
std::vector<gpu_memory> gpu_memories();

}  // namespace agio
