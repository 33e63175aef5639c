#pragma once
// Physical Region Page entries (NVMe Base 2.0 §4.1.1). With a memory page size of 4 KiB a
// transfer names its pages through PRP1 (first page, may carry a dword-aligned offset), PRP2
// (second page, when the transfer ends there) or PRP2 pointing to a list of page addresses.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::spec {

inline constexpr std::uint32_t page_bytes = 4096;

AGIO_HD constexpr std::uint64_t page_offset(std::uint64_t address) { return address & (page_bytes - 1); }

// Pages a transfer of `bytes` starting at `address` touches.
AGIO_HD constexpr std::uint32_t pages_spanned(std::uint64_t address, std::uint32_t bytes) {
  return static_cast<std::uint32_t>((page_offset(address) + bytes + page_bytes - 1) / page_bytes);
}

// Fills PRP1/PRP2 for a virtually contiguous buffer. When more than two pages are spanned the
// entries for pages 2..n go to `list` (which must hold pages_spanned - 1 entries and be
// reachable by the controller at `list_address`) and PRP2 points there.
AGIO_HD inline void build_prps(std::uint64_t address, std::uint32_t bytes, std::uint64_t* list,
                               std::uint64_t list_address, std::uint64_t& prp1, std::uint64_t& prp2) {
  const std::uint32_t pages = pages_spanned(address, bytes);
  const std::uint64_t first_page = address - page_offset(address);
  prp1 = address;
  if (pages <= 1) {
    prp2 = 0;
  } else if (pages == 2) {
    prp2 = first_page + page_bytes;
  } else {
    for (std::uint32_t i = 1; i < pages; ++i) list[i - 1] = first_page + std::uint64_t{i} * page_bytes;
    prp2 = list_address;
  }
}

}  // namespace agio::spec
