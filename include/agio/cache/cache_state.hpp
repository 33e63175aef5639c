#pragma once
// The cache's memory as device threads see it: line data and per-line metadata in GPU memory,
// all sized by the number of lines (never by the dataset). The host side (software_cache.hpp)
// allocates it; this struct only points into it and is copied by value into kernels.
#include <cstddef>
#include <cstdint>

namespace agio::cache {

// Event counts, kept on the device; warps add them once per warp, not per lane.
struct cache_counters {
  std::uint64_t hits;
  std::uint64_t misses;              // fills issued
  std::uint64_t hits_on_busy;        // accesses that found their block being filled and waited
  std::uint64_t coalesced_in_warp;   // lanes served by another lane's access to the same line
  std::uint64_t evictions;           // lines holding a block that were reused for another
  std::uint64_t write_backs;         // MODIFIED lines written to storage
  std::uint64_t share_hits;          // async reads served from a shared buffer (share table)
  std::uint64_t fill_failures;       // fills whose read failed (the I/O error reaches the host)

  double hit_rate() const {
    const double all = static_cast<double>(hits + misses);
    return all == 0 ? 0 : static_cast<double>(hits) / all;
  }
};

struct cache_state {
  std::byte* data = nullptr;                // line_count * line_bytes
  std::uint32_t* words = nullptr;           // line.hpp word per line
  std::uint64_t* tags = nullptr;            // tag per line; no_tag when empty
  std::uint32_t* fill_status = nullptr;     // status::pack() of the line's last fill or write-back
  std::uint32_t* orphan_pins = nullptr;     // pins reserved for waiters that gave up (see cache.hpp)
  std::uint32_t* set_locks = nullptr;       // taken to insert into a set; 0 free, else holder + 1
  void* policy_state = nullptr;             // the policy's own per-line / per-set words
  cache_counters* counters = nullptr;
  std::uint32_t line_count = 0;
  std::uint32_t line_bytes = 0;
  std::uint32_t ways = 0;                   // lines per set
  std::uint32_t set_count = 0;              // line_count / ways
};

}  // namespace agio::cache
