// LMB's memory buffer: regions of pinned host memory, each a memfd of its own (memory_buffer.hpp).
#include "agio/runtime/memory_buffer.hpp"

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <stdexcept>
#include <string>
#include <system_error>

namespace agio {
namespace {

std::size_t whole_pages(std::size_t bytes) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

}  // namespace

memory_buffer::memory_buffer(runtime& rt, std::size_t capacity_bytes, int numa_node)
    : rt_(rt), capacity_(capacity_bytes), numa_node_(numa_node) {
  if (numa_node < -1) throw std::invalid_argument("agio: memory buffer: NUMA node " + std::to_string(numa_node));
}

memory_buffer::~memory_buffer() {
  for (const auto& [id, e] : regions_) release(e);
}

host_region memory_buffer::allocate(std::size_t bytes) {
  if (bytes == 0) throw std::invalid_argument("agio: memory buffer: a region of 0 bytes");
  const std::size_t size = whole_pages(bytes);
  std::lock_guard lock(mutex_);
  if (size > capacity_ - used_) {
    throw std::length_error("agio: memory buffer: " + std::to_string(size) + " bytes asked, " +
                            std::to_string(capacity_ - used_) + " of " + std::to_string(capacity_) + " free");
  }
  const std::uint64_t id = last_id_ + 1;
  const int fd = ::memfd_create(("agio-region-" + std::to_string(id)).c_str(), MFD_CLOEXEC);
  if (fd < 0) throw std::system_error(errno, std::generic_category(), "agio: memory buffer: memfd_create");
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    throw std::system_error(err, std::generic_category(),
                            "agio: memory buffer: a region of " + std::to_string(size) + " bytes");
  }
  void* data = nullptr;
  try {
    data = rt_.map_host(fd, size, numa_node_);
  } catch (...) {
    ::close(fd);
    throw;
  }
  last_id_ = id;
  used_ += size;
  const host_region r{id, data, size};
  regions_.emplace(id, entry{r, fd});
  return r;
}

void memory_buffer::free(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  const entry e = find(id);
  regions_.erase(id);
  used_ -= e.region.bytes;
  release(e);
}

host_region memory_buffer::region(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  return find(id).region;
}

int memory_buffer::descriptor(std::uint64_t id) const {
  std::lock_guard lock(mutex_);
  return find(id).descriptor;
}

std::size_t memory_buffer::used() const {
  std::lock_guard lock(mutex_);
  return used_;
}

const memory_buffer::entry& memory_buffer::find(std::uint64_t id) const {
  const auto it = regions_.find(id);
  if (it == regions_.end()) {
    throw std::invalid_argument("agio: memory buffer: no region " + std::to_string(id) +
                                " (never allocated, or freed)");
  }
  return it->second;
}

void memory_buffer::release(const entry& e) {
  rt_.free(e.region.data);
  ::close(e.descriptor);
}

shared_region::shared_region(runtime& rt, int descriptor) : rt_(rt) {
  struct stat about {};
  if (::fstat(descriptor, &about) != 0) {
    throw std::system_error(errno, std::generic_category(),
                            "agio: shared region: descriptor " + std::to_string(descriptor));
  }
  if (about.st_size <= 0) {
    throw std::invalid_argument("agio: shared region: descriptor " + std::to_string(descriptor) +
                                " names no memory (size 0)");
  }
  bytes_ = static_cast<std::size_t>(about.st_size);
  data_ = rt_.map_host(descriptor, bytes_);
}

shared_region::~shared_region() { rt_.free(data_); }

}  // namespace agio
