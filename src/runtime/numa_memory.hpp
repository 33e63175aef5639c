#pragma once
// Host memory bound to one NUMA node: CXL memory expanders appear to Linux as NUMA nodes
// without CPUs, so binding is how a host tier is placed in CXL memory. mmap and mbind (the
// system call: no libnuma needed), every page touched so that it is placed now.
#include <cstddef>

namespace agio {

// Zeroed, page-aligned memory of `bytes` on node `node`; throws std::system_error naming the
// node when the kernel refuses it (no such node, or no NUMA support), std::invalid_argument
// for a negative node or one beyond the 1024 the mask covers.
void* map_on_node(std::size_t bytes, int node);
void unmap_from_node(void* p, std::size_t bytes);

}  // namespace agio
