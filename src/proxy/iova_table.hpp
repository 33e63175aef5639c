#pragma once
// The proxy's IOMMU: the regions of memory a command's PRP entries may name. A PRP address is
// an I/O virtual address (here: the process's unified virtual address); translating it says
// whether the controller can reach the bytes directly (pinned host memory) or only through a
// bounce slot and a copy (GPU memory).
#include <cstddef>
#include <cstdint>
#include <memory>
#include <atomic>
#include <mutex>
#include <optional>
#include <vector>

namespace agio::proxy {

enum class region_kind : std::uint8_t { host, device };

struct region {
  std::uint64_t base = 0;
  std::uint64_t bytes = 0;
  region_kind kind = region_kind::host;
  // A region its owner may free without removing it first (a cache of registrations): a region
  // added later over any of its bytes replaces it rather than being refused.
  bool replaceable = false;
};

struct translation {
  region_kind kind;
  std::byte* address;  // the same address, now known to be inside a registered region
};

class iova_table {
 public:
  // Regions must not overlap; throws std::invalid_argument if `r` overlaps one that is not
  // replaceable, and removes the replaceable ones it overlaps.
  void add(region r);
  // Whether one region holds [base, base + bytes).
  bool holds(std::uint64_t base, std::uint64_t bytes) const;
  // Removes the region starting at `base`; the caller guarantees no I/O to it is in flight.
  void remove(std::uint64_t base);
  // The same for a replaceable region only: one that replaced it at the same base stays.
  void remove_replaceable(std::uint64_t base);

  // A reader keeps its own snapshot and refreshes it only when the table changed, so
  // translation on the controller's hot path takes no lock.
  class reader {
   public:
    explicit reader(const iova_table& table) : table_(&table) {}
    // The region holding [iova, iova + bytes), or nothing if no single region holds it.
    std::optional<translation> translate(std::uint64_t iova, std::uint64_t bytes);

   private:
    const iova_table* table_;
    std::uint64_t version_ = ~std::uint64_t{0};
    std::shared_ptr<const std::vector<region>> regions_;
  };

 private:
  std::shared_ptr<const std::vector<region>> snapshot(std::uint64_t& version) const;

  mutable std::mutex mutex_;
  std::shared_ptr<const std::vector<region>> regions_ = std::make_shared<std::vector<region>>();
  std::uint64_t version_ = 0;
  std::atomic<std::uint64_t> published_version_{0};
};

}  // namespace agio::proxy
