// Reading the host's NUMA nodes from sysfs (host_memory_nodes.hpp).
#include "agio/runtime/host_memory_nodes.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

namespace agio {
namespace {

// A meminfo line's value in bytes: "Node 0 MemTotal:       24576000 kB" for key "MemTotal".
bool meminfo_bytes(const std::string& line, const std::string& key, std::uint64_t& bytes) {
  const auto at = line.find(key + ":");
  if (at == std::string::npos) return false;
  std::istringstream rest(line.substr(at + key.size() + 1));
  std::uint64_t value = 0;
  std::string unit;
  if (!(rest >> value)) return false;
  rest >> unit;
  bytes = unit == "kB" ? value * 1024 : value;
  return true;
}

// N of a folder named "nodeN", or -1 for any other name.
int node_id(const std::string& name) {
  if (name.size() <= 4 || name.compare(0, 4, "node") != 0) return -1;
  int id = -1;
  const char* first = name.data() + 4;
  const char* last = name.data() + name.size();
  const auto [end, error] = std::from_chars(first, last, id);
  return error == std::errc{} && end == last ? id : -1;
}

}  // namespace

std::vector<host_memory_node> host_memory_nodes(const std::string& sysfs_node_dir) {
  namespace fs = std::filesystem;
  std::vector<host_memory_node> nodes;
  std::error_code missing;
  for (const fs::directory_entry& entry : fs::directory_iterator(sysfs_node_dir, missing)) {
    const int id = node_id(entry.path().filename().string());
    if (id < 0) continue;
    const fs::path meminfo_path = entry.path() / "meminfo";
    std::ifstream meminfo(meminfo_path);
    if (!meminfo) continue;
    host_memory_node node;
    node.id = id;
    bool total = false;
    bool free = false;
    for (std::string line; std::getline(meminfo, line);) {
      total = total || meminfo_bytes(line, "MemTotal", node.total_bytes);
      free = free || meminfo_bytes(line, "MemFree", node.free_bytes);
    }
    if (!total || !free) throw std::runtime_error("agio: " + meminfo_path.string() + " lacks MemTotal or MemFree");
    std::ifstream cpulist(entry.path() / "cpulist");
    std::getline(cpulist, node.cpus);
    nodes.push_back(node);
  }
  std::sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return nodes;
}

}  // namespace agio
