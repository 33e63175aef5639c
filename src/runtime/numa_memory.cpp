#include "runtime/numa_memory.hpp"

#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

namespace agio {
namespace {
constexpr int mpol_bind = 2;            // MPOL_BIND (linux/mempolicy.h)
constexpr unsigned mpol_mf_strict = 1;  // MPOL_MF_STRICT: fail rather than place pages elsewhere

// Binds the mapping `p` to `node` and places every page there now; unmaps it on failure.
void bind_and_place(void* p, std::size_t bytes, int node) {
  constexpr std::size_t bits = 8 * sizeof(unsigned long);
  std::vector<unsigned long> mask(1024 / bits, 0);
  mask[static_cast<std::size_t>(node) / bits] |= 1ul << (static_cast<std::size_t>(node) % bits);
  if (::syscall(SYS_mbind, p, bytes, mpol_bind, mask.data(), 1024ul, mpol_mf_strict) != 0) {
    const int err = errno;
    ::munmap(p, bytes);
    throw std::system_error(err, std::generic_category(),
                            "agio: cannot bind host memory to NUMA node " + std::to_string(node));
  }
  std::memset(p, 0, bytes);  // places every page on the node now
}

void check_node(int node) {
  if (node < 0 || node >= 1024)
    throw std::invalid_argument("agio: NUMA node " + std::to_string(node) + " out of range");
}

}  // namespace

void* map_on_node(std::size_t bytes, int node) {
  check_node(node);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) throw std::system_error(errno, std::generic_category(), "agio: mmap of host memory");
  bind_and_place(p, bytes, node);
  return p;
}

void* map_shared(int descriptor, std::size_t bytes, int node) {
  if (node != -1) check_node(node);
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, descriptor, 0);
  if (p == MAP_FAILED) {
    throw std::system_error(errno, std::generic_category(),
                            "agio: mmap of shared host memory (descriptor " + std::to_string(descriptor) + ")");
  }
  if (node >= 0) bind_and_place(p, bytes, node);
  return p;
}

void unmap_host(void* p, std::size_t bytes) { ::munmap(p, bytes); }

}  // namespace agio
