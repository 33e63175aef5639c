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

namespace agio {

enum class store_op : std::uint8_t { read, write, flush };

struct store_io {
  store_op op = store_op::read;
  std::uint64_t offset = 0;  // bytes from the start of the store; a multiple of the LBA size
  std::uint32_t length = 0;  // bytes; a multiple of the LBA size (0 for flush)
  // Host memory to read into or write from. For a read from a store whose host_view() is not
  // null, nullptr means "account and time the read but copy nothing": the caller takes the
  // data from host_view() itself (zero-copy path of the RAM store).
  std::byte* buffer = nullptr;
  std::uint64_t tag = 0;  // returned unchanged in the result
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
  double read_gbps = 0;  // GB/s (10^9 bytes per second)
  double write_gbps = 0;
  double max_iops = 0;  // commands per second, reads and writes together
  bool any() const {
    return read_latency_us > 0 || write_latency_us > 0 || read_gbps > 0 || write_gbps > 0 || max_iops > 0;
  }
};

// A fault a store injects for testing error paths. The block kinds act on every read or write
// that touches block `lba`: it fails with EIO (eio), transfers only the bytes before the block
// (short_transfer), never completes (hang), or throws from the channel, failing the controller
// thread that submits it as an io_uring or copy error would (crash). The random kinds fail a
// read or write (or only reads, or only writes) with EIO with `probability`, drawn from `seed`,
// the I/O's offset and the store's count of I/Os so far: one submission order gives one outcome.
struct fault_injection {
  enum class kind : std::uint8_t { eio, short_transfer, hang, crash, random, random_read, random_write };
  kind what = kind::eio;
  std::uint64_t lba = 0;   // block kinds
  double probability = 0;  // random kinds, 0..1
  std::uint64_t seed = 0;  // random kinds
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
  // The sequence words of host_view()'s stripes (agio/queue/view_sequences.hpp), kept by every
  // write, for readers that copy from host_view() themselves; null when host_view() is.
  virtual std::uint64_t* view_sequences() { return nullptr; }
  virtual std::unique_ptr<store_channel> open_channel(unsigned depth) = 0;
  // Makes every completed write durable (fsync for files; nothing for RAM).
  virtual void sync() = 0;
};

// Opens a store from its URI:
//   ram:SIZE[?lba=512|4096][&read_us=..&write_us=..&read_gbps=..&write_gbps=..&iops=..][&fault=F]...
//   file:PATH[?lba=512|4096][&create=SIZE][&fault=F]...
// SIZE takes K, M, G suffixes (binary). A fault F (see fault_injection) is one of
//   eio@LBA          every read or write touching LBA fails with EIO
//   short@LBA        a read or write touching LBA transfers only the bytes before it
//   hang@LBA         a read or write touching LBA never completes
//   crash@LBA        submitting a read or write touching LBA throws (the controller thread fails)
//   random@P:SEED    each read and write fails with EIO with probability P (0..1), deterministic
//                    for a seed (an unsigned 64-bit number) and one order of I/Os
//   random_read@P:SEED, random_write@P:SEED   the same for reads only, or writes only
// fault= may repeat, and every fault given applies; an LBA must lie inside the store. Throws
// std::invalid_argument for a malformed URI (naming the URI and the bad piece) and
// std::system_error (with the path) for a file that does not exist or cannot be opened.
std::unique_ptr<store> open_store(std::string_view uri, const host_memory& memory);

}  // namespace agio
