#pragma once
// The memory of one NVMe queue pair, as seen by the three parties that share it: GPU threads
// that submit, the completion service that retires, and the controller on the other side.
// The runtime allocates it; this struct only points into it, so it can be copied by value
// into kernels and onto host threads.
#include <cstddef>
#include <cstdint>

#include "agio/detail/divisor.hpp"
#include "agio/detail/platform.hpp"
#include "agio/spec/nvme.hpp"

namespace agio::queue {

// Per-entry submission states of AGILE Algorithm 2. Each entry's state word also carries the
// queue position the entry serves (state | position << 2): an EMPTY entry is free for exactly
// one position, the one `depth` after its last completed command. Without the position a
// submitter could take an entry that looks EMPTY only because the submitter of the previous
// lap claimed it and has not written it yet.
enum sqe_state : std::uint64_t { sqe_empty = 0, sqe_updated = 1, sqe_issued = 2 };

AGIO_HD constexpr std::uint64_t sqe_word(std::uint64_t position, sqe_state state) { return position << 2 | state; }
AGIO_HD constexpr sqe_state sqe_word_state(std::uint64_t word) { return static_cast<sqe_state>(word & 3u); }
AGIO_HD constexpr std::uint64_t sqe_word_position(std::uint64_t word) { return word >> 2; }

// Completion-queue polling state of AGILE Algorithm 1. Owned by exactly one service warp, or
// by whichever waiter holds the queue's retire_lock when waiters retire completions.
struct cq_poll_state {
  std::uint32_t offset;  // first entry of the current 32-entry window
  std::uint32_t phase;   // phase tag that marks a new entry in this pass over the ring
  std::uint32_t mask;    // entries of the window already retired
  std::uint32_t unused;
};

// Submitter-side bookkeeping, in GPU memory (device scope).
struct sq_control {
  std::uint64_t claimed;        // positions handed out to submitters (monotonic)
  std::uint64_t tail;           // positions made visible to the controller (monotonic)
  std::uint64_t completed;      // completions retired by the service (monotonic)
  std::uint32_t doorbell_lock;  // held by the thread that advances the tail
  std::uint32_t retire_lock;    // held by the thread retiring completions when waiters retire
};

// What the submitter of a raw (passthrough) command says its data buffer is: passthrough's
// `buffer` and `bytes`, and when stage_writes is set what a write's submitter copied into the
// entry's bounce slot. The controller executes a raw command only if this names the memory its
// PRPs name, so that a submitter's buffer and its command cannot disagree about where data
// comes from or goes to; it clears the record as it reads it. Typed commands leave it clear:
// their PRPs are built from their buffer.
struct declared_buffer {
  std::uint64_t address;
  std::uint64_t bytes;  // declared_bytes(n) for a raw command, 0 for a typed one
};
AGIO_HD constexpr std::uint64_t declared_bytes(std::uint32_t bytes) { return std::uint64_t{1} << 32 | bytes; }
AGIO_HD constexpr bool is_declared(std::uint64_t word) { return (word >> 32) != 0; }
AGIO_HD constexpr std::uint32_t bytes_declared(std::uint64_t word) { return static_cast<std::uint32_t>(word); }

// A read the controller left in host memory for the retirer to copy, with a destination and a
// length the controller validated: 0 source, nothing to copy. `check` is 0, or tells whether
// the copy from a store's bytes is whole (view_sequences.hpp).
struct alignas(16) deferred_copy {
  std::uint64_t source;
  std::uint64_t destination;
  std::uint64_t bytes;
  std::uint64_t check;
};

// Where an entry's request stood on its trip, when the runtime keeps trip stamps
// (runtime_options::trip_stamps): the doorbell ringer's stamp on the device's clock, the
// controller's on the host's. The retirer reads them once the completion is in (the doorbell
// and the completion entry order them) and adds the request to the device's trip sums.
struct trip_stamp {
  std::uint64_t submitted;  // device clock: just before the doorbell covering the entry rang
  std::uint64_t fetched;    // host clock: the controller took the command
  std::uint64_t posted;     // host clock: just before the controller posted its completion
};

struct queue_pair {
  // Transport-visible memory (pinned host memory for the proxy, GPU memory for bare NVMe).
  spec::command* sq;     // depth entries
  spec::completion* cq;  // cq_depth entries
  std::uint32_t* sq_tail_doorbell;
  std::uint32_t* cq_head_doorbell;
  std::uint64_t* prp_lists;      // depth lists of prp_list_entries each, each inside one page
  std::uint64_t prp_lists_iova;  // controller-visible address of prp_lists

  // Proxy transport data path. `bounce` holds one slot of slot_bytes per entry; when
  // `stage_writes` is set, submitters copy write data there before ringing the doorbell. For
  // reads the controller may leave the data in host memory and name it in deferred[cid]; the
  // service then copies it before finishing the transaction. Where the store's bytes are in
  // host memory (a RAM store), `view` is their address and view_sequences their stripes'
  // sequence words; else both are null.
  std::byte* bounce;
  declared_buffer* buffers;  // by entry
  deferred_copy* deferred;   // by entry
  std::byte* view;
  std::uint64_t* view_sequences;
  trip_stamp* stamps;  // by entry; null unless the runtime keeps trip stamps
  std::uint32_t slot_bytes;
  std::uint32_t stage_writes;

  // Submitter and service state (GPU memory).
  std::uint64_t* states;     // sqe_word per entry; entry i starts as sqe_word(i, sqe_empty)
  std::uint32_t* cid_to_tx;  // transaction record per entry (cid == entry index)
  sq_control* control;
  cq_poll_state* poll;

  detail::divisor depth;   // submission entries; at most depth - 1 outstanding
  std::uint32_t cq_depth;  // a multiple of 32, at least depth + 32
  std::uint32_t prp_list_entries;
  std::uint32_t qid;  // NVMe queue identifier (1-based per device)
};

// A completion queue must hold every outstanding command plus one retirement window, since
// the service advances the head doorbell only a whole window at a time (Algorithm 1).
AGIO_HD constexpr std::uint32_t cq_depth_for(std::uint32_t sq_depth) { return (sq_depth + 31) / 32 * 32 + 32; }

}  // namespace agio::queue
