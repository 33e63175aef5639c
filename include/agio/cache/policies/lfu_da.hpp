#pragma once
// LFU with dynamic aging (LFU-DA; Arlitt et al., "Evaluating content management techniques for
// Web proxy caches", 2000), per set. Each line counts its hits; the victim is the evictable
// line with the smallest count; the set's age becomes that count, and a newly inserted line
// starts at age + 1. Frequency keeps the hot blocks of a skewed workload (Zipf embeddings,
// power-law graph neighbourhoods) that CLOCK's single reference bit lets go; the age lets
// formerly hot lines fall out once the workload moves on.
#include "agio/cache/policy.hpp"
#include "agio/detail/atomic.hpp"

namespace agio::cache {

class lfu_da : public cache_policy<lfu_da> {
 public:
  static std::size_t state_bytes(std::uint32_t lines, std::uint32_t sets) {
    return (std::size_t{lines} + sets) * sizeof(std::uint32_t);
  }

  AGIO_HD void on_hit(const cache_state& c, std::uint32_t line) const {
    // Saturates far above any age a set reaches in practice.
    std::uint32_t& count = counts(c)[line];
    if (detail::load<detail::scope::device>(count, detail::relaxed) < 0x7fffffffu) {
      detail::fetch_add<detail::scope::device>(count, 1u, detail::relaxed);
    }
  }
  AGIO_HD void on_insert(const cache_state& c, std::uint32_t set, std::uint32_t line) const {
    detail::store<detail::scope::device>(counts(c)[line], ages(c)[set] + 1, detail::relaxed);
  }

  template <class Evictable, class Locks>
  AGIO_HD std::uint32_t victim(const cache_state& c, std::uint32_t set, Evictable&& evictable, const Locks&) const {
    const std::uint32_t first = first_line(c, set);
    std::uint32_t best = no_line;
    std::uint32_t best_count = 0;
    for (std::uint32_t way = 0; way < c.ways; ++way) {
      const std::uint32_t line = first + way;
      if (!evictable(line)) continue;
      const std::uint32_t count = detail::load<detail::scope::device>(counts(c)[line], detail::relaxed);
      if (best == no_line || count < best_count) {
        best = line;
        best_count = count;
      }
    }
    // The set lock is held: the age is ours to move.
    if (best != no_line && best_count > ages(c)[set]) ages(c)[set] = best_count;
    return best;
  }

 private:
  AGIO_HD static std::uint32_t* counts(const cache_state& c) { return static_cast<std::uint32_t*>(c.policy_state); }
  AGIO_HD static std::uint32_t* ages(const cache_state& c) {
    return static_cast<std::uint32_t*>(c.policy_state) + c.line_count;
  }
};

}  // namespace agio::cache
