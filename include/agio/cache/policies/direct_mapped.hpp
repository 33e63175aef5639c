#pragma once
// Direct-mapped: each block has exactly one line it can live in. No state, no choice.
#include "agio/cache/policy.hpp"

namespace agio::cache {

class direct_mapped : public cache_policy<direct_mapped> {
 public:
  static constexpr std::uint32_t fixed_ways = 1;

  template <class Evictable, class Locks>
  AGIO_HD std::uint32_t victim(const cache_state& c, std::uint32_t set, Evictable&& evictable, const Locks&) const {
    const std::uint32_t line = first_line(c, set);
    return evictable(line) ? line : no_line;
  }
};

}  // namespace agio::cache
