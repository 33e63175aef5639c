#pragma once
// The extension point for replacement policies (AGILE §3.5): a policy is a class deriving from
// cache_policy<itself> (CRTP: every call is resolved at compile time, no virtual calls) and
// chosen as the cache's template argument. The cache is set-associative: a block may live in
// any of the `ways` lines of one set. The policy decides which set a block maps to, what to
// remember on hits and inserts, and which line of a full set to give up. It runs with the set's
// lock held while choosing a victim, and lock-free on hits.
//
// A policy keeps its own words in `cache_state::policy_state` (state_bytes() says how many
// bytes it needs, zeroed at start), must only pick lines `evictable(line)` accepts, and may
// take extra locks only through the `locks` it is given (so the lock-chain debugger sees
// them). docs/CACHE.md shows a complete user-written policy.
#include <cstddef>
#include <cstdint>

#include "agio/cache/cache_state.hpp"
#include "agio/cache/line.hpp"
#include "agio/detail/platform.hpp"

namespace agio::cache {

inline constexpr std::uint32_t no_line = ~std::uint32_t{0};

template <class Derived>
class cache_policy {
 public:
  // Lines per set this policy requires, or 0 to take the cache's configured associativity.
  static constexpr std::uint32_t fixed_ways = 0;
  static std::size_t state_bytes(std::uint32_t /*lines*/, std::uint32_t /*sets*/) { return 0; }

  // The set a block maps to. Consecutive blocks of a device go to consecutive sets, so a
  // sequential scan spreads evenly; devices are offset from one another.
  AGIO_HD std::uint32_t set_of(const cache_state& c, std::uint64_t tag) const {
    const std::uint64_t spread = tag_block(tag) + std::uint64_t{tag_device(tag)} * 0x9e3779b1u;
    return c.set_count.remainder(spread);
  }
  AGIO_HD void on_hit(const cache_state&, std::uint32_t /*line*/) const {}
  AGIO_HD void on_insert(const cache_state&, std::uint32_t /*set*/, std::uint32_t /*line*/) const {}

  // Derived classes provide:
  //   template <class Evictable, class Locks>
  //   AGIO_HD std::uint32_t victim(const cache_state& c, std::uint32_t set, Evictable&& evictable,
  //                                const Locks& locks) const;
  // returning a line of `set` for which evictable(line) is true, or no_line.

 protected:
  AGIO_HD static std::uint32_t first_line(const cache_state& c, std::uint32_t set) { return set * c.ways; }
};

}  // namespace agio::cache
