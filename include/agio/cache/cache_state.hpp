#pragma once
// The cache's memory as device threads see it: line data and per-line metadata in GPU memory,
// all sized by the number of lines (never by the dataset). The host side (software_cache.hpp)
// allocates it; this struct only points into it and is copied by value into kernels.
#include <cstddef>
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/detail/divisor.hpp"
#include "agio/detail/thread_id.hpp"
#include "agio/detail/warp.hpp"

namespace agio::cache {

// Event counts, kept on the device in counter_stripes copies (see count_event below) and
// added up when read; warps add them once per warp, not per lane.
struct cache_counters {
  std::uint64_t hits;
  std::uint64_t misses;               // fills issued
  std::uint64_t hits_on_busy;         // accesses that found their block being filled and waited
  std::uint64_t coalesced_in_warp;    // lanes served by another lane's access to the same line
  std::uint64_t evictions;            // lines holding a block that were reused for another
  std::uint64_t write_backs;          // MODIFIED lines written to storage
  std::uint64_t share_hits;           // async reads served from a shared buffer (share table)
  std::uint64_t fill_failures;        // fills whose read failed (the I/O error reaches the host)
  std::uint64_t write_back_failures;  // write-backs that failed (the line became FAILED, data kept)
  std::uint64_t demotions;            // clean lines a cache above put in this one (a host tier's)

  // hits / (hits + misses): leaves out the accesses that waited on a fill (hits_on_busy) or
  // rode on another lane's access (coalesced_in_warp), whose numbers depend on the threads'
  // timing as much as on the policy. To compare policies use miss_ratio.
  double hit_rate() const {
    const double all = static_cast<double>(hits + misses);
    return all == 0 ? 0 : static_cast<double>(hits) / all;
  }
  // Fills per access: what a replacement policy controls, since every access that issued no
  // fill was served from the cache. `accesses` is the caller's count of accesses made.
  double miss_ratio(std::uint64_t accesses) const {
    return accesses == 0 ? 0 : static_cast<double>(misses) / static_cast<double>(accesses);
  }
  // A host tier's hits as a share of the fills of the cache above it (`above_misses`): what
  // did not come from storage, under any admission policy (hit_rate leaves out the misses that
  // bypassed the tier).
  double share_served(std::uint64_t above_misses) const {
    return above_misses == 0 ? 0 : static_cast<double>(hits) / static_cast<double>(above_misses);
  }
  cache_counters& operator+=(const cache_counters& o) {
    hits += o.hits;
    misses += o.misses;
    hits_on_busy += o.hits_on_busy;
    coalesced_in_warp += o.coalesced_in_warp;
    evictions += o.evictions;
    write_backs += o.write_backs;
    share_hits += o.share_hits;
    fill_failures += o.fill_failures;
    write_back_failures += o.write_back_failures;
    demotions += o.demotions;
    return *this;
  }
};

// Every hit bumps a counter: with one copy, a warm cache's hits would queue at one address.
inline constexpr std::uint32_t counter_stripes = 128;

struct cache_state {
  std::byte* data = nullptr;             // line_count * line_bytes
  std::uint32_t* words = nullptr;        // line.hpp word per line
  std::uint64_t* tags = nullptr;         // tag per line; no_tag when empty
  std::uint32_t* fill_status = nullptr;  // status::pack() of the line's last fill or write-back
  std::uint32_t* orphan_pins = nullptr;  // pins reserved for waiters that gave up (see cache.hpp)
  std::uint32_t* set_locks = nullptr;    // taken to insert into a set; 0 free, else holder + 1
  std::uint64_t* set_turns = nullptr;    // per set: deadline of the access served first, or no_turn
  std::uint32_t* closed = nullptr;       // non-zero once writes are refused (the runtime is stopping)
  void* policy_state = nullptr;          // the policy's own per-line / per-set words
  cache_counters* counters = nullptr;    // counter_stripes of them
  std::uint32_t line_count = 0;
  detail::divisor line_bytes;  // element readers divide byte offsets by it
  std::uint32_t ways = 0;      // lines per set
  detail::divisor set_count;   // line_count / ways (set_of divides by it)
};

// Adds `n` to counter `field` with an atomic of the calling lane's own, into the calling
// processor's stripe of the counters: for callers that count one lane at a time (a group's
// leader on the array view's hit), where gathering the lanes' counts first (count_event) cost
// some 35 instructions a count. Counting this way everywhere took the array readers' kernels
// to more registers (SpMV 81, one past its budget, and BaM's workload through readers from 61
// to 67; ptxas, sm_90).
AGIO_HD inline void count_event_alone(const cache_state& c, std::uint64_t cache_counters::*field, std::uint64_t n = 1) {
  std::uint64_t& counter = c.counters[detail::processor_index() % counter_stripes].*field;
  detail::fetch_add<detail::scope::device>(counter, n, detail::relaxed);
}

// Adds `n` to counter `field` from every calling lane, with one atomic per group of lanes that
// call it together (lanes of a warp at the same point), not one per lane.
AGIO_HD inline void count_event(const cache_state& c, std::uint64_t cache_counters::*field, std::uint64_t n = 1) {
  // The stripe's address first: computed inside the leader's branch it took the array readers'
  // kernels 3 to 7 registers more (BFS 67, SpMV 83; ptxas, sm_90).
  std::uint64_t& counter = c.counters[detail::processor_index() % counter_stripes].*field;
  // Every lane adds the same n in practice; sum them anyway.
  const detail::warp::lane_group lanes = detail::warp::active_lanes();
  const std::uint64_t total = detail::warp::sum(lanes, n);
  if (detail::warp::leads(lanes)) detail::fetch_add<detail::scope::device>(counter, total, detail::relaxed);
}

}  // namespace agio::cache
