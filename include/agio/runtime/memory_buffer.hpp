#pragma once
// LMB's memory buffer (the LMB paper's allocate / free / share interface) over pinned host
// memory: regions that a runtime's stores and its GPU kernels both address. A store reads a
// block into a region with no bounce copy (the controller reaches host memory directly) and a
// kernel reads it there over PCIe: LMB's zero-copy path from an SSD to an accelerator. Bound
// to a NUMA node, the buffer is in that node's memory: a CXL expander's, where there is one
// (CXL memory appears to Linux as a node without CPUs).
//
// Each region is a memory object of its own (a memfd). Sharing a region hands out that object:
// the runtime or process it is shared with maps that region alone and registers it alone, so
// its stores and kernels reach nothing else of the buffer (a request into any other memory is
// refused with a data transfer error, as for any memory not registered with its runtime).
//
//   agio::memory_buffer buffer(rt, 1 << 30);                // 1 GiB for regions (a node: 3rd argument)
//   agio::host_region r = buffer.allocate(1 << 20);         // zeroed; r.data for stores and kernels
//   io.read(0, lba, blocks, r.data);                        // GPU or CPU thread: straight into it
//   agio::shared_region view(rt2, buffer.descriptor(r.id)); // another runtime of this process
//   // Another process: send buffer.descriptor(r.id) over a Unix socket (SCM_RIGHTS; Python:
//   // socket.send_fds), and there: agio::shared_region view(its_runtime, received_descriptor).
//   buffer.free(r.id);
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "agio/runtime/runtime.hpp"

namespace agio {

// A region as the runtime that allocated it sees it.
struct host_region {
  std::uint64_t id = 0;
  void* data = nullptr;  // host address; the runtime's GPU kernels address it with the same pointer
  std::size_t bytes = 0;
};

class memory_buffer {
 public:
  // Up to `capacity_bytes` of regions for runtime `rt` (which must outlive the buffer), bound
  // to NUMA node `numa_node` (-1: wherever the kernel places it).
  memory_buffer(runtime& rt, std::size_t capacity_bytes, int numa_node = -1);
  // Frees the regions still allocated; a runtime or process they were shared with keeps its own
  // mapping until it lets go of it.
  ~memory_buffer();
  memory_buffer(const memory_buffer&) = delete;
  memory_buffer& operator=(const memory_buffer&) = delete;

  // A zeroed region of `bytes`, rounded up to whole pages, mapped into rt's GPU and registered
  // for its I/O. Throws std::length_error when the buffer has not that much left (naming what
  // was asked and what is free), std::invalid_argument for 0 bytes, std::system_error when the
  // kernel refuses the memory.
  host_region allocate(std::size_t bytes);
  // Gives the region back. std::invalid_argument for an id this buffer has not allocated.
  void free(std::uint64_t id);
  host_region region(std::uint64_t id) const;
  // The region's memory object, a file descriptor the buffer keeps open (close-on-exec) until
  // free(): what shared_region maps, here or in another process once handed over.
  int descriptor(std::uint64_t id) const;

  std::size_t capacity() const { return capacity_; }
  std::size_t used() const;
  int numa_node() const { return numa_node_; }
  runtime& owner() const { return rt_; }  // the runtime its regions are registered with

 private:
  struct entry {
    host_region region;
    int descriptor = -1;
  };
  const entry& find(std::uint64_t id) const;  // with mutex_ held
  void release(const entry& e);

  runtime& rt_;
  std::size_t capacity_;
  int numa_node_;
  mutable std::mutex mutex_;
  std::uint64_t last_id_ = 0;
  std::size_t used_ = 0;
  std::map<std::uint64_t, entry> regions_;
};

// LMB's share: a region of a memory buffer mapped for runtime `rt`, of this process or of
// another one that was handed the region's descriptor. Only that region is mapped and
// registered with `rt`: its stores read into data() with no bounce copy and its kernels read
// data(), and every mapping of the region holds the same bytes. `rt` must outlive it.
class shared_region {
 public:
  // `descriptor` stays the caller's (this keeps a mapping, not the descriptor). Throws
  // std::system_error when it names no memory that can be mapped.
  shared_region(runtime& rt, int descriptor);
  ~shared_region();
  shared_region(const shared_region&) = delete;
  shared_region& operator=(const shared_region&) = delete;

  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  runtime& rt_;
  std::size_t bytes_ = 0;
  void* data_ = nullptr;
};

}  // namespace agio
