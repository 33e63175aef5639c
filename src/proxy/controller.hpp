#pragma once
// agio's software NVMe controller: threads that poll submission-queue doorbells in host memory,
// validate each command as an NVMe controller would (namespace, opcode, LBA range, transfer
// size, PRP entries), execute it against the device's store and post a completion entry with
// the NVMe status. It is the far side of the `proxy` transport.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agio/io/data_mover.hpp"
#include "agio/queue/queue_pair.hpp"
#include "proxy/copy_engine.hpp"
#include "proxy/iova_table.hpp"
#include "agio/store/store.hpp"

namespace agio::proxy {

// One attached device as the controller sees it.
struct device_endpoint {
  store* backing = nullptr;
  std::uint32_t nsid = 1;
  std::uint32_t max_transfer_bytes = 0;
  std::vector<queue::queue_pair> queue_pairs;  // only the transport-visible fields are used
};

// Per queue-pair counters, written by the owning controller thread.
struct queue_counters {
  std::atomic<std::uint64_t> commands{0};
  std::atomic<std::uint64_t> errors{0};
  std::atomic<std::uint64_t> bytes_read{0};
  std::atomic<std::uint64_t> bytes_written{0};
  // Time spent inside the controller, summed over commands: from fetching the command to
  // posting its completion, and the part of it the store took, with the clock read once per
  // batch of commands fetched or completed together. Beside the device-side latency they split
  // a request's time into transport, controller and storage.
  std::atomic<std::uint64_t> controller_ns{0};
  std::atomic<std::uint64_t> store_ns{0};
};

// A store's failure as the controller saw it first on one device.
struct store_failure {
  std::string what;
  int error_number = 0;
};

struct controller_options {
  unsigned threads = 1;
  data_mover mover = data_mover::gpu_warps;
  // Idle controller threads spin this long before they start to sleep between polls.
  std::uint32_t spin_us = 50;
  std::uint32_t max_sleep_us = 20;
  // A thread with at most this many commands in flight copies a small read from a store's host
  // memory into the command's bounce slot itself (0: never); see data_path_request::copy_here.
  std::uint32_t copy_depth = 4;
};

// The timer slack of the controller's threads (Linux's default is 50 us): their sleeps end
// within a microsecond of when asked.
inline constexpr unsigned long controller_timer_slack_ns = 1'000;

class nvme_controller {
 public:
  using copy_engine_factory = std::function<std::unique_ptr<copy_engine>()>;

  nvme_controller(std::vector<device_endpoint> devices, const iova_table& iova, controller_options options,
                  const copy_engine_factory& make_copy_engine);
  ~nvme_controller();
  nvme_controller(const nvme_controller&) = delete;
  nvme_controller& operator=(const nvme_controller&) = delete;

  // From `deadline` on, every command still waiting for its store (or copy) I/O is completed
  // with "aborted due to SQ deletion", and every later one at once, without the store: a stop
  // that must keep to its timeout sets this first, so that the service can still retire them.
  // The threads keep serving the queues until stop(). The earliest deadline given wins.
  void abort_store_io_at(std::chrono::steady_clock::time_point deadline);

  // Stops the threads once every command they fetched has completed, or at `timeout_ms` (or
  // the abort deadline, if earlier) with what is left aborted as above; then makes every
  // acknowledged write durable. Idempotent.
  void stop(std::uint32_t timeout_ms);

  // Counters of queue pair `q` of device `d`.
  const queue_counters& counters(std::uint32_t d, std::uint32_t q) const;
  // The first store failure of device `d`: in words (errno, offset), or empty, and its errno
  // (0 when it had none: a short transfer).
  store_failure first_store_error(std::uint32_t d) const;
  // The first failure of a controller thread itself (e.g. the copy engine), or empty. A thread
  // that fails answers every command of its queues from then on with "internal error", those
  // it had fetched included, and never touches the store again.
  std::string thread_failure() const;
  // Store and copy I/Os still in flight when a thread gave up on them (at the abort deadline or
  // on its failure). Their channels and copy engines are kept, never destroyed, and the memory
  // they read or write must not be freed either: the runtime leaks its queue memory when this
  // is not zero.
  std::uint64_t abandoned_io() const;

 private:
  struct worker;
  void note_store_error(std::uint32_t device, const std::string& what, int error_number = 0);
  void note_thread_failure(const std::string& what);
  void note_abandoned(std::size_t in_flight);

  std::vector<device_endpoint> devices_;
  std::vector<std::vector<std::unique_ptr<queue_counters>>> counters_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  static constexpr std::uint64_t no_deadline = ~std::uint64_t{0};
  // Steady-clock nanoseconds of the abort deadline.
  std::atomic<std::uint64_t> abort_ns_{no_deadline};
  std::atomic<std::uint64_t> abandoned_io_{0};
  mutable std::mutex errors_mutex_;
  std::vector<store_failure> store_errors_;
  std::string thread_failure_;
  bool stopped_ = false;
};

}  // namespace agio::proxy
