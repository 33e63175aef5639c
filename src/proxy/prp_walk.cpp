#include "proxy/prp_walk.hpp"

#include <algorithm>
#include <cstring>

#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"

namespace agio::proxy {
namespace {

std::uint16_t generic_error(std::uint8_t code) { return spec::make_status(spec::status_type::generic, code); }

}  // namespace

std::uint16_t prp_walker::walk(const spec::command& cmd, std::uint32_t bytes) {
  whole_.reset();
  const std::uint16_t status = gather(cmd, bytes);
  if (status != 0) return status;
  if (runs_.size() == 1) {
    whole_ = iova_.translate(runs_[0].address, runs_[0].bytes);
    return whole_ ? 0 : generic_error(spec::generic::data_transfer_error);
  }
  // The controller cannot scatter into GPU memory: several runs must all be host memory.
  for (const segment& s : runs_) {
    const auto t = iova_.translate(s.address, s.bytes);
    if (!t || t->kind != region_kind::host) return generic_error(spec::generic::data_transfer_error);
  }
  return 0;
}

void prp_walker::add(std::uint64_t address, std::uint32_t length) {
  if (!runs_.empty() && runs_.back().address + runs_.back().bytes == address) {
    runs_.back().bytes += length;
  } else {
    runs_.push_back(segment{address, length});
  }
}

std::uint16_t prp_walker::gather(const spec::command& cmd, std::uint32_t bytes) {
  runs_.clear();
  if (cmd.prp1 % 4 != 0) return generic_error(spec::generic::prp_offset_invalid);
  const std::uint32_t first =
      std::min<std::uint32_t>(bytes, spec::page_bytes - static_cast<std::uint32_t>(spec::page_offset(cmd.prp1)));
  add(cmd.prp1, first);
  std::uint32_t remaining = bytes - first;
  if (remaining == 0) return 0;
  if (remaining <= spec::page_bytes) {
    if (spec::page_offset(cmd.prp2) != 0) return generic_error(spec::generic::prp_offset_invalid);
    add(cmd.prp2, remaining);
    return 0;
  }
  std::uint64_t list = cmd.prp2;
  if (list % 8 != 0) return generic_error(spec::generic::prp_offset_invalid);
  while (remaining > 0) {
    // The list itself must be readable by the controller.
    const auto where = iova_.translate(list, 8);
    if (!where || where->kind != region_kind::host) return generic_error(spec::generic::data_transfer_error);
    std::uint64_t entry = 0;
    std::memcpy(&entry, where->address, sizeof entry);
    const bool last_in_page = spec::page_offset(list) == spec::page_bytes - 8;
    if (last_in_page && remaining > spec::page_bytes) {
      list = entry;  // the last entry of a full list page points to the next list page
      if (list % 8 != 0) return generic_error(spec::generic::prp_offset_invalid);
      continue;
    }
    if (spec::page_offset(entry) != 0) return generic_error(spec::generic::prp_offset_invalid);
    const std::uint32_t length = std::min(remaining, spec::page_bytes);
    add(entry, length);
    remaining -= length;
    list += 8;
  }
  return 0;
}

}  // namespace agio::proxy
