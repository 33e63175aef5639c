#pragma once
// A second cache level in pinned host memory, below the cache in GPU memory (GMT's third tier,
// LMB's memory buffer). It is an ordinary cache (cache.hpp: the same lines, states, pins and
// policies) whose line data lives in host memory the GPU reaches over PCIe, and `tiered_io`
// puts it between the GPU cache and the stores: the GPU cache's I/O handle, through which its
// fills and write-backs go.
//
//   - A fill of the GPU cache looks its block up in the host tier. On a hit the calling lanes
//     copy the line from host memory themselves: no controller round trip. On a miss the
//     admission policy decides: the block is read into the host tier (the controller reads it
//     straight into the tier's host memory) and copied up from there, or it goes from the store
//     straight into the GPU line, as without the tier, and the host tier keeps nothing.
//   - A clean line the GPU cache evicts is demoted into the host tier when the admission
//     policy says so (a victim cache): the evicting thread copies it down, unless the tier holds
//     the block already or its set has no line to give at once (storage has the block, so a
//     demotion that gives up loses nothing).
//   - A write-back of the GPU cache writes the line into the host tier (MODIFIED there); the
//     host tier writes it to the store when it evicts it, or when it is flushed. Nothing is
//     acknowledged twice: the GPU line becomes clean only once the host tier holds its data.
//   - Failures: a failed read of the host tier's own fill reaches the GPU cache's requester as
//     its fill's status (counted once, by the host tier's fill_failures); a write-back the host
//     tier cannot take (its set full of lines whose own write-backs failed, or its deadline
//     passed) leaves the GPU line MODIFIED, as a refused submission does.
//
// A fill through the host tier is synchronous in the thread that issues it (the GPU cache's
// miss path, a prefetch included): the copy is made before the fill's signal is published.
// Only requests of one whole line of the host tier go through it; any other request goes to the
// store as it is. The two caches must have the same line size (software_cache checks).
#include <cstdint>

#include "agio/cache/cache.hpp"
#include "agio/cache/line.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/clock.hpp"
#include "agio/detail/warp.hpp"
#include "agio/io/io_handle.hpp"

namespace agio::cache {

// Admission policies: when a block enters the host tier. `admit(tag)`, run by the thread that
// missed in the GPU cache on a block the tier does not hold, says whether the block is read
// into the tier (else it goes from the store straight into the GPU line); `demotes` says
// whether a clean line the GPU cache evicts enters the tier. Write-backs always enter it (their
// data lives nowhere else). A policy is a small struct copied into kernels;
// `state_words(lines)` says how many 64-bit words of GPU memory it needs (zeroed, then set to
// no_tag by the host side), `uses(words, count)` hands them over.

// What a policy that keeps no state of its own needs of the interface.
struct stateless_admission {
  static std::uint64_t state_words(std::uint32_t /*host_lines*/) { return 0; }
  void uses(std::uint64_t* /*words*/, std::uint64_t /*count*/) {}
};

// Every block the GPU cache misses on goes through the host tier.
struct admit_always : stateless_admission {
  static constexpr const char* name = "always";
  static constexpr bool demotes = false;
  AGIO_HD bool admit(std::uint64_t /*tag*/) const { return true; }
};

// A victim cache (GMT's and LMB's placement of pages the GPU gives up): blocks go from the
// store straight into the GPU cache, and enter the host tier when the GPU cache evicts them
// clean (or writes them back), so the tier holds what the GPU cache held, not what it read.
// Demotion costs the evicting thread a copy over PCIe; it never waits for a line of the tier.
struct admit_on_eviction : stateless_admission {
  static constexpr const char* name = "on_eviction";
  static constexpr bool demotes = true;
  AGIO_HD bool admit(std::uint64_t /*tag*/) const { return false; }
};

// A block enters the host tier on its second miss while the first is remembered (GMT's reuse
// prediction reduced to its simplest form): each miss leaves the block's tag in a table of as
// many slots as the host tier has lines, indexed by a hash of the tag; a later miss that finds
// its tag there admits the block. A scan touches each block once and so passes by the host
// tier instead of flushing it. The table is a hint: a race between two tags of one slot only
// costs a block its admission this time.
struct admit_on_reuse {
  static constexpr const char* name = "on_reuse";
  static constexpr bool demotes = false;
  std::uint64_t* seen = nullptr;
  std::uint64_t slots = 0;
  static std::uint64_t state_words(std::uint32_t host_lines) { return host_lines; }
  void uses(std::uint64_t* words, std::uint64_t count) {
    seen = words;
    slots = count;
  }
  AGIO_HD bool admit(std::uint64_t tag) const {
    std::uint64_t& slot = seen[(tag * 0x9e3779b97f4a7c15ull >> 17) % slots];
    if (detail::load<detail::scope::device>(slot, detail::relaxed) == tag) return true;
    detail::store<detail::scope::device>(slot, tag, detail::relaxed);
    return false;
  }
};

// The GPU cache's I/O handle when a host tier is below it: the handle of the store (`IO`),
// whose requests of one host-tier line are served through `tier` instead.
template <class TierPolicy, class Admission = admit_always, class IO = io_handle>
class tiered_io : public IO {
 public:
  using base_io = IO;
  using tier_policy = TierPolicy;
  using admission_policy = Admission;
  using tier_handle = cache_handle<TierPolicy, no_lock_chain, no_share_table, IO>;

  static constexpr bool demotes_clean_lines = Admission::demotes;
  static constexpr bool copies_with_crew = true;  // a hit's copy is made by the lanes it serves

  tier_handle tier;
  Admission admission;
  std::uint32_t added_latency_ns = 0;  // added to each access to host memory (emulates CXL)

  // The GPU cache evicted block `block` of `dev` clean from `data` (its line, claimed by the
  // caller until this returns): a copy goes into the tier if it does not hold the block. Out of
  // line: a second claim path (the tier's) inlined into every miss of the cache above took
  // ptxas minutes per kernel. The call has its price too: the calling kernel copies its handle
  // into a stack frame (704 bytes) and DLRM's gather took 94 registers instead of 80 (sm_90,
  // 2026-11-26).
  AGIO_HD_OUT_OF_LINE void demote(std::uint32_t dev, std::uint64_t block, const void* data) const {
    if (tier.offer_clean(dev, block, data, deadline::after_ns(tier.wait_timeout_ns))) emulate_latency();
  }

  // A request of the cache above, made by the leader of `crew` for the crew (warp.hpp): the
  // crew's lanes copy the line of a read together.
  AGIO_HD status async_signalled(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks,
                                 void* buffer, const completion_signal& signal,
                                 const detail::warp::lane_group& crew = detail::warp::alone()) const {
    if (!through_tier(op, dev, lba, blocks)) return IO::async_signalled(op, dev, lba, blocks, buffer, signal);
    const std::uint64_t block = lba / blocks;
    const deadline limit = deadline::after_ns(tier.wait_timeout_ns);
    if (op == spec::opcode::write) {
      emulate_latency();
      const status written = tier.write_bytes(dev, block, 0, tier.state.line_bytes, buffer, limit);
      return written.ok() ? publish(signal) : written;
    }
    std::uint32_t line = no_line;
    const auto found = tier.acquire_present(dev, block, line);
    if (found != tier_handle::presence::pinned) {
      // Only a block the tier has no line of may bypass it: a line being written back holds
      // data the store may not have yet.
      if (found == tier_handle::presence::absent && !admission.admit(block_tag(dev, block))) {
        return IO::async_signalled(op, dev, lba, blocks, buffer, signal);
      }
      const status filled = tier.acquire_line(dev, block, line, limit);
      if (!filled.ok()) return filled;
    }
    emulate_latency();
    // A lane alone has only its own loads in flight over PCIe, and its loads are small ones: a
    // crew copies the line with all its lanes, and lone lanes that got here together copy their
    // lines together.
    detail::warp::crew_copy(crew, buffer, tier.line_data(line), tier.state.line_bytes);
    tier.unpin(line);
    return publish(signal);
  }

 private:
  AGIO_HD bool through_tier(spec::opcode op, std::uint32_t dev, std::uint64_t lba, std::uint32_t blocks) const {
    if (op != spec::opcode::read && op != spec::opcode::write) return false;
    if (dev >= this->device_count) return false;
    return blocks == tier.lbas_per_line(dev) && lba % blocks == 0;
  }

  AGIO_HD void emulate_latency() const {
    if (added_latency_ns == 0) return;
    const std::uint64_t until = now_ns() + added_latency_ns;
    while (now_ns() < until) {
    }
  }

  // What the store's completion would have done: the status, then the word's change, with
  // release (the data copied above precedes it for whoever acquires the word).
  AGIO_HD static status publish(const completion_signal& signal) {
    const status done{outcome::success, 0};
    if (signal.status != nullptr) detail::store<detail::scope::device>(*signal.status, done.pack(), detail::relaxed);
    detail::fetch_add<detail::scope::device>(*signal.word, signal.on_success, detail::release);
    return done;
  }
};

}  // namespace agio::cache
