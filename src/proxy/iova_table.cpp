#include "proxy/iova_table.hpp"

#include <algorithm>
#include <stdexcept>

namespace agio::proxy {

void iova_table::add(region r) {
  std::lock_guard lock(mutex_);
  auto next = std::make_shared<std::vector<region>>(*regions_);
  const auto overlaps = [&r](const region& other) {
    return r.base < other.base + other.bytes && other.base < r.base + r.bytes;
  };
  for (const region& other : *next) {
    if (overlaps(other) && !other.replaceable) {
      throw std::invalid_argument("agio: memory region overlaps one already registered");
    }
  }
  std::erase_if(*next, overlaps);
  next->push_back(r);
  std::sort(next->begin(), next->end(), [](const region& a, const region& b) { return a.base < b.base; });
  regions_ = std::move(next);
  // Release pairs with reader::translate's acquire of the version.
  published_version_.store(++version_, std::memory_order_release);
}

void iova_table::remove(std::uint64_t base) {
  std::lock_guard lock(mutex_);
  auto next = std::make_shared<std::vector<region>>(*regions_);
  std::erase_if(*next, [base](const region& r) { return r.base == base; });
  regions_ = std::move(next);
  published_version_.store(++version_, std::memory_order_release);
}

bool iova_table::holds(std::uint64_t base, std::uint64_t bytes) const {
  std::lock_guard lock(mutex_);
  return std::any_of(regions_->begin(), regions_->end(),
                     [&](const region& r) { return r.base <= base && base + bytes <= r.base + r.bytes; });
}

void iova_table::remove_replaceable(std::uint64_t base) {
  std::lock_guard lock(mutex_);
  auto next = std::make_shared<std::vector<region>>(*regions_);
  std::erase_if(*next, [base](const region& r) { return r.base == base && r.replaceable; });
  regions_ = std::move(next);
  published_version_.store(++version_, std::memory_order_release);
}

std::shared_ptr<const std::vector<region>> iova_table::snapshot(std::uint64_t& version) const {
  std::lock_guard lock(mutex_);
  version = version_;
  return regions_;
}

std::optional<translation> iova_table::reader::translate(std::uint64_t iova, std::uint64_t bytes) {
  if (table_->published_version_.load(std::memory_order_acquire) != version_) {
    regions_ = table_->snapshot(version_);
  }
  const auto& regions = *regions_;
  auto it = std::upper_bound(regions.begin(), regions.end(), iova,
                             [](std::uint64_t a, const region& r) { return a < r.base; });
  if (it == regions.begin()) return std::nullopt;
  --it;
  if (iova + bytes > it->base + it->bytes || iova + bytes < iova) return std::nullopt;
  return translation{it->kind, reinterpret_cast<std::byte*>(iova)};
}

}  // namespace agio::proxy
