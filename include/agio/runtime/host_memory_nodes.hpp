#pragma once
// The host's NUMA nodes that hold memory, as Linux reports them under /sys/devices/system/node:
// where a host tier may be bound (cache_options::numa_node). A CXL memory expander appears as a
// node with memory and no CPUs.
#include <cstdint>
#include <string>
#include <vector>

namespace agio {

struct host_memory_node {
  int id = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t free_bytes = 0;
  std::string cpus;  // the kernel's CPU list ("0-15,32-47"); empty for a memory-only node

  bool memory_only() const { return cpus.empty(); }
};

// Every nodeN folder of `sysfs_node_dir` with a readable meminfo, by id. Empty where the folder
// does not exist (a kernel without NUMA: all host memory is one node, node 0 to mbind). Throws
// std::runtime_error naming the file when a meminfo lacks MemTotal or MemFree.
std::vector<host_memory_node> host_memory_nodes(const std::string& sysfs_node_dir = "/sys/devices/system/node");

}  // namespace agio
