// Compiled by nvcc when CUDA is available (the device side then runs as a GPU kernel).
#include "io_bench/flag_round_trip.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "agio/portable.hpp"
#include "agio/runtime/launch.hpp"

namespace agio::bench {
namespace {

using portable::scope;

// A side gives up once the other has been silent this long: far beyond a trip, even on CPU
// threads that share few cores with a controller's.
constexpr std::uint64_t silence_ns = 10'000'000'000;

// The pinned words the two sides share.
struct shared_words {
  std::uint32_t flag;
  std::uint32_t failed;  // set by the device side when the host fell silent
  // The device side's fastest round trip: its time, its index and its midpoint (device clock).
  std::uint64_t best_ns;
  std::uint64_t best_trip;
  std::uint64_t best_middle_ns;
};

// The device side: round trip i raises the flag to 2i - 1 and waits for the host's 2i.
struct flag_ping_job {
  shared_words* words;  // pinned host memory
  std::uint32_t trips;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    std::uint64_t best = ~std::uint64_t{0}, best_trip = 0, best_middle = 0;
    for (std::uint32_t i = 1; i <= trips; ++i) {
      const std::uint64_t raised = now_ns();
      portable::store<scope::system>(words->flag, 2 * i - 1, portable::release);
      const deadline limit = deadline::after_ns(silence_ns);
      while (portable::load<scope::system>(words->flag, portable::acquire) != 2 * i) {
        if (limit.passed()) {
          portable::store<scope::system>(words->failed, 1u, portable::relaxed);
          return;
        }
      }
      const std::uint64_t answered = now_ns();
      if (answered - raised < best) {
        best = answered - raised;
        best_trip = i;
        best_middle = raised + (answered - raised) / 2;
      }
    }
    words->best_ns = best;
    words->best_trip = best_trip;
    words->best_middle_ns = best_middle;
  }
};

// The host side, on a thread of its own: answers each of the device's raises, noting when
// (answered_at[i - 1], host clock). Joined when it goes, after being told that the device
// side has finished (so a device side that failed never leaves it waiting).
class echo_thread {
 public:
  echo_thread(std::uint32_t* flag, std::uint32_t trips)
      : answered_at_(trips), thread_([this, flag, trips] { answered_ = echo(flag, trips); }) {}
  echo_thread(const echo_thread&) = delete;
  echo_thread& operator=(const echo_thread&) = delete;
  ~echo_thread() { finish(); }
  // Whether it answered every raise (false: the device side fell silent).
  bool finish() {
    device_done_ = true;
    if (thread_.joinable()) thread_.join();
    return answered_;
  }
  // When it answered round trip i (from 1), once finished.
  std::uint64_t answered_at(std::uint64_t i) const { return answered_at_.at(i - 1); }

 private:
  bool echo(std::uint32_t* flag, std::uint32_t trips) {
    for (std::uint32_t i = 1; i <= trips; ++i) {
      const deadline limit = deadline::after_ns(silence_ns);
      while (portable::load<scope::system>(*flag, portable::acquire) != 2 * i - 1) {
        if (device_done_.load(std::memory_order_relaxed) || limit.passed()) return false;
      }
      answered_at_[i - 1] = now_ns();
      portable::store<scope::system>(*flag, 2 * i, portable::release);
    }
    return true;
  }

  std::atomic<bool> device_done_{false};
  bool answered_ = false;
  std::vector<std::uint64_t> answered_at_;
  std::thread thread_;  // last: it starts once the members it uses exist
};

// Pinned host memory of `rt` for the shared words, freed when it goes.
struct pinned_words {
  runtime& rt;
  shared_words* words;
  explicit pinned_words(runtime& r) : rt(r), words(static_cast<shared_words*>(r.allocate_host(sizeof(shared_words)))) {}
  pinned_words(const pinned_words&) = delete;
  pinned_words& operator=(const pinned_words&) = delete;
  ~pinned_words() { rt.free(words); }
};

struct one_run {
  double seconds = 0;  // for every round trip, the kernel's launch included (a few microseconds)
  std::int64_t host_minus_device_ns = 0;
  std::int64_t offset_error_ns = 0;
};

one_run run_trips(runtime& rt, shared_words* words, std::uint32_t trips) {
  *words = shared_words{};
  echo_thread host(&words->flag, trips);
  one_run r;
  r.seconds = run_job(rt, 1, flag_ping_job{words, trips});
  if (!host.finish() || words->failed != 0) throw std::runtime_error("flag round trip: a side fell silent for 10 s");
  r.host_minus_device_ns = static_cast<std::int64_t>(host.answered_at(words->best_trip) - words->best_middle_ns);
  r.offset_error_ns = static_cast<std::int64_t>(words->best_ns / 2);
  return r;
}

}  // namespace

flag_round_trip measure_flag_round_trip(runtime& rt, std::uint32_t trips) {
  if (trips == 0) throw std::invalid_argument("flag round trip: trips must be positive");
  const pinned_words shared(rt);
  (void)run_trips(rt, shared.words, std::min<std::uint32_t>(trips, 100));  // warm up: the first launch
  std::vector<one_run> runs;
  for (int k = 0; k < 3; ++k) runs.push_back(run_trips(rt, shared.words, trips));
  flag_round_trip result;
  std::vector<double> means;
  for (const one_run& r : runs) means.push_back(r.seconds / trips * 1e6);
  std::sort(means.begin(), means.end());
  result.round_trip_us = means[1];
  // The offset from the run whose fastest trip was fastest: the tightest bound.
  const auto tightest = std::min_element(runs.begin(), runs.end(), [](const one_run& a, const one_run& b) {
    return a.offset_error_ns < b.offset_error_ns;
  });
  result.host_minus_device_ns = tightest->host_minus_device_ns;
  result.offset_error_ns = tightest->offset_error_ns;
  return result;
}

}  // namespace agio::bench
