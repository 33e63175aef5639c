#pragma once
// agio's software NVMe controller: threads that poll submission-queue doorbells in host memory,
// validate each command as an NVMe controller would (namespace, opcode, LBA range, transfer
// size, PRP entries), execute it against the device's store and post a completion entry with
// the NVMe status. It is the far side of the `proxy` transport.
#include <atomic>
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
#include "proxy/store.hpp"

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
  // posting its completion, and the part of it the store took. Beside the device-side latency
  // they split a request's time into transport, controller and storage.
  std::atomic<std::uint64_t> controller_ns{0};
  std::atomic<std::uint64_t> store_ns{0};
};

struct controller_options {
  unsigned threads = 1;
  data_mover mover = data_mover::gpu_warps;
  // Idle controller threads spin this long before they start to sleep between polls.
  std::uint32_t spin_us = 50;
  std::uint32_t max_sleep_us = 20;
};

class nvme_controller {
 public:
  using copy_engine_factory = std::function<std::unique_ptr<copy_engine>()>;

  nvme_controller(std::vector<device_endpoint> devices, const iova_table& iova, controller_options options,
                  const copy_engine_factory& make_copy_engine);
  ~nvme_controller();
  nvme_controller(const nvme_controller&) = delete;
  nvme_controller& operator=(const nvme_controller&) = delete;

  // Stops the threads once every command they fetched has completed (or `timeout_ms` passed),
  // then makes every acknowledged write durable. Idempotent.
  void stop(std::uint32_t timeout_ms);

  // Counters of queue pair `q` of device `d`.
  const queue_counters& counters(std::uint32_t d, std::uint32_t q) const;
  // The first store failure of device `d` in words (errno, offset), or empty.
  std::string first_store_error(std::uint32_t d) const;
  // The first failure of a controller thread itself (e.g. the copy engine), or empty.
  std::string thread_failure() const;

 private:
  struct worker;
  void note_store_error(std::uint32_t device, const std::string& what);
  void note_thread_failure(const std::string& what);

  std::vector<device_endpoint> devices_;
  std::vector<std::vector<std::unique_ptr<queue_counters>>> counters_;
  std::vector<std::unique_ptr<worker>> workers_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stopping_{false};
  std::atomic<std::uint64_t> stop_deadline_ns_{0};
  mutable std::mutex errors_mutex_;
  std::vector<std::string> store_errors_;
  std::string thread_failure_;
  bool stopped_ = false;
};

}  // namespace agio::proxy
