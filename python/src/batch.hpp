#pragma once
// One batch of reads or writes in flight (Device.read/write, pread/pwrite): what it holds until
// it has finished, and how the caller learns its outcome. On the GPU backend its work is queued on
// the caller's stream, after what was queued there before; done() and wait() ask an event
// recorded behind it. On the CPU backend it runs on a host thread of its own.
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "batch_job.hpp"

namespace agio::python {

class core;

// Device memory for one batch's words (refusal, failure count, lowest failed row, next row to
// claim) and offsets copied from the host, with a pinned host mirror that the copies go through.
// Pooled by core.
struct scratch {
  static constexpr std::size_t words = 4;
  std::uint64_t* device = nullptr;
  std::uint64_t* mirror = nullptr;
  std::size_t offsets_capacity = 0;  // offsets that fit after the words
  // GPU backend: the cudaEvent_t recorded before and behind a batch, made once per scratch.
  void* started = nullptr;
  void* finished = nullptr;
};

class batch {
 public:
  ~batch();
  batch(const batch&) = delete;
  batch& operator=(const batch&) = delete;

  // Whether the batch has finished (its outcome then waits in wait()).
  bool done();
  // Waits until the batch has finished, at most its deadline once it has started, and frees what
  // it held; throws its error: std::invalid_argument for a refused offset, io_error for failed
  // requests, std::runtime_error when the deadline passed (the batch then stays pending).
  // Call without the GIL.
  void wait();

 private:
  friend class core;
  explicit batch(core& owner) : owner_(&owner) {}
  // Frees what the batch held and keeps its outcome for wait(); once only.
  void finish();
  std::exception_ptr outcome_of_words();

  core* owner_;  // nullptr once finished
  std::mutex mutex_;
  row_offsets offsets_;
  row_bounds bounds_;
  const void* data_ = nullptr;
  std::size_t data_bytes_ = 0;
  std::string uri_;
  std::shared_ptr<scratch> scratch_;
  std::chrono::nanoseconds limit_{};  // how long it may run once started
  // GPU backend: its scratch's events, while it is in flight.
  void* started_ = nullptr;
  void* finished_ = nullptr;
  std::chrono::steady_clock::time_point started_at_{};
  // CPU backend.
  std::thread worker_;
  std::atomic<bool> worker_done_{false};
  std::exception_ptr worker_error_;
  bool finished_up_ = false;
  std::exception_ptr error_;
};

}  // namespace agio::python
