#pragma once
// Where the shared I/O state of one runtime lives: devices, queue pairs, transaction records,
// control words, counters and the first-error record. The runtime fills it in; the controller
// handle (controller.hpp) and the completion code (service/retire.hpp) both read it.
#include <cstddef>
#include <cstdint>

#include "agio/queue/posted_ring.hpp"
#include "agio/queue/queue_pair.hpp"
#include "agio/queue/shared_state.hpp"

namespace agio::io {

// Who retires completions (runtime_options::completion): the completion service, or the
// threads that wait for them (no service kernel runs; see service/retire.hpp).
enum class retirement : std::uint32_t { by_service = 0, by_waiters = 1 };

inline constexpr std::size_t quit_word = 0;
inline constexpr std::size_t superseded_word = 1;

struct io_state {
  const device_info* devices = nullptr;
  const queue::queue_pair* queue_pairs = nullptr;
  transaction_record* records = nullptr;
  runtime_control* control = nullptr;
  shared_counters* counters = nullptr;
  error_record* first_error = nullptr;
  std::uint32_t device_count = 0;
  std::uint32_t queue_pair_count = 0;
  std::uint32_t record_count = 0;
  retirement retired_by = retirement::by_service;
  // completion_mode::on_demand: two words in host memory the device side reads (service::run):
  // [quit_word] the latest generation of the service told to drain and exit (its last lease was
  // given back), [superseded_word] the latest told to exit at once (the next one is queued
  // behind it). nullptr otherwise.
  const std::uint32_t* service_quit = nullptr;
  // Requests posted to the completion service to submit, a ring per submitting worker
  // (posted_ring.hpp); none when waiters retire completions.
  queue::posted_rings posted;
  std::uint64_t submit_timeout_ns = 0;  // how long a submitter may wait for a free entry
  std::uint64_t wait_timeout_ns = 0;    // the deadline wait() uses
  // runtime_options::lanes_per_queue as log2 (5: a warp's lanes all start at one queue) and
  // runtime_options::wait_together_ns.
  std::uint32_t lanes_per_queue_log2 = 5;
  std::uint32_t wait_together_ns = 0;
  // runtime_options::service_staging_bytes in 4 KiB slots.
  std::uint32_t service_staging_slots = 0;
};

}  // namespace agio::io
