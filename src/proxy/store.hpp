#pragma once
// A store is what the proxy's software NVMe controller executes commands against: a file or
// block device (`file:PATH`) or pinned host RAM shaped by an optional SSD profile (`ram:SIZE`).
// Each controller thread opens its own channel per store (an io_uring ring for files), so
// channels need no locking; the store itself is shared and thread-safe.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace agio::proxy {

enum class store_op : std::uint8_t { read, write, flush };

struct store_io {
  store_op op = store_op::read;
  std::uint64_t offset = 0;   // bytes from the start of the store; a multiple of the LBA size
  std::uint32_t length = 0;   // bytes; a multiple of the LBA size (0 for flush)
  // Host memory to read into or write from. For a read from a store whose host_view() is not
  // null, nullptr means "account and time the read but copy nothing": the caller takes the
  // data from host_view() itself (zero-copy path of the RAM store).
  std::byte* buffer = nullptr;
  std::uint64_t tag = 0;      // returned unchanged in the result
};

struct store_result {
  std::uint64_t tag = 0;
  // Bytes transferred (== length on success; fewer is a short transfer) or -errno.
  std::int64_t result = 0;
};

// One controller thread's path to a store. Not thread-safe; owned by one thread.
class store_channel {
 public:
  virtual ~store_channel() = default;
  // Queues an I/O; false when the channel already holds `depth` I/Os (reap first).
  virtual bool submit(const store_io& io) = 0;
  // Hands queued I/Os to the kernel (io_uring_submit); cheap when nothing is queued.
  virtual void push() = 0;
  // Moves finished I/Os (whose profile time has come, for RAM) into `out`; never blocks.
  virtual std::size_t reap(std::span<store_result> out) = 0;
  // I/Os submitted and not yet reaped.
  virtual std::size_t in_flight() const = 0;
};

// How the proxy obtains host memory that the GPU can also reach (cudaHostAlloc with the
// mapped flag on the GPU platform, aligned new on the CPU platform).
struct host_memory {
  std::function<void*(std::size_t bytes)> allocate;
  std::function<void(void* p)> release;
};

// Throughput and latency caps that make a RAM store behave like a given SSD. A zero field
// means "no cap".
struct ssd_profile {
  double read_latency_us = 0;
  double write_latency_us = 0;
  double read_gbps = 0;    // GB/s (10^9 bytes per second)
  double write_gbps = 0;
  double max_iops = 0;     // commands per second, reads and writes together
  bool any() const {
    return read_latency_us > 0 || write_latency_us > 0 || read_gbps > 0 || write_gbps > 0 || max_iops > 0;
  }
};

// Faults a store injects for testing error paths: every I/O that touches the block `lba`
// fails with EIO, or (short) transfers only the bytes before that block.
struct fault_injection {
  enum class kind : std::uint8_t { none, eio, short_transfer };
  kind what = kind::none;
  std::uint64_t lba = 0;
};

class store {
 public:
  virtual ~store() = default;
  virtual const std::string& uri() const = 0;
  virtual std::uint64_t capacity_bytes() const = 0;
  virtual std::uint32_t lba_bytes() const = 0;
  // Required alignment of host buffers handed to a channel (O_DIRECT needs the device's
  // logical block size); 1 when any address works.
  virtual std::uint32_t buffer_alignment() const = 0;
  // The store's bytes in host memory reachable by the GPU, when the store is RAM; else null.
  virtual std::byte* host_view() = 0;
  virtual std::unique_ptr<store_channel> open_channel(unsigned depth) = 0;
  // Makes every completed write durable (fsync for files; nothing for RAM).
  virtual void sync() = 0;
};

// Opens a store from its URI:
//   ram:SIZE[?lba=512|4096][&read_us=..&write_us=..&read_gbps=..&write_gbps=..&iops=..][&fault=eio@LBA|short@LBA]
//   file:PATH[?lba=512|4096][&create=SIZE][&fault=...]
// SIZE takes K, M, G suffixes (binary). Throws std::invalid_argument for a malformed URI and
// std::system_error (with the path) for a file that does not exist or cannot be opened.
std::unique_ptr<store> open_store(std::string_view uri, const host_memory& memory);

}  // namespace agio::proxy
