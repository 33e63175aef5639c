#pragma once
// The caller's buffers, registered with the runtime for as long as the extension may use them
// again: a call finds its buffer already registered (a training loop reads into the same tensor
// every step) and registers only what is new. Regions are never registered twice or overlapping:
// a buffer that overlaps idle regions (memory freed and handed out again in other sizes) replaces
// them with one region covering all; one that overlaps a region in use waits until that call ends.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "agio/runtime/runtime.hpp"

namespace agio::python {

class registrations {
 public:
  explicit registrations(runtime& rt) : rt_(rt) {}
  ~registrations();
  registrations(const registrations&) = delete;
  registrations& operator=(const registrations&) = delete;

  // Makes [p, p + bytes) reachable by the controller until release(p, bytes) (memory the
  // runtime holds registered itself, such as a memory buffer's region, already is).
  void use(const void* p, std::size_t bytes);
  void release(const void* p, std::size_t bytes);

  // Regions registered now (for tests of the cache).
  std::size_t size() const;

 private:
  struct region {
    std::uint64_t base;
    std::uint64_t end;
    std::uint32_t users;
    std::uint64_t last_use;
  };
  // Idle regions beyond this many are unregistered, least recently used first.
  static constexpr std::size_t kept_idle = 64;

  void trim();

  runtime& rt_;
  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::vector<region> regions_;
  std::uint64_t uses_ = 0;
};

}  // namespace agio::python
