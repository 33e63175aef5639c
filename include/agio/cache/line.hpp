#pragma once
// The state of one cache line (AGILE §3.4), packed with its pin count into one 32-bit word so
// that "is it usable, and is anybody using it" changes in a single atomic step.
//
//   INVALID   holds nothing (or a fill that failed; the line's fill status says why)
//   BUSY      being filled from storage, or claimed by a writer of a whole line
//   READY     holds its block, same as storage
//   MODIFIED  holds its block, newer than storage
//   CLEANING  MODIFIED data being written back; becomes READY (or MODIFIED again on failure)
//
// A pin is one access in progress (a copy in or out, a warp reading elements). Only READY and
// MODIFIED lines can be pinned, and only unpinned lines can be claimed for eviction or
// cleaning, so a pinned line's tag and data stay put. Nothing holds a pin while it waits for
// I/O.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::cache {

enum line_state : std::uint32_t { line_invalid = 0, line_busy = 1, line_ready = 2, line_modified = 3, line_cleaning = 4 };

inline constexpr std::uint32_t state_mask = 7;
inline constexpr std::uint32_t pin_unit = 8;
// READY | dirty_bit == MODIFIED: a writer marks a pinned READY line dirty with one fetch_or.
inline constexpr std::uint32_t dirty_bit = 1;

AGIO_HD constexpr line_state state_of(std::uint32_t word) { return static_cast<line_state>(word & state_mask); }
AGIO_HD constexpr std::uint32_t pins_of(std::uint32_t word) { return word / pin_unit; }
AGIO_HD constexpr std::uint32_t line_word(line_state state, std::uint32_t pins = 0) { return state | pins * pin_unit; }
AGIO_HD constexpr bool holds_data(line_state s) { return s == line_ready || s == line_modified; }

// Which block a line holds: the device in the top byte, the block (in line units) below.
inline constexpr std::uint64_t no_tag = ~std::uint64_t{0};
AGIO_HD constexpr std::uint64_t tag_of(std::uint32_t dev, std::uint64_t block) {
  return std::uint64_t{dev} << 56 | block;
}
AGIO_HD constexpr std::uint32_t tag_device(std::uint64_t tag) { return static_cast<std::uint32_t>(tag >> 56); }
AGIO_HD constexpr std::uint64_t tag_block(std::uint64_t tag) { return tag & ((std::uint64_t{1} << 56) - 1); }

}  // namespace agio::cache
