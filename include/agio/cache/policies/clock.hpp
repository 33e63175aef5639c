#pragma once
// CLOCK (second chance), the replacement BaM's page cache is built on, here per set: a hit sets
// the line's reference bit; the set's hand sweeps, clearing set bits, and takes the first
// evictable line whose bit is clear. (BaM sweeps one global hand over a fully associative
// cache; per-set hands keep metadata proportional to the cache and lookups to one set.)
#include "agio/cache/policy.hpp"
#include "agio/detail/atomic.hpp"

namespace agio::cache {

class clock : public cache_policy<clock> {
 public:
  static std::size_t state_bytes(std::uint32_t lines, std::uint32_t sets) {
    return (std::size_t{lines} + sets) * sizeof(std::uint32_t);
  }

  AGIO_HD void on_hit(const cache_state& c, std::uint32_t line) const {
    std::uint32_t& bit = referenced(c, line);
    // Skip the store when already set: hot lines are hit by many warps at once.
    if (detail::load<detail::scope::device>(bit, detail::relaxed) == 0) {
      detail::store<detail::scope::device>(bit, 1u, detail::relaxed);
    }
  }
  AGIO_HD void on_insert(const cache_state& c, std::uint32_t, std::uint32_t line) const {
    detail::store<detail::scope::device>(referenced(c, line), 1u, detail::relaxed);
  }

  template <class Evictable, class Locks>
  AGIO_HD std::uint32_t victim(const cache_state& c, std::uint32_t set, Evictable&& evictable, const Locks&) const {
    // The set lock is held: the hand is ours to move.
    std::uint32_t& hand = hands(c)[set];
    const std::uint32_t first = first_line(c, set);
    for (std::uint32_t step = 0; step < 2 * c.ways; ++step) {
      const std::uint32_t line = first + (hand + step) % c.ways;
      if (!evictable(line)) continue;
      std::uint32_t& bit = referenced(c, line);
      if (detail::load<detail::scope::device>(bit, detail::relaxed) != 0) {
        detail::store<detail::scope::device>(bit, 0u, detail::relaxed);
        continue;
      }
      hand = (hand + step + 1) % c.ways;
      return line;
    }
    return no_line;
  }

 private:
  AGIO_HD static std::uint32_t& referenced(const cache_state& c, std::uint32_t line) {
    return static_cast<std::uint32_t*>(c.policy_state)[line];
  }
  AGIO_HD static std::uint32_t* hands(const cache_state& c) {
    return static_cast<std::uint32_t*>(c.policy_state) + c.line_count;
  }
};

}  // namespace agio::cache
