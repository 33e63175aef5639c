#pragma once
// The data-path plan of a read or write the controller accepted: which buffer the store reads
// into or writes from (the PRP target itself, the command's bounce slot, or for a read nothing,
// the data staying in the store's host memory), and what moves the data between that buffer and
// the PRP target (the retirer's deferred copy, the copy engine, or memcpy through the slot).
// A pure decision (DESIGN.md §4): the controller thread carries it out.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "agio/io/data_mover.hpp"
#include "proxy/iova_table.hpp"
#include "proxy/prp_walk.hpp"
#include "agio/store/store.hpp"

namespace agio::proxy {

// What the controller does with a command's data once the store has answered.
enum class then : std::uint8_t {
  complete,             // the data is where it belongs (or the retirer will copy it)
  copy_engine_to_user,  // read: bounce slot -> GPU memory by the copy engine, then complete
  scatter_to_user,      // read: bounce slot -> host runs by memcpy, then complete
  store_write,          // write: the copy engine fills the bounce slot first; the store writes after
};

struct data_path_request {
  store_op op = store_op::read;  // read or write
  std::uint64_t offset = 0;      // in the store, bytes
  std::uint32_t bytes = 0;
  const translation* whole = nullptr;  // the data as one run of one region, or null: several host runs
  std::span<const segment> runs;       // the data's runs (prp_walker::runs())
  std::byte* bounce = nullptr;         // the command's bounce slot
  std::byte* host_view = nullptr;      // the store's bytes in host memory, or null
  std::size_t buffer_alignment = 1;    // what the store needs of a buffer it reads or writes directly
  data_mover mover = data_mover::gpu_warps;
  bool stage_writes = false;  // a write's submitter copied its data into the bounce slot
  // The controller thread has time to copy a read of at most copy_here_max_bytes from the
  // store's host memory into the bounce slot itself. Left in the store, the read is copied by
  // the retirer, which must then look at the stripes' sequences after its copy (a trip across
  // PCIe, some 3 us of a 4 KiB read's 30); copied here, it costs this thread a memcpy, which
  // only a busy controller cannot spare.
  bool copy_here = false;
};

inline constexpr std::uint32_t copy_here_max_bytes = 8192;

struct data_plan {
  std::byte* io_buffer = nullptr;  // the store's buffer; null: a read left in the store's host view
  then next = then::complete;
  std::byte* user = nullptr;  // GPU memory the copy engine copies a read to, or a write from
  // Host memory a read is scattered to or a write gathered from, through the bounce slot.
  std::vector<segment> host_runs;
  bool gather_before_store = false;  // write: copy host_runs into the bounce slot first
  // Read by the gpu_warps mover: what the retirer copies, from where to the PRP target
  // (queue::deferred_copy); null source when nothing is deferred.
  std::byte* deferred_source = nullptr;
  std::byte* deferred_destination = nullptr;
};

data_plan plan_data_path(const data_path_request& request);

}  // namespace agio::proxy
