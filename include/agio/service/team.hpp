#pragma once
// Who retires completions from a queue: a whole warp (the completion service, AGILE
// Algorithm 1) or one thread on its own (a waiter, when the runtime runs without a service).
// The retirement code in service.hpp is written once against this small interface.
#include <cstdint>

#include "agio/detail/copy.hpp"
#include "agio/detail/platform.hpp"
#include "agio/detail/warp.hpp"

namespace agio::service {

// The 32 lanes of the calling warp, each checking one entry of the window at once.
struct warp_team {
  static constexpr bool whole_warp = true;
  // The lanes, outside `retired`, whose entry `is_new(lane)` reports as newly completed.
  template <class IsNew>
  AGIO_HD static std::uint32_t scan(std::uint32_t retired, IsNew&& is_new) {
    return detail::warp::ballot_each([&](unsigned lane) { return ((retired >> lane) & 1u) == 0 && is_new(lane); });
  }
  AGIO_HD static void copy(void* dst, const void* src, std::uint32_t bytes) { detail::warp::copy(dst, src, bytes); }
  AGIO_HD static void sync() { detail::warp::sync(); }
  AGIO_HD static bool is_leader() { return detail::warp::is_leader(); }
  // Every lane gets the leader's `value`.
  AGIO_HD static bool from_leader(bool value) {
    return detail::warp::from_leader(detail::warp::whole_warp(), value ? 1u : 0u) != 0;
  }
};

// One thread alone. It reads entries in ring order and stops at the first one not yet
// completed, as an NVMe driver walks its completion queue: one read per entry, which matters
// when each read crosses PCIe.
struct solo_team {
  static constexpr bool whole_warp = false;
  template <class IsNew>
  AGIO_HD static std::uint32_t scan(std::uint32_t retired, IsNew&& is_new) {
    std::uint32_t fresh = 0;
    for (unsigned lane = 0; lane < detail::warp::size; ++lane) {
      if ((retired >> lane) & 1u) continue;
      if (!is_new(lane)) break;
      fresh |= 1u << lane;
    }
    return fresh;
  }
  AGIO_HD static void copy(void* dst, const void* src, std::uint32_t bytes) { detail::thread_copy(dst, src, bytes); }
  AGIO_HD static void sync() {}
  AGIO_HD static bool is_leader() { return true; }
  AGIO_HD static bool from_leader(bool value) { return value; }
};

}  // namespace agio::service
