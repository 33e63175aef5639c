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
// The first `bytes` of the shareable memory object `descriptor` (a memfd), mapped shared: every
// mapping of the object, in this process or another, reads and writes the same pages. With
// `node` >= 0 they are bound to that node and zeroed (for an object nobody has written yet);
// with -1 they are left as they are. Throws as map_on_node, or std::system_error for a
// descriptor that cannot be mapped.
void* map_shared(int descriptor, std::size_t bytes, int node);
// Gives back either.
void unmap_host(void* p, std::size_t bytes);

}  // namespace agio
