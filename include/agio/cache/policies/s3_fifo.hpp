#pragma once
// S3-FIFO (Yang et al., "FIFO queues are all you need for cache eviction", SOSP 2023), per set.
// A new block enters a small probationary FIFO; when it reaches the FIFO's end it moves to the
// main FIFO if it was hit meanwhile (twice here), and otherwise leaves the cache with its tag
// remembered in a ghost FIFO. A missed block whose tag is still in the ghost goes straight to
// main. Main is FIFO with reinsertion and a 2-bit hit count (a hit line goes round again, one
// count less).
//
// Why it suits the skewed workloads agio serves (Zipf embedding lookups, power-law graph
// neighbourhoods): most blocks of such traces are touched once in a long while, and CLOCK
// gives each of them a full sweep of the set (its reference bit is set on insertion), pushing
// out hot blocks; LFU-DA starts them at the set's age, level with the coldest residents. Here a
// newcomer costs at most the one probationary line and goes at the set's next miss unless it
// proves itself, while the hot blocks sit in main; the ghost gives a block evicted too early a
// direct way back.
//
// Set-associative form: the FIFOs are orders within each set, kept as per-line insertion
// stamps (the paper's 10 % small queue becomes one line of the set, 1/8 at 8 ways); the ghost is
// a ring of ways / 2 tag fingerprints per set (fewer than the paper's 90 % of the cache: half
// the ways missed less on both benchmark traces than all of them). Metadata: 8 bytes per line
// and 2 + ways / 2 words per set, proportional to the cache, not the data.
#include "agio/cache/policy.hpp"
#include "agio/detail/atomic.hpp"

namespace agio::cache {

class s3_fifo : public cache_policy<s3_fifo> {
 public:
  // A probationary line moves to main once hit this often (the count saturates at max_hits).
  // Two missed a little less than one on both benchmark traces, on CPU threads and the GPU.
  static constexpr std::uint32_t promote_hits = 2;
  static constexpr std::uint32_t max_hits = 3;

  static std::size_t state_bytes(std::uint32_t lines, std::uint32_t sets) {
    const std::size_t ways = sets == 0 ? 0 : lines / sets;
    return (2 * std::size_t{lines} + std::size_t{sets} * (2 + ghost_entries(ways))) * sizeof(std::uint32_t);
  }

  AGIO_HD void on_hit(const cache_state& c, std::uint32_t line) const {
    // A lossy increment (two hits at once may count as one) keeps this a load and, below the
    // cap, one store; a hot line at the cap costs a load only.
    std::uint32_t& count = hits(c, line);
    const std::uint32_t seen = detail::load<detail::scope::device>(count, detail::relaxed);
    if (seen < max_hits) detail::store<detail::scope::device>(count, seen + 1, detail::relaxed);
  }

  AGIO_HD void on_insert(const cache_state& c, std::uint32_t set, std::uint32_t line) const {
    // The set lock is held: the order words, stamps and ghost are ours.
    const std::uint32_t print = fingerprint(detail::load<detail::scope::device>(c.tags[line], detail::relaxed));
    // No early exit: the ghost's loads go out together rather than one after another.
    std::uint32_t* ghost = ghost_of(c, set);
    std::uint32_t match = no_line;
    for (std::uint32_t k = 0; k < ghost_entries(c.ways); ++k) {
      if (ghost[k] == print && match == no_line) match = k;
    }
    const bool returning = match != no_line;
    if (returning) ghost[match] = 0;
    detail::store<detail::scope::device>(hits(c, line), 0u, detail::relaxed);
    order(c, line) = next_stamp(c, set) << 1 | (returning ? 0u : probation);
  }

  template <class Evictable, class Locks>
  AGIO_HD std::uint32_t victim(const cache_state& c, std::uint32_t set, Evictable&& evictable, const Locks&) const {
    // The set lock is held. One pass finds an empty line, moves proven probationary lines to
    // main, and finds the oldest unproven probationary line and the main line that FIFO with
    // reinsertion would reach first: the oldest of those with the fewest hits. All of a line's
    // words are loaded before any is looked at, so each line costs one trip to memory, and the
    // set's stamp stays in a register until the end.
    const std::uint32_t first = first_line(c, set);
    std::uint32_t stamp = stamp_of(c, set);
    std::uint32_t newcomer = no_line;
    std::uint32_t newcomer_order = 0;
    std::uint32_t resident = no_line;
    std::uint32_t resident_order = 0;
    std::uint32_t resident_hits = 0;
    for (std::uint32_t line = first; line < first + c.ways; ++line) {
      const bool free_to_take = evictable(line);
      const std::uint64_t tag = detail::load<detail::scope::device>(c.tags[line], detail::relaxed);
      const std::uint32_t count = detail::load<detail::scope::device>(hits(c, line), detail::relaxed);
      const std::uint32_t line_order = order(c, line);
      if (!free_to_take) continue;
      if (tag == no_tag) {
        stamp_of(c, set) = stamp;
        return line;
      }
      if ((line_order & probation) != 0) {
        if (count >= promote_hits) {
          // Hits are counted afresh in main, as the paper clears them on the move.
          detail::store<detail::scope::device>(hits(c, line), 0u, detail::relaxed);
          order(c, line) = ++stamp << 1;
        } else if (newcomer == no_line || older(line_order, newcomer_order)) {
          newcomer = line;
          newcomer_order = line_order;
        }
        continue;
      }
      if (resident == no_line || count < resident_hits ||
          (count == resident_hits && older(line_order, resident_order))) {
        resident = line;
        resident_order = line_order;
        resident_hits = count;
      }
    }
    if (newcomer == no_line && resident != no_line) stamp = age_main(c, set, resident, resident_hits, stamp);
    stamp_of(c, set) = stamp;
    if (newcomer != no_line) {
      std::uint32_t& at = ghost_next(c, set);
      ghost_of(c, set)[at] = fingerprint(detail::load<detail::scope::device>(c.tags[newcomer], detail::relaxed));
      at = static_cast<std::uint32_t>((at + 1) % ghost_entries(c.ways));
      return newcomer;
    }
    return resident;
  }

 private:
  static constexpr std::uint32_t probation = 1;  // low bit of a line's order word

  AGIO_HD static constexpr std::size_t ghost_entries(std::size_t ways) { return ways < 2 ? 1 : ways / 2; }
  // Stamps wrap: compare by signed distance.
  AGIO_HD static bool older(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::int32_t>((a >> 1) - (b >> 1)) < 0;
  }
  // Never 0, which marks an empty ghost slot.
  AGIO_HD static std::uint32_t fingerprint(std::uint64_t tag) {
    return static_cast<std::uint32_t>((tag * 0x9e3779b97f4a7c15ull) >> 32) | 1u;
  }

  // What the rounds of FIFO with reinsertion that reach `resident` do to the rest of main:
  // every line loses the `rounds` hits those rounds took from it, and the lines ahead of
  // `resident` lose one more and go round again, behind the others.
  // Lines in use are aged too, as the paper's scan passes every line: cheaper under the lock
  // than asking again which lines could be evicted. Returns the set's stamp after the lines
  // that went round again.
  AGIO_HD static std::uint32_t age_main(const cache_state& c, std::uint32_t set, std::uint32_t resident,
                                        std::uint32_t rounds, std::uint32_t stamp) {
    const std::uint32_t first = first_line(c, set);
    const std::uint32_t resident_order = order(c, resident);
    for (std::uint32_t line = first; line < first + c.ways; ++line) {
      std::uint32_t& count = hits(c, line);
      const std::uint32_t line_order = order(c, line);
      const std::uint32_t now = detail::load<detail::scope::device>(count, detail::relaxed);
      if (line == resident || (line_order & probation) != 0) continue;
      const bool ahead = older(line_order, resident_order);
      const std::uint32_t taken = rounds + (ahead ? 1 : 0);
      detail::store<detail::scope::device>(count, now > taken ? now - taken : 0u, detail::relaxed);
      if (ahead) order(c, line) = ++stamp << 1;
    }
    return stamp;
  }

  AGIO_HD static std::uint32_t* words(const cache_state& c) { return static_cast<std::uint32_t*>(c.policy_state); }
  // Hits since insertion (or since the move to main), 0..max_hits; written by hits, lock-free.
  AGIO_HD static std::uint32_t& hits(const cache_state& c, std::uint32_t line) { return words(c)[line]; }
  // Insertion stamp << 1 | probation; only under the set lock.
  AGIO_HD static std::uint32_t& order(const cache_state& c, std::uint32_t line) {
    return words(c)[c.line_count + line];
  }
  AGIO_HD static std::uint32_t* set_words(const cache_state& c, std::uint32_t set) {
    return words(c) + 2 * std::size_t{c.line_count} + std::size_t{set} * (2 + ghost_entries(c.ways));
  }
  AGIO_HD static std::uint32_t& stamp_of(const cache_state& c, std::uint32_t set) { return set_words(c, set)[0]; }
  AGIO_HD static std::uint32_t next_stamp(const cache_state& c, std::uint32_t set) { return ++stamp_of(c, set); }
  AGIO_HD static std::uint32_t& ghost_next(const cache_state& c, std::uint32_t set) { return set_words(c, set)[1]; }
  AGIO_HD static std::uint32_t* ghost_of(const cache_state& c, std::uint32_t set) { return set_words(c, set) + 2; }
};

}  // namespace agio::cache
