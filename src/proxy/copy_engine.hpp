#pragma once
// Moves data between host bounce slots and GPU memory on behalf of a controller thread, for
// the `copy_engine` data mover. The GPU platform drives the DMA copy engine with
// cudaMemcpyAsync on a stream of the thread's own; the CPU platform copies at once.
#include <cstddef>
#include <cstdint>
#include <span>

namespace agio::proxy {

class copy_engine {
 public:
  virtual ~copy_engine() = default;
  // Queues a copy; `tag` comes back from reap() once the bytes have arrived.
  virtual void copy(void* dst, const void* src, std::size_t bytes, std::uint64_t tag) = 0;
  // Starts the copies queued since the last push, as one batch.
  virtual void push() = 0;
  // Moves the tags of finished copies into `out`; never blocks.
  virtual std::size_t reap(std::span<std::uint64_t> out) = 0;
  virtual std::size_t in_flight() const = 0;
};

}  // namespace agio::proxy
