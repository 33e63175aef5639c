#pragma once
// The PRP walk of the software NVMe controller: where a command's data is, from its PRP1, PRP2
// and PRP lists (NVMe Base 2.0 §4.1.1), translated through the IOVA table as an IOMMU would.
// The answer is one run inside one registered region (host or GPU memory), or several runs,
// which the controller serves only in host memory; anything else is an NVMe status.
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "agio/spec/nvme.hpp"
#include "proxy/iova_table.hpp"

namespace agio::proxy {

// A run of virtually contiguous bytes named by PRP entries.
struct segment {
  std::uint64_t address;
  std::uint32_t bytes;
};

class prp_walker {
 public:
  explicit prp_walker(const iova_table& iova) : iova_(iova) {}

  // Walks the PRPs of `cmd` for a transfer of `bytes` (more than 0). Returns 0 (success), or
  // the status the command fails with: PRP Offset Invalid for a misaligned entry, Data Transfer
  // Error for memory (data or a PRP list) outside every registered region, or data of several
  // runs outside host memory. On success exactly one of whole() and runs() describes the data.
  std::uint16_t walk(const spec::command& cmd, std::uint32_t bytes);

  // The data, when it is one run inside one region.
  const std::optional<translation>& whole() const { return whole_; }
  // The data's runs in transfer order, pages that are virtually contiguous merged: one run when
  // whole() is set, else several, each in host memory.
  std::span<const segment> runs() const { return runs_; }

 private:
  std::uint16_t gather(const spec::command& cmd, std::uint32_t bytes);
  void add(std::uint64_t address, std::uint32_t length);

  iova_table::reader iova_;
  std::vector<segment> runs_;
  std::optional<translation> whole_;
};

}  // namespace agio::proxy
