#pragma once
// The software cache in GPU memory (AGILE §3.4), as device threads (and CPU threads) use it.
// Every access goes through `acquire_line`, which covers the paper's four cases:
//   (a) hit: the line holds the block (READY or MODIFIED) and is pinned for the access;
//   (b) miss, free line: a line of the block's set is claimed (BUSY) and a fill is issued
//       (posted to the completion service to submit, with io_handle: submit());
//   (c) hit on BUSY: the block is being filled; the thread waits on the line's word, which the
//       completion service sets when the fill finishes, and issues no I/O of its own;
//   (d) miss, full set: the policy picks a victim; a READY victim is reused at once, a MODIFIED
//       one is first written back (CLEANING) and the thread tries again.
// No thread waits for I/O while holding a set lock or a pin. A fill for a synchronous access
// reserves one pin for its requester (so each fill serves at least one access, which keeps
// tiny caches under many threads moving); prefetches reserve nothing, so a prefetched line can
// be evicted before its use, and the use then reads it again.
//
// Failures (line.hpp has the states):
//   - A failed fill reaches its requester (and the accesses waiting on it) as the read's status;
//     the requester's pin stays on the INVALID line until it has read that status, so no other
//     block's fill can land in the line first. The next access to the block reads storage again.
//   - A failed write-back leaves the line FAILED: its data stays in the cache, reads and writes
//     use it, and it is never a victim. An access whose set has only FAILED lines gets the
//     write-back's status at once. flush() writes each FAILED line back up to
//     cache_options::write_back_attempts times and then throws, naming device, LBA and cause.
//   - Once the runtime stops (software_cache's stop hook closes the cache), every write is
//     refused with `stopped` unless it got in before the close, in which case stop's flush
//     writes it back (refuses_writes has the argument). Reads go on as before.
#include <cstdint>

#include "agio/cache/cache_state.hpp"
#include "agio/cache/claim_turn.hpp"
#include "agio/cache/line.hpp"
#include "agio/cache/locks.hpp"
#include "agio/cache/policy.hpp"
#include "agio/cache/share_table.hpp"
#include "agio/detail/atomic.hpp"
#include "agio/detail/backoff.hpp"
#include "agio/detail/copy.hpp"
#include "agio/detail/warp.hpp"
#include "agio/io/io_handle.hpp"

namespace agio::cache {

using detail::scope;

// Whether the I/O handle `IO` takes the clean lines a cache evicts (io.demote: a host tier's,
// host_tier.hpp); a store's does not.
template <class IO>
inline constexpr bool demotes_clean_lines = false;
template <class IO>
requires(IO::demotes_clean_lines) inline constexpr bool demotes_clean_lines<IO> = true;
// Whether the I/O handle `IO` serves some fills by copying in the calling thread (a host tier's
// hits, host_tier.hpp), which the lanes an access is made for can share (warp.hpp's crews).
template <class IO>
inline constexpr bool copies_with_crew = false;
template <class IO>
requires(IO::copies_with_crew) inline constexpr bool copies_with_crew<IO> = true;

// Whether the I/O handle `IO` hands its signalled requests to the completion service to submit
// (io_handle::post_signalled): then the cache's fills and write-backs are posted, and kernels
// that read through the cache carry a ring slot's stores instead of the queue submission.
template <class IO>
inline constexpr bool posts_to_service = false;
template <class IO>
requires(IO::posts_to_service) inline constexpr bool posts_to_service<IO> = true;
// The service refuses a posted fill by storing all ones into its line's tag: no line's tag.
static_assert(no_tag == ~std::uint64_t{0});

// A read through the cache into a user buffer: done at wait(), from the cache line.
struct cache_transaction {
  std::uint64_t block = 0;
  void* destination = nullptr;
  std::uint32_t device = 0;
  std::uint32_t immediate = 0;  // status::pack() when decided at issue (error, or write done)
};

// `IO` is the controller type of the runtime's completion mode (controller.hpp): with
// `waiting_io_handle`, threads that wait on a line's fill retire completions themselves
// (help_retire); with `controller` that code is not compiled in at all.
template <class Policy, class Locks = no_lock_chain, class Shares = no_share_table, class IO = io_handle>
class cache_handle {
 public:
  using io_type = IO;
  IO io;
  cache_state state;
  Policy policy;
  Locks locks;
  Shares shares;
  std::uint64_t wait_timeout_ns = 0;

  // Blocks (line-sized units) of device `dev`, and its LBAs per block.
  AGIO_HD std::uint64_t blocks(std::uint32_t dev) const { return io.capacity_blocks(dev) / lbas_per_line(dev); }
  AGIO_HD std::uint32_t lbas_per_line(std::uint32_t dev) const { return state.line_bytes / io.lba_bytes(dev); }
  AGIO_HD std::byte* line_data(std::uint32_t line) const { return state.data + std::uint64_t{line} * state.line_bytes; }

  // --- The access primitive -------------------------------------------------------------------

  // Makes the line holding block `block` of `dev` READY or MODIFIED and pins it for the caller,
  // filling it from storage if needed. On success `line` is pinned: read or write its data,
  // then unpin(line) (mark_dirty(line) first after writing).
  AGIO_HD status acquire_line(std::uint32_t dev, std::uint64_t block, std::uint32_t& line, deadline limit) const {
    return acquire_line(dev, block, line, limit, detail::warp::alone());
  }
  // What an acquisition does when the line cannot be had at once: its set has no line to give
  // (every one pinned, or being written back) or another access is filling or writing back the
  // block's line. Its own fill it waits for either way (storage answers regardless).
  enum class on_contention {
    wait,     // until the line is had, or the deadline
    give_up,  // pending at once, holding nothing: for a caller that lets go of lines it holds
              // and then asks again waiting (array_reader), so that it never waits holding them
  };

  // acquire_line made by the leader of `crew` for the crew, whose other lanes wait in led() (or
  // coalesced()): a fill that the level below serves by copying (a host tier's hit) is copied
  // by all of them.
  AGIO_HD status acquire_line(std::uint32_t dev, std::uint64_t block, std::uint32_t& line, deadline limit,
                              const detail::warp::lane_group& crew,
                              on_contention contention = on_contention::wait) const {
    if (dev >= io.device_count) return {outcome::invalid_argument, 0};
    const std::uint64_t tag = block_tag(dev, block);
    return taking_turns(tag, limit, [&](claim_turn& turn) -> status {
      bool counted_wait = false;
      detail::backoff wait(detail::io_wait_max_sleep_ns);
      // After a first try that found the line without data, look at its word before pinning
      // again: a pin added to a BUSY line and taken back is two changes of the word that the
      // fill's completion and claims need, for nothing.
      bool looked = false;
      for (;;) {
        const std::uint32_t found = find(tag);
        if (found != no_line) {
          if ((!looked || holds_data(state_of(detail::load<scope::device>(state.words[found], detail::relaxed)))) &&
              try_hit(found, tag)) {
            if (!counted_wait) count_event(state, &cache_counters::hits);
            line = found;
            return {outcome::success, 0};
          }
          const line_state s = state_of(detail::load<scope::device>(state.words[found], detail::acquire));
          if (s == line_invalid && load_tag(found) == tag) {
            const status failed = forget_failed_fill(found, tag, limit);
            if (failed.finished()) return failed;
          }
          looked = true;
          // An access that gives up is counted when it asks again.
          if ((s == line_busy || s == line_cleaning) && contention == on_contention::wait) {
            if (!counted_wait) count_event(state, &cache_counters::hits_on_busy);
            counted_wait = true;
          }
        } else {
          const status inserted = insert(dev, block, tag, fill_mode::reserve, line, turn, limit, crew, contention);
          if (inserted.ok()) return inserted;
          if (inserted.result != outcome::pending) return inserted;
        }
        if (contention == on_contention::give_up) return {outcome::pending, 0};
        if (limit.passed()) return {outcome::timeout, 0};
        io.help_retire(dev);
        wait.pause();
      }
    });
  }

  // acquire_line for the lanes of `crew` together, every one of them calling it with the same
  // arguments (a warp that reads a whole line): the leader acquires the line, holding one pin
  // for the crew, and a fill the level below serves by copying is copied by all of them. Every
  // lane gets the status and the line, and may read the line once this returns; once every
  // lane is done (a warp barrier), the leader unpins it.
  AGIO_HD status acquire_line_together(const detail::warp::lane_group& crew, std::uint32_t dev, std::uint64_t block,
                                       std::uint32_t& line, deadline limit) const {
    status result{outcome::pending, 0};
    led(
        crew, [&] { result = acquire_line(dev, block, line, limit, crew); }, result);
    line = detail::warp::from_leader(crew, line);
    // Only the leader's pin acquired the line's data, and a shuffle orders no memory: the
    // barrier does (the fill's release -> the leader's acquire -> the barrier -> the lanes).
    detail::warp::sync(crew);
    return result;
  }

  // The lookup of a cache below another (host_tier.hpp), and the array view's hit, which read
  // nothing from storage: pins the line holding block `block` of `dev` if it holds the block's
  // data (pinned; counted by the calling lane alone, count_event_alone); else
  // says whether a line holds the block without usable data now (unsettled: being filled or
  // written back, or its fill failed; acquire_line waits for it) or none does (absent).
  enum class presence { pinned, absent, unsettled };
  AGIO_HD presence acquire_present(std::uint32_t dev, std::uint64_t block, std::uint32_t& line) const {
    const std::uint64_t tag = block_tag(dev, block);
    const std::uint32_t found = find(tag);
    if (found == no_line) return presence::absent;
    if (!try_hit(found, tag)) return presence::unsettled;
    count_event_alone(state, &cache_counters::hits);
    line = found;
    return presence::pinned;
  }

  // Whether a line holds block `block` of `dev` with its data as the loads find it: a hint that
  // takes no pin (nothing to give back, no acquire or release), so the answer may be stale by
  // the time the caller acts on it. For a caller that only decides what to skip, such as a
  // prefetch past a tier that holds the block, which acquire_present would pin and unpin again.
  AGIO_HD bool holds(std::uint32_t dev, std::uint64_t block) const {
    const std::uint32_t found = find(block_tag(dev, block));
    return found != no_line && holds_data(state_of(detail::load<scope::device>(state.words[found], detail::relaxed)));
  }

  // Puts a clean copy of block `block` of `dev` (line_bytes at `src`) into a line if none holds
  // the block and its set gives up a line at once: a demotion from the cache above
  // (host_tier.hpp). Storage has the block, so giving up loses nothing; a dirty victim it
  // meets is sent to be written back, and the next demotion to the set may find it clean.
  // Returns whether it copied. A line that holds the block already has the same data or newer.
  AGIO_HD bool offer_clean(std::uint32_t dev, std::uint64_t block, const void* src, deadline limit) const {
    if (dev >= io.device_count) return false;
    const std::uint64_t tag = block_tag(dev, block);
    if (find(tag) != no_line) return false;
    const auto copy_in = [&](claim_turn& turn) -> status {
      std::uint32_t claimed = no_line;
      dirty_victim dirty;
      std::uint64_t evicted = no_tag;
      const status s = claim_line_for(tag, claimed, dirty, evicted, turn, limit);
      if (dirty.taken()) (void)write_back(dirty.line, dirty.was);
      if (!s.ok()) return s;
      detail::warp::copy_each<8>(detail::warp::active_lanes(), line_data(claimed), src, state.line_bytes);
      count_event(state, &cache_counters::demotions);
      // Release pairs with readers' acquire when they pin: the data precedes READY.
      change_state(claimed, line_busy, line_ready);
      return s;
    };
    return taking_turns(tag, limit, copy_in).ok();
  }

  // Lets go of `pins` pins of `line` (one access's, or a group's that an array_reader took
  // together).
  AGIO_HD void unpin(std::uint32_t line, std::uint32_t pins = 1) const {
    // Release pairs with the acquire of whoever claims the line next: our accesses come first.
    detail::fetch_add<scope::device>(state.words[line], 0u - pins * pin_unit, detail::release);
  }
  // Adds `pins` pins to a line the caller holds pinned, for lanes it acquired the line for. A
  // pinned line is neither claimed nor cleaned, so its word only changes by pins and the dirty
  // bit, and one fetch_add suffices.
  AGIO_HD void add_pins(std::uint32_t line, std::uint32_t pins) const {
    detail::fetch_add<scope::device>(state.words[line], pins * pin_unit, detail::relaxed);
  }
  // Marks a pinned line MODIFIED (a pinned line is READY or MODIFIED, so one fetch_or does it).
  AGIO_HD void mark_dirty(std::uint32_t line) const {
    detail::fetch_or<scope::device>(state.words[line], dirty_bit, detail::relaxed);
  }

  // acquire_line for an access that writes the line: refused with `stopped` once the cache is
  // closed to writes.
  AGIO_HD status acquire_for_write(std::uint32_t dev, std::uint64_t block, std::uint32_t& line, deadline limit) const {
    const status s = acquire_line(dev, block, line, limit);
    if (!s.ok() || !refuses_writes(line)) return s;
    unpin(line);
    return {outcome::stopped, 0};
  }

  // Whether a writer that holds `line` (pinned, or claimed BUSY) must give up with `stopped`.
  // Dekker with close_to_writes and the stop flush's look at every line (quiet), all seq_cst:
  // the writer updates the line's word (after its pin or claim), then loads the flag; the
  // closer stores the flag, then loads each line's word. In their single total order either
  // this load comes after the close and sees it, or the flush's load of the word comes after
  // this update and sees the line held, and waits until it is let go, by when the write is in
  // the line and the line MODIFIED for the flush to write back. Only writers pay this (one more
  // atomic on a word they already hold); reads never look at the flag.
  AGIO_HD bool refuses_writes(std::uint32_t line) const {
    detail::fetch_or<scope::device>(state.words[line], 0u, detail::seq_cst);
    return detail::load<scope::device>(*state.closed, detail::seq_cst) != 0;
  }
  // Refuses every later write (run once, by the host's stop hook, before its flush).
  AGIO_HD void close_to_writes() const { detail::store<scope::device>(*state.closed, 1u, detail::seq_cst); }

  // --- Device API (AGILE Listing 1) -----------------------------------------------------------

  // Starts loading block `block` of `dev` into the cache and returns at once: success when it
  // is already there, on its way, or skipped because its set has no line to give right now (a
  // prefetch is a hint: the access that needs the block reads it then). Waiting for a line
  // instead would turn a burst of prefetches into threads spinning on full sets, which in a
  // cache smaller than the burst slowed DLRM's async mode below its sync mode. Lanes of a warp
  // asking for the same block send one request (coalesced_until).
  AGIO_HD status prefetch(std::uint32_t dev, std::uint64_t block) const {
    if (dev >= io.device_count) return {outcome::invalid_argument, 0};
    const std::uint64_t tag = block_tag(dev, block);
    const deadline limit = deadline::after_ns(wait_timeout_ns);
    status result{outcome::success, 0};
    coalesced_until(
        tag, limit,
        [&](const detail::warp::lane_group& group) {
          result = taking_turns(tag, limit, [&](claim_turn& turn) -> status {
            if (find(tag) != no_line) return {outcome::success, 0};
            std::uint32_t unused = no_line;
            const status inserted = insert(dev, block, tag, fill_mode::plain, unused, turn, limit, group);
            return inserted.result == outcome::pending ? status{outcome::success, 0} : inserted;
          });
        },
        result);
    return result;
  }

  // Reads block `block` of `dev` into `dst` (line_bytes) through the cache: the fill starts now,
  // the copy happens in wait(). Coherent with every other access through this cache.
  AGIO_HD cache_transaction async_read(std::uint32_t dev, std::uint64_t block, void* dst) const
      requires(!Shares::enabled) {
    const status started = prefetch(dev, block);
    cache_transaction t{block, dst, dev, 0};
    if (!started.ok()) t.immediate = started.pack();
    return t;
  }
  // Writes `src` (line_bytes) as block `block` of `dev` into the cache (the line becomes
  // MODIFIED; storage gets it on eviction or flush). `src` may be reused when this returns.
  AGIO_HD cache_transaction async_write(std::uint32_t dev, std::uint64_t block, const void* src) const {
    status written = before_cache_write(dev, block, 0, state.line_bytes);
    if (written.ok()) {
      written = after_cache_write(dev, block, write_line(dev, block, src, deadline::after_ns(wait_timeout_ns)));
    }
    cache_transaction t{block, nullptr, dev, written.pack()};
    return t;
  }
  AGIO_HD status wait_for(const cache_transaction& t, deadline limit) const {
    if (t.immediate != 0) return status::unpack(t.immediate);
    return read_bytes(t.device, t.block, 0, state.line_bytes, t.destination, limit);
  }
  AGIO_HD status wait(const cache_transaction& t) const { return wait_for(t, deadline::after_ns(wait_timeout_ns)); }

  // With a share table (Shares = share_table; share_table.hpp has the protocol): async_read
  // shares the buffer of an earlier read of the same block; use t.data(), write through
  // write_shared or mark_modified, and release every transaction.
  AGIO_HD share_transaction async_read(std::uint32_t dev, std::uint64_t block, void* dst) const
      requires(Shares::enabled) {
    return shares.async_read(*this, dev, block, dst);
  }
  AGIO_HD status wait_for(const share_transaction& t, deadline limit) const { return shares.wait_for(*this, t, limit); }
  AGIO_HD status wait(const share_transaction& t) const { return wait_for(t, deadline::after_ns(wait_timeout_ns)); }
  AGIO_HD status write_shared(const share_transaction& t, std::uint32_t offset, std::uint32_t bytes,
                              const void* src) const {
    return shares.write_shared(*this, t, offset, bytes, src);
  }
  AGIO_HD status mark_modified(const share_transaction& t, std::uint32_t offset, std::uint32_t bytes) const {
    return shares.mark_modified(*this, t, offset, bytes);
  }
  AGIO_HD status release_for(share_transaction& t, deadline limit) const { return shares.release_for(*this, t, limit); }
  AGIO_HD status release(share_transaction& t) const { return release_for(t, deadline::after_ns(wait_timeout_ns)); }

  // Every cache-path write of [offset, offset + bytes) of a block calls these around it; they
  // keep the share table coherent with the write and are nothing without one.
  AGIO_HD status before_cache_write(std::uint32_t dev, std::uint64_t block, std::uint32_t offset,
                                    std::uint32_t bytes) const {
    if constexpr (Shares::enabled) return shares.before_cache_write(*this, block_tag(dev, block), offset, bytes);
    return {outcome::success, 0};
  }
  AGIO_HD status after_cache_write(std::uint32_t dev, std::uint64_t block, status written) const {
    if constexpr (Shares::enabled) {
      if (written.ok()) return shares.after_cache_write(*this, block_tag(dev, block));
    }
    return written;
  }

  // Synchronous copies of part of a block out of / into the cache.
  AGIO_HD status read_bytes(std::uint32_t dev, std::uint64_t block, std::uint32_t offset, std::uint32_t bytes,
                            void* dst, deadline limit) const {
    std::uint32_t line = no_line;
    const status s = acquire_line(dev, block, line, limit);
    if (!s.ok()) return s;
    detail::shared_copy(dst, line_data(line) + offset, bytes);
    unpin(line);
    return s;
  }
  AGIO_HD status write_bytes(std::uint32_t dev, std::uint64_t block, std::uint32_t offset, std::uint32_t bytes,
                             const void* src, deadline limit) const {
    const status cleared = before_cache_write(dev, block, offset, bytes);
    if (!cleared.ok()) return cleared;
    if (offset == 0 && bytes == state.line_bytes) {
      return after_cache_write(dev, block, write_line(dev, block, src, limit));
    }
    std::uint32_t line = no_line;
    const status s = acquire_for_write(dev, block, line, limit);
    if (!s.ok()) return s;
    detail::shared_copy(line_data(line) + offset, src, bytes);
    mark_dirty(line);
    unpin(line);
    return after_cache_write(dev, block, s);
  }

  // --- Whole-cache operations (run by the host's flush and preload jobs) ----------------------

  // Starts writing back every MODIFIED line (with `failed_too`, every FAILED one too) among
  // lines first, first + stride, ... that no access holds. Returns the first submission
  // failure, if any.
  AGIO_HD status clean(std::uint32_t first, std::uint32_t stride, bool failed_too) const {
    status result{outcome::success, 0};
    for (std::uint32_t line = first; line < state.line_count; line += stride) {
      line_state was = line_invalid;
      if (!start_cleaning(line, failed_too, was)) continue;
      const status s = write_back(line, was);
      if (!s.ok() && result.ok()) result = s;
    }
    return result;
  }
  // True when none of lines first, first + stride, ... is being written back or is MODIFIED (a
  // FAILED line is done with: its write failed).
  AGIO_HD bool clean_done(std::uint32_t first, std::uint32_t stride) const {
    for (std::uint32_t line = first; line < state.line_count; line += stride) {
      const line_state s = state_of(detail::load<scope::device>(state.words[line], detail::acquire));
      if (s == line_cleaning || s == line_modified) return false;
    }
    return true;
  }
  // The first of lines first, first + stride, ... whose write-back failed, or no_line; with its
  // write's status in `failed`.
  AGIO_HD std::uint32_t first_failed(std::uint32_t first, std::uint32_t stride, status& failed) const {
    for (std::uint32_t line = first; line < state.line_count; line += stride) {
      // Acquire pairs with the completion's release of FAILED: the status stored before it is in.
      if (state_of(detail::load<scope::device>(state.words[line], detail::acquire)) == line_failed) {
        failed = failure_of(line);
        return line;
      }
    }
    return no_line;
  }
  // True when `line` is neither BUSY nor held by an access. Seen once after close_to_writes,
  // every write that got into the line before the close is in it (seq_cst: refuses_writes).
  AGIO_HD bool quiet(std::uint32_t line) const {
    const std::uint32_t word = detail::load<scope::device>(state.words[line], detail::seq_cst);
    return state_of(word) != line_busy &&
           pins_of(word) == detail::load<scope::device>(state.orphan_pins[line], detail::relaxed);
  }

  // Which cache this handle is a handle of: lanes of a warp coalesce only with lanes of the same
  // cache (a line index or a block's tag means nothing in another).
  AGIO_HD std::uint64_t cache_id() const { return reinterpret_cast<std::uint64_t>(state.words); }

  // Runs `body(group)` once per group of lanes of the calling warp that pass the same `key` to
  // the same cache, on the group's leader while the others wait as its crew (led), and gives
  // every lane of the group the leader's `result`. Returns the group, for callers that share
  // more of the leader's work.
  template <class Body>
  AGIO_HD detail::warp::lane_group coalesced(std::uint64_t key, Body&& body, status& result) const {
    const detail::warp::lane_group group = detail::warp::group_by(key, cache_id());
    led(
        group,
        [&] {
          body(group);
          const std::uint32_t lanes = detail::warp::count(group.mask);
          if (lanes != 1) count_event(state, &cache_counters::coalesced_in_warp, lanes - 1);
        },
        result);
    return group;
  }
  // Runs `body()` on the leader of `crew` while the crew's other lanes wait, lending it their
  // hands for the copies the I/O handle makes on the way if it copies with crews (warp.hpp), and
  // gives every lane the leader's `result`. `body` passes `crew` to what it calls here
  // (acquire_line, insert) and must not wait for the other lanes.
  template <class Body>
  AGIO_HD void led(const detail::warp::lane_group& crew, Body&& body, status& result) const {
    if (detail::warp::leads(crew)) {
      body();
      if constexpr (crew_copies) detail::warp::dismiss(crew);
    } else if constexpr (crew_copies) {
      detail::warp::serve(crew);
    }
    result = status::unpack(detail::warp::from_leader(crew, result.pack()));
  }
  // `coalesced` for an access that waits under its own deadline `limit`: the group waits under
  // its leader's deadline, and a lane whose own has not passed when the leader's did tries
  // again, in a new group (lanes of one warp may use handles with other timeouts). Returns the
  // last group, whose leader's `result` every lane of it has.
  template <class Body>
  AGIO_HD detail::warp::lane_group coalesced_until(std::uint64_t key, deadline limit, Body&& body,
                                                   status& result) const {
    detail::warp::lane_group group;
    do {
      group = coalesced(key, body, result);
    } while (result.result == outcome::timeout && !limit.passed());
    return group;
  }

 private:
  enum class fill_mode { plain, reserve };

  // Whether a clean line this cache evicts goes down to the level below (a host tier's I/O).
  static constexpr bool demotes = demotes_clean_lines<IO>;
  // Whether fills are copied by the lanes they are made for (a host tier's I/O).
  static constexpr bool crew_copies = copies_with_crew<IO>;
  // Whether fills and write-backs are posted to the completion service (io_handle's I/O).
  static constexpr bool posts = posts_to_service<IO>;

  // A MODIFIED line that claim_line_for took for write-back (CLEANING) instead of a claim.
  struct dirty_victim {
    std::uint32_t line = no_line;
    line_state was = line_invalid;
    AGIO_HD bool taken() const { return line != no_line; }
  };
  // A fill or write-back of a line, with the signal its completion publishes.
  struct line_request {
    spec::opcode op;
    std::uint32_t dev;
    std::uint64_t lba;
    std::uint32_t lbas;
    std::uint32_t line;
    completion_signal signal;
    // If the service refuses a posted request: a fill's line ends INVALID and untagged (the
    // requester's reserved pin on it), a write-back's as it was before its cleaning. Like the
    // signal's, a change added to the line's word.
    std::uint32_t on_refusal;
    std::uint64_t* cleared_on_refusal;
  };

  // The status a failed fill or write-back of `line` stored (nvme_error if it stored none).
  AGIO_HD status failure_of(std::uint32_t line) const {
    const status failed = status::unpack(detail::load<scope::device>(state.fill_status[line], detail::relaxed));
    return failed.ok() || !failed.finished() ? status{outcome::nvme_error, 0} : failed;
  }

  // Runs `attempt(turn)`, an access's retry loop, and passes on the turn it may still hold.
  template <class Attempt>
  AGIO_HD status taking_turns(std::uint64_t tag, deadline limit, Attempt&& attempt) const {
    claim_turn turn;
    const status result = attempt(turn);
    if (turn.queued) turn.leave(state, policy.set_of(state, tag), limit);
    return result;
  }

  AGIO_HD std::uint64_t load_tag(std::uint32_t line) const {
    return detail::load<scope::device>(state.tags[line], detail::relaxed);
  }

  AGIO_HD std::uint32_t find(std::uint64_t tag) const {
    const std::uint32_t first = policy.set_of(state, tag) * state.ways;
    // No early exit: the loads of all ways go out together instead of one after another (a
    // block is in at most one line of its set). The ways are taken eight at a time, a loop of
    // fixed count the compiler unrolls, with no branch between the loads (past the last way
    // the last is loaded again), so that a set of eight (the default) costs one trip to
    // memory: a loop over the run-time way count, unrolled four at a time, cost two.
    constexpr std::uint32_t together = Policy::fixed_ways != 0 && Policy::fixed_ways < 8 ? Policy::fixed_ways : 8;
    const std::uint32_t last = state.ways - 1;
    std::uint32_t found = no_line;
    for (std::uint32_t base = 0; base <= last; base += together) {
      for (std::uint32_t k = 0; k < together; ++k) {
        const std::uint32_t way = base + k < last ? base + k : last;
        if (load_tag(first + way) == tag) found = first + way;
      }
    }
    return found;
  }

  // Pins `line` if it holds `tag` with data, and tells the policy of the hit. The tag is
  // checked again after pinning: a line is retagged only while claimed (BUSY, unpinned), so a
  // pinned line that shows our tag is ours.
  AGIO_HD bool try_hit(std::uint32_t line, std::uint64_t tag) const {
    // The pin is an atomic add, taken back if the line held no data: a compare-and-swap fails
    // whenever another warp's pin or unpin changed the word since, and the 32 warps that read
    // one line at once in the array view retried 15 times a pin (line.hpp says what keeps the
    // add safe). Acquire pairs with the release of the change that made the line hold data:
    // the data is in place.
    if (!holds_data(state_of(detail::fetch_add<scope::device>(state.words[line], pin_unit, detail::acquire)))) {
      // Relaxed: the pin covered no access.
      detail::fetch_add<scope::device>(state.words[line], 0u - pin_unit, detail::relaxed);
      return false;
    }
    // The policy's loads go out beside the tag's instead of a trip after it. If the line turns
    // out to hold another block (retagged between find and the pin), the policy was told of a
    // hit on it: a replacement hint gone astray, in a race that costs the access a retry anyway.
    const std::uint64_t held = load_tag(line);
    policy.on_hit(state, line);
    if (held == tag) return true;
    unpin(line);
    return false;
  }

  // Moves `line`, which the caller holds in state `from` (claimed BUSY, or CLEANING), to `to`,
  // keeping its pins (line.hpp). Release: the caller's writes to the line precede the change.
  AGIO_HD void change_state(std::uint32_t line, line_state from, line_state to) const {
    detail::fetch_add<scope::device>(state.words[line], state_change(from, to), detail::release);
  }
  // Reports the failure of the caller's own fill of `line`, which still carries the caller's
  // reserved pin: nobody can claim the line until that pin goes, so no lock is needed to untag
  // it, and the status read is this fill's.
  AGIO_HD status take_own_fill_failure(std::uint32_t line) const {
    const status failed = failure_of(line);
    detail::store<scope::device>(state.tags[line], no_tag, detail::relaxed);
    unpin(line);  // its release orders the untagging before the next claim's retagging
    return failed;
  }
  // For an access that found a failed fill of `tag` it did not request (it waited on it):
  // returns that fill's status and untags the line, so the next access tries storage again;
  // pending if the line no longer holds that failure; the lock's status if it was not taken by
  // `limit` (the tag then stays, and the next access reports the failure again). Under the set
  // lock: a line leaves INVALID only when claimed, under that lock, so the check, the status
  // read and the untagging cannot straddle a new fill of the line (whose status would be
  // reported, or which a stale untagging would orphan, leaving its data unreachable and a
  // second copy of the block free to appear).
  AGIO_HD status forget_failed_fill(std::uint32_t line, std::uint64_t tag, deadline limit) const {
    const std::uint32_t set = line / state.ways;
    const lock_name name{lock_kind::cache_set, set};
    const status locked = locks.acquire(state.set_locks[set], name, limit);
    if (!locked.ok()) return locked;
    status failed{outcome::pending, 0};
    // Acquire pairs with the completion's release of INVALID: the status stored before it is in.
    if (state_of(detail::load<scope::device>(state.words[line], detail::acquire)) == line_invalid &&
        load_tag(line) == tag) {
      failed = failure_of(line);
      detail::store<scope::device>(state.tags[line], no_tag, detail::relaxed);
    }
    locks.release(state.set_locks[set], name);
    return failed;
  }

  // A line may be given up when it holds nothing, or clean data, or dirty data that can be
  // written back first, and nobody but waiters that gave up holds a pin on it. Not a FAILED
  // line: storage refused its data, which lives only there.
  // Both words are loaded before either is looked at: one trip to memory per line while a
  // policy scans its set under the lock.
  AGIO_HD bool evictable(std::uint32_t line) const {
    const std::uint32_t word = detail::load<scope::device>(state.words[line], detail::relaxed);
    const std::uint32_t orphans = detail::load<scope::device>(state.orphan_pins[line], detail::relaxed);
    const line_state s = state_of(word);
    return (s == line_invalid || s == line_ready || s == line_modified) && pins_of(word) == orphans;
  }

  // Whether a claim in `set` may get somewhere under the set's lock: some line of it may be
  // given up now, or every line is FAILED (the claim reports the write-back's error). A look
  // without the lock, which the claim repeats under it. Reporting the failure from here instead,
  // or looking for it with set_failure's loop of acquire loads after this one, took SpMV's
  // kernel to 81 registers, one over its budget (check_registers.py, 2026-11-30).
  AGIO_HD bool worth_locking(std::uint32_t set) const {
    const std::uint32_t first = set * state.ways;
    bool all_failed = true;
    for (std::uint32_t way = 0; way < state.ways; ++way) {
      if (evictable(first + way)) return true;
      all_failed =
          all_failed && state_of(detail::load<scope::device>(state.words[first + way], detail::relaxed)) == line_failed;
    }
    return all_failed;
  }

  // The write-back failure of `set` when every line of it is FAILED (no line of it can be
  // given up before a flush succeeds), else success.
  AGIO_HD status set_failure(std::uint32_t set) const {
    const std::uint32_t first = set * state.ways;
    for (std::uint32_t way = 0; way < state.ways; ++way) {
      // Acquire pairs with the completion's release of FAILED: the status stored before it is in.
      if (state_of(detail::load<scope::device>(state.words[first + way], detail::acquire)) != line_failed) {
        return {outcome::success, 0};
      }
    }
    return failure_of(first);
  }

  // Takes a MODIFIED line (with `failed_too`, a FAILED one too) that no access holds for
  // write-back (-> CLEANING, orphaned pins kept); `was` is the state it had.
  AGIO_HD bool start_cleaning(std::uint32_t line, bool failed_too, line_state& was) const {
    std::uint32_t word = detail::load<scope::device>(state.words[line], detail::relaxed);
    was = state_of(word);
    if ((was != line_modified && !(failed_too && was == line_failed)) ||
        pins_of(word) != detail::load<scope::device>(state.orphan_pins[line], detail::relaxed)) {
      return false;
    }
    // Acquire pairs with the last writer's unpin: its data is what we write back.
    return detail::compare_exchange<scope::device>(state.words[line], word, line_word(line_cleaning, pins_of(word)),
                                                   detail::acquire);
  }

  // Inserts `tag` into its set. Returns success with `line` claimed (fill_mode::reserve: READY
  // and pinned once the fill lands), an error, or pending when the caller should look again
  // (the block appeared meanwhile, or no line of the set could be taken yet).
  AGIO_HD status insert(std::uint32_t dev, std::uint64_t block, std::uint64_t tag, fill_mode mode, std::uint32_t& line,
                        claim_turn& turn, deadline limit, const detail::warp::lane_group& crew,
                        on_contention contention = on_contention::wait) const {
    std::uint32_t victim = no_line;
    dirty_victim dirty;
    std::uint64_t evicted = no_tag;
    const status claimed = claim_line_for(tag, victim, dirty, evicted, turn, limit, contention);
    if (!dirty.taken() && !claimed.ok()) return claimed;
    demote(victim, evicted);
    // One submission for the fill or the write-back, whichever this is: submitting either in a
    // place of its own inlined the I/O handle's submission twice into every kernel that may
    // miss, and each copy set a register peak (the graph kernels' BFS: 84 registers, 78 this
    // way, two blocks of 256 threads per SM or three; sm_90, 2026-11-26).
    const line_request r = request_for(dev, block, victim, mode, dirty);
    count_event(state, dirty.taken() ? &cache_counters::write_backs : &cache_counters::misses);
    const status issued = submit(r, crew);
    if (dirty.taken()) {
      const status s = after_write_back(r, dirty.was, issued);
      return s.ok() ? status{outcome::pending, 0} : s;
    }
    return after_fill(dev, victim, mode, line, limit, issued);
  }

  // Under the set's lock, takes a line of `tag`'s set for it: the line ends BUSY, unpinned and
  // tagged, for the caller to fill or overwrite and publish. A dirty victim is taken for
  // write-back instead (CLEANING, in `dirty`), for the caller to write back, and pending
  // returned (case (d)): it is taken once it is clean. Claims are served in `turn` order once
  // an access keeps losing (claim_turn.hpp). Where this cache demotes, `evicted` gets the tag
  // of the clean block the line held (its data stays until the caller overwrites it).
  //
  // The lock is taken only while the set has a line to give, looked at first without it: every
  // access that misses a full set would otherwise queue on the lock to find nothing under it,
  // and the accesses that could give lines back queue behind them. An access that gives up
  // (on_contention::give_up: it holds other lines) takes the lock only if it is free, and
  // returns pending instead of waiting. 1024 GPU threads with two array readers each through
  // an eight-line cache (one set) crawled for seconds that way, every line pinned by a warp
  // that waited for the lock holding it while thirty warps' leaders spun on the lock
  // (GPU core dumps and the lines' words, H200, 2026-11-30).
  AGIO_HD status claim_line_for(std::uint64_t tag, std::uint32_t& line, dirty_victim& dirty, std::uint64_t& evicted,
                                claim_turn& turn, deadline limit,
                                on_contention contention = on_contention::wait) const {
    const std::uint32_t set = policy.set_of(state, tag);
    // An access that asks for its turn takes the lock to register even while the set is full.
    if (!turn.would_queue(limit, wait_timeout_ns) && !worth_locking(set)) return {outcome::pending, 0};
    std::uint32_t& set_lock = state.set_locks[set];
    const lock_name name{lock_kind::cache_set, set};
    const bool waits = contention == on_contention::wait;
    // A deadline already passed: one try.
    const status locked = locks.acquire(set_lock, name, waits ? limit : deadline{0});
    if (!locked.ok()) return waits ? locked : status{outcome::pending, 0};
    if (find(tag) != no_line) {
      locks.release(set_lock, name);
      return {outcome::pending, 0};
    }
    const std::uint32_t victim = turn.may_claim(state, set, limit, wait_timeout_ns)
                                     ? policy.victim(
                                           state, set, [this](std::uint32_t l) { return evictable(l); }, locks)
                                     : no_line;
    if (victim == no_line) {
      const status failed = set_failure(set);
      locks.release(set_lock, name);
      return failed.ok() ? status{outcome::pending, 0} : failed;
    }
    line_state was = line_invalid;
    if (start_cleaning(victim, false, was)) {
      locks.release(set_lock, name);
      dirty = {victim, was};
      return {outcome::pending, 0};
    }
    if (!try_claim(victim, was)) {
      locks.release(set_lock, name);
      return {outcome::pending, 0};
    }
    turn.claimed(state, set, limit);
    const std::uint64_t held = load_tag(victim);
    if (was == line_ready && held != no_tag) {
      count_event(state, &cache_counters::evictions);
      if constexpr (demotes) evicted = held;
    }
    detail::store<scope::device>(state.tags[victim], tag, detail::relaxed);
    policy.on_insert(state, set, victim);
    locks.release(set_lock, name);
    line = victim;
    return {outcome::success, 0};
  }

  // Claims an evictable line (INVALID or READY, with no live pin): the state word is checked
  // and swapped in one step, so a pin taken since the policy looked makes the claim fail.
  AGIO_HD bool try_claim(std::uint32_t line, line_state& was) const {
    std::uint32_t word = detail::load<scope::device>(state.words[line], detail::relaxed);
    was = state_of(word);
    if ((was != line_invalid && was != line_ready) ||
        pins_of(word) != detail::load<scope::device>(state.orphan_pins[line], detail::relaxed)) {
      return false;
    }
    // Acquire pairs with the last unpin: every access to the old contents is done.
    if (!detail::compare_exchange<scope::device>(state.words[line], word, line_word(line_busy), detail::acquire)) {
      return false;
    }
    // Orphaned pins go with the old contents.
    detail::store<scope::device>(state.orphan_pins[line], 0u, detail::relaxed);
    return true;
  }

  // What insert() submits: the read of `block` into the claimed (BUSY) line `victim`, or the
  // write-back of the line claim_line_for took instead (`dirty`). The completion publishes the
  // line's new state, a change added to its word (line.hpp). A fill's reserved pin
  // (fill_mode::reserve) comes with either outcome: the line stays ours until we let go of it,
  // so the state after_fill sees is our fill's, not a later fill's of another block. A
  // write-back keeps the pins of waiters that gave up, which the add leaves alone.
  // Either completion counts a failure (in the first stripe), so that requests nobody waits
  // for (prefetches, requesters that gave up, write-backs) are counted too. One request built
  // with selects rather than one of two built in branches: the latter cost the graph kernels'
  // CC 14 registers more (sm_90, 2026-11-26).
  AGIO_HD line_request request_for(std::uint32_t dev, std::uint64_t block, std::uint32_t victim, fill_mode mode,
                                   const dirty_victim& dirty) const {
    const bool writes = dirty.taken();
    const std::uint32_t line = writes ? dirty.line : victim;
    // A write-back's block is the one its line's tag names; a fill's is the caller's, whole.
    const std::uint64_t tag = writes ? load_tag(line) : no_tag;
    const std::uint32_t device = writes ? tag_device(tag) : dev;
    const std::uint64_t first = writes ? tag_block(tag) : block;
    const std::uint32_t lbas = lbas_per_line(device);
    const line_state from = writes ? line_cleaning : line_busy;
    const std::uint32_t reserved = !writes && mode == fill_mode::reserve ? 1 : 0;
    return {writes ? spec::opcode::write : spec::opcode::read,
            device,
            first * lbas,
            lbas,
            line,
            {&state.words[line], state_change(from, line_ready, reserved),
             state_change(from, writes ? line_failed : line_invalid, reserved), &state.fill_status[line],
             writes ? &state.counters[0].write_back_failures : &state.counters[0].fill_failures},
            state_change(from, writes ? dirty.was : line_invalid, reserved),
            writes ? nullptr : &state.tags[line]};
  }
  // Submits `r`, with the lanes of `crew` to copy if the I/O handle copies with crews, or posts
  // it for the completion service to submit if the handle posts. Posting took the graph
  // kernels' registers from 80 / 96 / 87 (BFS, SpMV, CC) to 62 / 78 / 68 and their hits
  // through a preloaded cache from 2.8x / 2.2x native to 2.3x / 2.0x (H200, 2026-11-29).
  AGIO_HD status submit(const line_request& r, [[maybe_unused]] const detail::warp::lane_group& crew) const {
    if constexpr (crew_copies) {
      return io.async_signalled(r.op, r.dev, r.lba, r.lbas, line_data(r.line), r.signal, crew);
    } else if constexpr (posts) {
      return io.post_signalled(r.op, r.dev, r.lba, r.lbas, line_data(r.line), r.signal, r.on_refusal,
                               r.cleared_on_refusal);
    } else {
      return io.async_signalled(r.op, r.dev, r.lba, r.lbas, line_data(r.line), r.signal);
    }
  }
  // The rest of a fill once its read was submitted (`issued`): with fill_mode::reserve, waits
  // for it and returns the line pinned.
  AGIO_HD status after_fill(std::uint32_t dev, std::uint32_t victim, fill_mode mode, std::uint32_t& line,
                            deadline limit, status issued) const {
    if (!issued.ok()) {
      detail::store<scope::device>(state.fill_status[victim], issued.pack(), detail::relaxed);
      detail::store<scope::device>(state.tags[victim], no_tag, detail::relaxed);
      change_state(victim, line_busy, line_invalid);
      return issued;
    }
    if (mode == fill_mode::plain) return {outcome::success, 0};
    // Wait for our fill without holding anything but the reservation it will carry.
    std::uint32_t word = 0;
    const bool landed = detail::poll_until(
        [&] {
          word = detail::load<scope::device>(state.words[victim], detail::acquire);
          if (state_of(word) != line_busy) return true;
          io.help_retire(dev);
          return false;
        },
        limit, detail::io_wait_max_sleep_ns);
    if (!landed) {
      // The reserved pin arrives with the fill, whichever way it ends, and nobody will release
      // it: mark it orphaned so the line can still be given up. Until then the pin is live and
      // the line cannot be claimed, so the orphan is this fill's, never a later one's.
      detail::fetch_add<scope::device>(state.orphan_pins[victim], 1u, detail::relaxed);
      return {outcome::timeout, 0};
    }
    // Others may have pinned and written the line since it landed (READY, MODIFIED, even
    // FAILED after a write-back): all carry our reserved pin. Only INVALID means the read failed.
    if (state_of(word) == line_invalid) return take_own_fill_failure(victim);
    line = victim;
    return {outcome::success, 0};
  }

  // Hands the clean block `evicted` that the claimed `line` still holds to the level below, if
  // this cache demotes (else nothing is compiled).
  AGIO_HD void demote(std::uint32_t line, std::uint64_t evicted) const {
    if constexpr (demotes) {
      if (evicted != no_tag) io.demote(tag_device(evicted), tag_block(evicted), line_data(line));
    }
  }

  // Writes a CLEANING line's block back; the completion makes it READY, or FAILED (the data
  // stays in the cache and is not lost). A write that cannot be submitted leaves the line as it
  // was (`was`).
  AGIO_HD status write_back(std::uint32_t line, line_state was) const {
    const line_request r = request_for(0, 0, no_line, fill_mode::plain, {line, was});
    count_event(state, &cache_counters::write_backs);
    return after_write_back(r, was, submit(r, detail::warp::alone()));
  }
  AGIO_HD status after_write_back(const line_request& r, line_state was, status issued) const {
    if (!issued.ok()) change_state(r.line, line_cleaning, was);
    return issued;
  }

  // Writes a whole line: claims it without reading storage if absent, else overwrites it pinned.
  AGIO_HD status write_line(std::uint32_t dev, std::uint64_t block, const void* src, deadline limit) const {
    if (dev >= io.device_count) return {outcome::invalid_argument, 0};
    const std::uint64_t tag = block_tag(dev, block);
    return taking_turns(tag, limit, [&](claim_turn& turn) -> status {
      detail::backoff wait(detail::io_wait_max_sleep_ns);
      for (;;) {
        const std::uint32_t found = find(tag);
        if (found != no_line && try_hit(found, tag)) {
          if (refuses_writes(found)) {
            unpin(found);
            return {outcome::stopped, 0};
          }
          count_event(state, &cache_counters::hits);
          detail::shared_copy(line_data(found), src, state.line_bytes);
          mark_dirty(found);
          unpin(found);
          return {outcome::success, 0};
        }
        if (found != no_line &&
            state_of(detail::load<scope::device>(state.words[found], detail::relaxed)) == line_invalid) {
          // A failed fill of this block: the write replaces it.
          const status forgotten = forget_failed_fill(found, tag, limit);
          if (forgotten.result == outcome::timeout || forgotten.result == outcome::deadlock) return forgotten;
        } else if (found == no_line) {
          std::uint32_t claimed = no_line;
          dirty_victim dirty;
          std::uint64_t evicted = no_tag;
          status s = claim_line_for(tag, claimed, dirty, evicted, turn, limit);
          demote(claimed, evicted);
          if (dirty.taken()) {
            const status written = write_back(dirty.line, dirty.was);
            s = written.ok() ? status{outcome::pending, 0} : written;
          }
          if (s.ok() && refuses_writes(claimed)) {
            // The claimed line goes back empty (release: its untagging precedes the next claim).
            detail::store<scope::device>(state.tags[claimed], no_tag, detail::relaxed);
            change_state(claimed, line_busy, line_invalid);
            return {outcome::stopped, 0};
          }
          if (s.ok()) {
            detail::thread_copy(line_data(claimed), src, state.line_bytes);
            // Release pairs with readers' acquire when they pin: the data precedes MODIFIED.
            change_state(claimed, line_busy, line_modified);
            return s;
          }
          if (s.result != outcome::pending) return s;
        }
        if (limit.passed()) return {outcome::timeout, 0};
        io.help_retire(dev);
        wait.pause();
      }
    });
  }
};

}  // namespace agio::cache
