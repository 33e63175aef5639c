#pragma once
// Recording the first failed request of a run, for runtime::check(). Called by whoever sees the
// failure first: the retirer of a failed completion, or a submitter that refused a request.
#include <cstdint>

#include "agio/detail/atomic.hpp"
#include "agio/queue/io_state.hpp"

namespace agio::io {

struct failure {
  failure_cause cause = failure_cause::completed;
  std::uint32_t device = 0;
  std::uint32_t opcode = 0;
  std::uint64_t lba = 0;
  std::uint32_t blocks = 0;
  std::uint32_t result = 0;       // status::pack()
  std::uint64_t buffer = 0;       // the request's buffer, so the host can say what was wrong with it
  std::uint64_t byte_offset = 0;  // a misaligned byte-addressed request's offset and size
  std::uint64_t byte_count = 0;
};

// Why a request was refused, in words (`completed`: it was not refused).
AGIO_HD inline const char* describe(failure_cause c) {
  switch (c) {
    case failure_cause::completed: return "submitted";
    case failure_cause::zero_blocks: return "zero blocks";
    case failure_cause::too_many_blocks: return "more blocks than the device's maximum transfer";
    case failure_cause::no_such_device: return "no such device";
    case failure_cause::no_record: return "every transaction record in use";
    case failure_cause::no_queue_entry: return "every queue of the device full";
    case failure_cause::misaligned: return "byte offset or size not a multiple of the LBA size";
  }
  return "unknown";
}

AGIO_HD inline void note_first_failure(const io_state& io, const failure& f) {
  // Once claimed, failing requests (thousands at once on a GPU) skip the exchange.
  if (detail::load<detail::scope::device>(io.control->error_claimed, detail::relaxed) != 0) return;
  std::uint32_t unclaimed = 0;
  if (!detail::compare_exchange<detail::scope::device>(io.control->error_claimed, unclaimed, 1u, detail::relaxed)) {
    return;
  }
  error_record& err = *io.first_error;
  err.cause = f.cause;
  err.device = f.device;
  err.opcode = f.opcode;
  err.lba = f.lba;
  err.blocks = f.blocks;
  err.result = f.result;
  err.buffer = f.buffer;
  err.byte_offset = f.byte_offset;
  err.byte_count = f.byte_count;
  // Release pairs with the host's acquire of `valid` before it reads the fields.
  detail::store<detail::scope::system>(err.valid, 1u, detail::release);
}

}  // namespace agio::io
