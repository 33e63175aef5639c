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
  std::uint32_t result = 0;  // status::pack()
};

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
  // Release pairs with the host's acquire of `valid` before it reads the fields.
  detail::store<detail::scope::system>(err.valid, 1u, detail::release);
}

}  // namespace agio::io
