#pragma once
// State shared between submitters, the completion service and the host runtime, other than the
// queues themselves.
#include <cstdint>

namespace agio::io {

// One in-flight request. Lives in GPU memory; taken by the submitter, finished by the service,
// given back by the waiter (or, once abandoned and finished, taken again by a submitter).
// 88 bytes: the default pool of 65536 records costs 5.5 MiB.
struct transaction_record {
  std::uint64_t state;        // record_state.hpp: result, taken, abandoned, generation
  std::uint64_t destination;  // the request's buffer: a read's copy target, and named in error reports
  std::uint64_t lba;
  std::uint64_t issued_ns;
  std::uint32_t bytes;
  std::uint32_t device;
  std::uint32_t opcode;
  std::uint32_t blocks;
  std::uint32_t queue_pair;  // where the command went; a waiter that retires completions polls it
  // A signalled request (io_handle::async_*_signalled) has no waiter: its retirer stores the
  // status in *signal_status, counts a failure in *signal_failures, then adds signal_ok or
  // signal_failed to *signal_word, and gives the record back itself. 0 for requests that are
  // waited on.
  std::uint32_t signal_ok;
  std::uint64_t signal_word;    // std::uint32_t* in GPU memory
  std::uint64_t signal_status;  // std::uint32_t* in GPU memory, or 0
  std::uint32_t signal_failed;
  std::uint32_t unused;
  std::uint64_t signal_failures;  // std::uint64_t* in GPU memory, or 0
};
static_assert(sizeof(transaction_record) == 88);

enum service_mode : std::uint32_t { service_run = 0, service_drain = 1, service_exit = 2 };

// The submission gate's word: the submitters inside it, and this bit once it is closed.
inline constexpr std::uint32_t gate_closed = 1u << 31;

// Written by the host and by device threads (GPU memory).
struct runtime_control {
  // Submitters enter by adding one and learn in the same step whether the gate is closed;
  // they leave, closed or not, once their command is in its queue. The service closes the
  // gate when stop() tells it to drain and drains only once nobody is inside: a submitter
  // either got in before the close, and is waited for, or is refused. One word, so no
  // ordering stronger than the add's own is needed (service.hpp).
  std::uint32_t submission_gate;
  std::uint32_t service_mode;  // service_mode
  std::uint32_t tx_cursor;     // next transaction record to try
  // Taken by the first failed request. It lives here, in GPU memory, because GPU atomics on
  // pinned host memory are not allowed on every platform (compute-sanitizer reports them on
  // an H100 VM); the record itself is then written with plain stores.
  std::uint32_t error_claimed;
  // Records a submitter may take (free, or finished and abandoned), less those a submitter has
  // counted on but not yet taken: a submitter that finds none refuses at once.
  std::int32_t records_available;
  // Set by stop() once it is over: nothing retires a request any more, so a wait that would
  // wait until its request finishes (wait_until_done) ends.
  std::uint32_t stopped;
  std::uint64_t unknown_device_requests;  // refused for naming a device that is not attached
};

inline constexpr unsigned latency_buckets = 40;  // bucket k counts latencies in [2^k, 2^(k+1)) ns

// Sums over a device's requests with trip stamps (queue_pair.hpp), in ns. The two legs that
// go from one clock to the other are raw, modulo 2^64: less `requests` times the host clock's
// offset from the device's, they are the legs' times.
struct trip_sums {
  std::uint64_t requests;
  std::uint64_t to_controller;  // fetched (host) - submitted (device): the doorbell noticed
  std::uint64_t in_controller;  // posted - fetched (host): the controller's own time and the store's
  std::uint64_t to_retirer;     // seen (device) - posted (host): the completion noticed
  std::uint64_t retiring;       // finished - seen (device): the data's copy and the bookkeeping
};

// Counters kept on the device side (GPU memory), one set per device.
struct shared_counters {
  std::uint64_t submitted;
  std::uint64_t completed;
  std::uint64_t errors;              // submitted requests that completed with an error
  std::uint64_t rejected;            // refused before submission
  std::uint64_t queue_full_retries;  // sweeps in which a submitter found every queue of the device full
  std::uint64_t bytes;
  std::uint64_t latency[latency_buckets];
  trip_sums trip;
};

// Why a request failed: it completed with an error, or it was refused before submission.
enum class failure_cause : std::uint32_t {
  completed = 0,  // the controller (or the runtime, stopping) answered with the result
  zero_blocks = 1,
  too_many_blocks = 2,  // more than the device's maximum transfer
  no_such_device = 3,
  no_record = 4,       // every transaction record in use
  no_queue_entry = 5,  // every queue of the device stayed full for submit_timeout_ms
  misaligned = 6,      // a byte-addressed request's offset or size is not a multiple of the LBA size
};

// The first failed request of a run, in host-visible memory so the host can report it while
// kernels still run.
struct error_record {
  std::uint32_t valid;  // 1 once the fields below are written
  failure_cause cause;
  std::uint32_t device;
  std::uint32_t opcode;
  std::uint64_t lba;
  std::uint32_t blocks;
  std::uint32_t result;  // status::pack()
  std::uint64_t buffer;  // the request's buffer (device or host address), 0 for a flush
  // What a misaligned byte-addressed request asked for (lba and blocks are 0 then).
  std::uint64_t byte_offset;
  std::uint64_t byte_count;
};

// Where a device's queue pairs are and what its namespace looks like.
struct device_info {
  std::uint64_t capacity_blocks;
  std::uint32_t first_qp;
  std::uint32_t qp_count;
  std::uint32_t lba_bytes;
  std::uint32_t max_blocks;  // maximum data transfer size, in blocks
  std::uint32_t nsid;
  std::uint32_t unused;
};

}  // namespace agio::io
