#pragma once
// The content the crash test writes: each 4 KiB block names itself, carries a sequence number
// that grows with every write of that block, and a payload derived from both with a checksum,
// so the parent can tell, from the file alone, which write of a block is there and whether it
// is whole.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

namespace agio::crash {

inline constexpr std::uint32_t block_bytes = 4096;
inline constexpr std::uint64_t record_magic = 0x6167696f'63726173ull;  // "agiocras"

struct record_header {
  std::uint64_t magic;
  std::uint64_t block;
  std::uint64_t sequence;  // (round << 32) | write count of this block in that round; 0: never written
  std::uint64_t checksum;  // over block, sequence and the payload
};
inline constexpr std::size_t payload_words = (block_bytes - sizeof(record_header)) / 8;

inline std::uint64_t splitmix(std::uint64_t& x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

inline std::uint64_t checksum_of(std::uint64_t block, std::uint64_t sequence, std::span<const std::uint64_t> payload) {
  std::uint64_t h = 0xcbf29ce484222325ull ^ block;
  h = (h ^ sequence) * 0x100000001b3ull;
  for (const std::uint64_t w : payload) h = (h ^ w) * 0x100000001b3ull;
  return h;
}

// Fills `out` (block_bytes) with write `sequence` of `block`.
inline void make_record(std::uint64_t block, std::uint64_t sequence, std::byte* out) {
  std::uint64_t payload[payload_words];
  std::uint64_t state = block * 0x1000193ull ^ sequence;
  for (std::uint64_t& w : payload) w = splitmix(state);
  const record_header header{record_magic, block, sequence, checksum_of(block, sequence, payload)};
  std::memcpy(out, &header, sizeof header);
  std::memcpy(out + sizeof header, payload, sizeof payload);
}

// The sequence stored in `in` if it is a whole record of `block`, 0 if the block was never
// written (all zero), nothing if it is torn, foreign or corrupt.
inline std::optional<std::uint64_t> read_record(std::uint64_t block, const std::byte* in) {
  record_header header;
  std::memcpy(&header, in, sizeof header);
  bool zero = true;
  for (std::uint32_t i = 0; i < block_bytes && zero; ++i) zero = in[i] == std::byte{0};
  if (zero) return 0;
  if (header.magic != record_magic || header.block != block || header.sequence == 0) return std::nullopt;
  std::byte expected[block_bytes];
  make_record(block, header.sequence, expected);
  if (std::memcmp(expected, in, block_bytes) != 0) return std::nullopt;
  return header.sequence;
}

// What the child sends the parent for each write it has made durable: 16 bytes, written with
// one write(2) so that records from several threads never interleave in the pipe.
struct report {
  std::uint64_t block;
  std::uint64_t sequence;
};

}  // namespace agio::crash
