// agio info URI: opens a store as it is (never creating or resizing a file) and prints its size
// and block size. agio info: the memory tiers a cache can use: each GPU's memory (the cache) and
// the host's NUMA nodes (where a host tier's memory can be bound).
#include "info.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "agio/runtime/gpu_memory.hpp"
#include "agio/runtime/host_memory_nodes.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/store/store_uri.hpp"

namespace agio::tools {
namespace {

double gib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1ull << 30); }

void print_gpu_memory() {
  const std::vector<gpu_memory> gpus = gpu_memories();
  if (gpus.empty()) {
    std::printf(
        "GPU memory: no GPU this build of agio can use (a cache then lives in host memory, run by CPU threads)\n");
    return;
  }
  std::printf("GPU memory for the cache (cache_options::bytes, Python cache_bytes):\n");
  for (const gpu_memory& g : gpus) {
    std::printf("  GPU %d: %s, %.1f GiB, %.1f GiB free\n", g.index, g.name.c_str(), gib(g.total_bytes),
                gib(g.free_bytes));
  }
}

void print_host_memory() {
  const std::vector<host_memory_node> nodes = host_memory_nodes();
  if (nodes.empty()) {
    std::printf("host memory: this kernel reports no NUMA nodes (all of it is node 0 to a host tier)\n");
    return;
  }
  std::printf("host memory for a host tier (cache_options::numa_node, Python host_tier_numa_node):\n");
  for (const host_memory_node& n : nodes) {
    std::printf("  node %d: %.1f GiB, %.1f GiB free, %s\n", n.id, gib(n.total_bytes), gib(n.free_bytes),
                n.memory_only() ? "no CPUs (memory only, as a CXL expander appears)" : ("CPUs " + n.cpus).c_str());
  }
}

}  // namespace

int info_main(int argc, char** argv, int first) {
  if (argc == first) {
    print_gpu_memory();
    print_host_memory();
    return 0;
  }
  if (argc - first != 1 || std::string(argv[first]).rfind("--", 0) == 0) {
    throw std::invalid_argument(
        "give one store URI (file:PATH or ram:SIZE), e.g. agio info file:/data/store.bin, or none for the "
        "memory a cache and a host tier can use");
  }
  const std::string uri = argv[first];
  // Looking must not change anything: a create= would make or grow the file.
  if (parse_store_uri(uri).options.create_bytes) {
    throw std::invalid_argument("info opens existing stores only and never creates one: drop create= from '" + uri +
                                "'");
  }
  runtime_options opt;
  opt.backend = backend::cpu;  // looking needs no GPU
  runtime rt(opt);
  rt.attach(uri);
  for (const auto& d : rt.devices()) {
    std::printf("%s: %llu blocks of %u bytes (%.1f MiB)\n", d.uri.c_str(),
                static_cast<unsigned long long>(d.capacity_blocks), d.lba_bytes,
                static_cast<double>(d.capacity_blocks) * d.lba_bytes / (1 << 20));
  }
  return 0;
}

}  // namespace agio::tools
