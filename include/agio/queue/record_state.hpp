#pragma once
// The one word that says who holds a transaction record and how its request ended, so that a
// handle can tell its own request from a later one on the same record (controller.hpp) and a
// record comes back whatever its waiter does.
//
//   bits  0..31  the result, status::pack(); 0 while the request is pending
//   bit  32      taken: a submitter holds the record
//   bit  33      abandoned: the waiter gave up (its deadline passed) before the result came
//   bits 34..63  generation, advanced each time the record is taken; a handle carries it
//
// A record may be taken when it is free, or when it is finished and abandoned: an abandoned
// result stays collectable by a waiter that comes back until the record is needed again.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::io::record_state {

inline constexpr std::uint64_t result_bits = 0xffff'ffffull;
inline constexpr std::uint64_t taken = 1ull << 32;
inline constexpr std::uint64_t abandoned = 1ull << 33;
inline constexpr unsigned generation_shift = 34;
inline constexpr std::uint32_t generation_mask = (1u << (64 - generation_shift)) - 1;

AGIO_HD constexpr std::uint32_t generation(std::uint64_t word) {
  return static_cast<std::uint32_t>(word >> generation_shift);
}
AGIO_HD constexpr std::uint32_t result(std::uint64_t word) { return static_cast<std::uint32_t>(word & result_bits); }
AGIO_HD constexpr bool finished(std::uint64_t word) { return result(word) != 0; }
AGIO_HD constexpr bool is_abandoned(std::uint64_t word) { return (word & abandoned) != 0; }

// Whether a handle of `gen` still owns the record: taken, and not taken again since.
AGIO_HD constexpr bool held_by(std::uint64_t word, std::uint32_t gen) {
  return (word & taken) != 0 && generation(word) == gen;
}
AGIO_HD constexpr bool claimable(std::uint64_t word) {
  return (word & taken) == 0 || (finished(word) && is_abandoned(word));
}
// The word of a record just taken from `word`: the next generation, nothing finished yet.
AGIO_HD constexpr std::uint64_t taken_from(std::uint64_t word) {
  return (std::uint64_t{(generation(word) + 1) & generation_mask} << generation_shift) | taken;
}
// The word of a record given back: free, same generation, so that the handle that gave it
// back is stale from now on.
AGIO_HD constexpr std::uint64_t given_back(std::uint64_t word) {
  return std::uint64_t{generation(word)} << generation_shift;
}

}  // namespace agio::io::record_state
