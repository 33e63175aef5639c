#pragma once
// The state of one cache line (AGILE §3.4), packed with its pin count into one 32-bit word so
// that "is it usable, and is anybody using it" changes in a single atomic step.
//
//   INVALID   holds nothing, or the remains of a fill that failed (the line's fill status says
//             why; its tag stays until the failure has been reported)
//   BUSY      being filled from storage, or claimed by a writer of a whole line
//   READY     holds its block, same as storage
//   MODIFIED  holds its block, newer than storage
//   CLEANING  MODIFIED or FAILED data being written back; becomes READY, or FAILED if the write
//             fails
//   FAILED    holds its block, newer than storage, and its last write-back failed (the fill
//             status says why). Reads and writes use it like MODIFIED; it is never evicted, so
//             its data is not lost; only flush() writes it back again.
//
// A pin is one access in progress (a copy in or out, a warp reading elements). Only READY,
// MODIFIED and FAILED lines can be pinned by accesses. A reader pins by adding a pin to the word
// whatever its state, and takes it back if the state it added to holds no data; so every other
// change of a word is an atomic add (state_change) or a compare-and-swap of the exact word,
// which keeps such a passing pin for its owner to take back. A fill made for an access carries
// one pin for its requester whichever way it ends, so the requester knows the outcome it sees
// is its own fill's: an INVALID line keeps that pin until its requester has read the failure. A requester
// that gives up before its fill lands turns its pin into an orphan (cache_state::orphan_pins).
// Only lines whose pins are all orphans can be claimed for eviction or cleaning, so a pinned
// line's tag and data stay put. Nothing holds a pin while it waits for I/O.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::cache {

enum line_state : std::uint32_t {
  line_invalid = 0,
  line_busy = 1,
  line_ready = 2,
  line_modified = 3,
  line_cleaning = 4,
  line_failed = 7,
};

inline constexpr std::uint32_t state_mask = 7;
inline constexpr std::uint32_t pin_unit = 8;
// READY | dirty_bit == MODIFIED and FAILED | dirty_bit == FAILED: a writer marks any pinned line
// dirty with one fetch_or.
inline constexpr std::uint32_t dirty_bit = 1;

AGIO_HD constexpr line_state state_of(std::uint32_t word) { return static_cast<line_state>(word & state_mask); }
AGIO_HD constexpr std::uint32_t pins_of(std::uint32_t word) { return word / pin_unit; }
AGIO_HD constexpr std::uint32_t line_word(line_state state, std::uint32_t pins = 0) { return state | pins * pin_unit; }
// What adding to a word (modulo 2^32) turns a line in state `from` into one in state `to` with
// `pins` more pins, whatever pins it holds.
AGIO_HD constexpr std::uint32_t state_change(line_state from, line_state to, std::uint32_t pins = 0) {
  return line_word(to, pins) - line_word(from);
}
static_assert(line_word(line_busy, 3) + state_change(line_busy, line_invalid, 1) == line_word(line_invalid, 4));
// READY, MODIFIED and FAILED (the states with bit 1 set): one test on the hit path.
AGIO_HD constexpr bool holds_data(line_state s) { return (s & 2u) != 0; }
static_assert(holds_data(line_ready) && holds_data(line_modified) && holds_data(line_failed) &&
              !holds_data(line_invalid) && !holds_data(line_busy) && !holds_data(line_cleaning));
static_assert((line_ready | dirty_bit) == line_modified && (line_failed | dirty_bit) == line_failed);

// Which block a line holds: the device in the top byte, the block (in line units) below.
inline constexpr std::uint64_t no_tag = ~std::uint64_t{0};
AGIO_HD constexpr std::uint64_t block_tag(std::uint32_t dev, std::uint64_t block) {
  return std::uint64_t{dev} << 56 | block;
}
AGIO_HD constexpr std::uint32_t tag_device(std::uint64_t tag) { return static_cast<std::uint32_t>(tag >> 56); }
AGIO_HD constexpr std::uint64_t tag_block(std::uint64_t tag) { return tag & ((std::uint64_t{1} << 56) - 1); }

}  // namespace agio::cache
