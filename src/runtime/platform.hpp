#pragma once
// What differs between running agio's device side on a GPU and on CPU threads: where memory
// comes from, how the host reads and writes it, how the completion service is started, and
// what moves data for the copy-engine mover. Everything else is shared.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "agio/runtime/runtime.hpp"
#include "proxy/copy_engine.hpp"
#include "proxy/iova_table.hpp"

namespace agio {

class runtime::platform {
 public:
  virtual ~platform() = default;
  virtual agio::backend kind() const = 0;
  virtual std::string describe() const = 0;

  // Host memory the device side can reach (mapped pinned memory on the GPU), zeroed.
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  // Takes over the caller's mapping of host memory (numa_memory.hpp): pins it and makes the
  // device side reach it as it reaches allocate_pinned's; free_pinned unmaps it. Returns `p`;
  // unmaps it and throws if it cannot be pinned.
  virtual void* adopt_mapping(void* p, std::size_t bytes) = 0;
  // Gives back memory of either.
  virtual void free_pinned(void* p) = 0;
  // Memory only the device side uses (GPU memory), zeroed.
  virtual void* allocate_device(std::size_t bytes) = 0;
  virtual void free_device(void* p) = 0;
  // Copies between host memory and device memory; safe while device threads run (on the CPU
  // platform the copies are made of relaxed 8-byte atomics when size and alignment allow).
  virtual void copy_to_device(void* dst, const void* src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* dst, const void* src, std::size_t bytes) = 0;
  // Whether the controller reaches `p` directly (host) or through a bounce slot (device).
  virtual proxy::region_kind classify(const void* p) = 0;

  virtual std::uint32_t default_service_workers(std::uint32_t queue_pairs) const = 0;
  // Makes every kernel launched later find at least `bytes` of stack per thread, so that none
  // has to grow it (which would wait for the running service). Nothing to do for CPU threads.
  virtual void reserve_thread_stack(std::size_t bytes) = 0;
  // Has CUDA set up device-side printf (which assert uses) and the device heap (malloc) for this
  // GPU now. It sets each up at the first launch of a kernel that uses it, and that launch waits
  // for every running kernel: beside the service it would never start. Nothing to do for CPU threads.
  virtual void set_up_device_printf_and_heap() = 0;
  // Starts `workers` service workers running service::run over `io` as generation `generation`.
  // A generation started while an earlier one still runs begins once that one has ended (the
  // same worker of two generations never polls its queues at once).
  virtual void start_service(const io::io_state& io, std::uint32_t workers, std::uint32_t generation) = 0;
  // Waits until every service worker of every generation returned; false if `timeout_ms`
  // passed first.
  virtual bool join_service(std::uint32_t timeout_ms) = 0;
  // Calls fn(arg) on a host thread once the work queued on `stream` (a cudaStream_t) so far has
  // finished; fn must not call CUDA. The CPU platform has no streams: it calls fn at once.
  virtual void call_after_stream(void* stream, void (*fn)(void*), void* arg) = 0;

  virtual std::unique_ptr<proxy::copy_engine> make_copy_engine() = 0;
};

std::unique_ptr<runtime::platform> make_cpu_platform();
// The GPU platform, or nullptr with `why_not` filled when no usable GPU (or no GPU backend in
// this build) is found.
std::unique_ptr<runtime::platform> make_gpu_platform(std::string& why_not);

}  // namespace agio
