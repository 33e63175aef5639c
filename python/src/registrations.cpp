#include "registrations.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace agio::python {

registrations::~registrations() {
  for (const region& r : regions_) rt_.unregister_replaceable(reinterpret_cast<void*>(r.base));
}

void registrations::use(const void* p, std::size_t bytes) {
  const auto base = reinterpret_cast<std::uint64_t>(p);
  const std::uint64_t end = base + std::max<std::size_t>(bytes, 1);
  std::unique_lock lock(mutex_);
  // Regions whose memory was freed and handed to the runtime since are no longer registered.
  std::erase_if(regions_, [&](const region& r) {
    return r.users == 0 && !rt_.registered(reinterpret_cast<void*>(r.base), r.end - r.base);
  });
  for (;;) {
    for (region& r : regions_) {
      if (r.base <= base && end <= r.end) {
        ++r.users;
        r.last_use = ++uses_;
        return;
      }
    }
    // Memory the runtime registered itself (a memory buffer's regions) stays registered while
    // it is allocated: nothing to add, and release() finds nothing of ours to let go of.
    if (rt_.registered(p, bytes)) return;
    const auto overlaps = [&](const region& r) { return r.base < end && base < r.end; };
    const bool busy =
        std::any_of(regions_.begin(), regions_.end(), [&](const region& r) { return overlaps(r) && r.users != 0; });
    if (!busy) break;
    // Each call in flight ends within its own deadline; this one is only a backstop.
    if (released_.wait_for(lock, std::chrono::minutes(10)) == std::cv_status::timeout) {
      throw std::runtime_error("agio: a buffer overlapping this one was still in use by another call after 10 minutes");
    }
  }
  region merged{base, end, 1, ++uses_};
  for (const region& r : regions_) {
    if (r.base < end && base < r.end) {
      merged.base = std::min(merged.base, r.base);
      merged.end = std::max(merged.end, r.end);
      rt_.unregister_replaceable(reinterpret_cast<void*>(r.base));
    }
  }
  std::erase_if(regions_, [&](const region& r) { return r.base < end && base < r.end; });
  rt_.register_replaceable(reinterpret_cast<void*>(merged.base), merged.end - merged.base);
  regions_.push_back(merged);
  trim();
}

void registrations::release(const void* p, std::size_t bytes) {
  const auto base = reinterpret_cast<std::uint64_t>(p);
  const std::uint64_t end = base + std::max<std::size_t>(bytes, 1);
  {
    std::lock_guard lock(mutex_);
    for (region& r : regions_) {
      if (r.base <= base && end <= r.end && r.users != 0) {
        --r.users;
        break;
      }
    }
  }
  released_.notify_all();
}

std::size_t registrations::size() const {
  std::lock_guard lock(mutex_);
  return regions_.size();
}

void registrations::trim() {
  std::size_t idle = std::count_if(regions_.begin(), regions_.end(), [](const region& r) { return r.users == 0; });
  while (idle > kept_idle) {
    auto oldest = regions_.end();
    for (auto it = regions_.begin(); it != regions_.end(); ++it) {
      if (it->users == 0 && (oldest == regions_.end() || it->last_use < oldest->last_use)) oldest = it;
    }
    rt_.unregister_replaceable(reinterpret_cast<void*>(oldest->base));
    regions_.erase(oldest);
    --idle;
  }
}

}  // namespace agio::python
