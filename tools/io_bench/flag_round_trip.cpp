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

// The device side: round trip i raises the flag to 2i - 1 and waits for the host's 2i.
struct flag_ping_job {
  std::uint32_t* flag;  // pinned host memory
  std::uint32_t trips;
  std::uint32_t* failed;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    for (std::uint32_t i = 1; i <= trips; ++i) {
      portable::store<scope::system>(*flag, 2 * i - 1, portable::release);
      const deadline limit = deadline::after_ns(silence_ns);
      while (portable::load<scope::system>(*flag, portable::acquire) != 2 * i) {
        if (limit.passed()) {
          portable::store<scope::system>(*failed, 1u, portable::relaxed);
          return;
        }
      }
    }
  }
};

// The host side, on a thread of its own: answers each of the device's raises. Joined when it
// goes, after being told that the device side has finished (so a device side that failed
// never leaves it waiting).
class echo_thread {
 public:
  echo_thread(std::uint32_t* flag, std::uint32_t trips)
      : thread_([this, flag, trips] { answered_ = echo(flag, trips); }) {}
  echo_thread(const echo_thread&) = delete;
  echo_thread& operator=(const echo_thread&) = delete;
  ~echo_thread() { finish(); }
  // Whether it answered every raise (false: the device side fell silent).
  bool finish() {
    device_done_ = true;
    if (thread_.joinable()) thread_.join();
    return answered_;
  }

 private:
  bool echo(std::uint32_t* flag, std::uint32_t trips) const {
    for (std::uint32_t i = 1; i <= trips; ++i) {
      const deadline limit = deadline::after_ns(silence_ns);
      while (portable::load<scope::system>(*flag, portable::acquire) != 2 * i - 1) {
        if (device_done_.load(std::memory_order_relaxed) || limit.passed()) return false;
      }
      portable::store<scope::system>(*flag, 2 * i, portable::release);
    }
    return true;
  }

  std::atomic<bool> device_done_{false};
  bool answered_ = false;
  std::thread thread_;  // last: it starts once the members it uses exist
};

// Pinned host words of `rt`, freed when it goes.
struct pinned_words {
  runtime& rt;
  std::uint32_t* words;
  pinned_words(runtime& r, std::size_t count) : rt(r), words(static_cast<std::uint32_t*>(r.allocate_host(count * 4))) {}
  pinned_words(const pinned_words&) = delete;
  pinned_words& operator=(const pinned_words&) = delete;
  ~pinned_words() { rt.free(words); }
};

// Seconds for `trips` round trips (the kernel's launch included, a few microseconds).
double one_run(runtime& rt, std::uint32_t* words, std::uint32_t trips) {
  words[0] = 0;  // the flag
  words[1] = 0;  // the device side's failure
  echo_thread host(words, trips);
  const double seconds = run_job(rt, 1, flag_ping_job{words, trips, words + 1});
  if (!host.finish() || words[1] != 0) throw std::runtime_error("flag round trip: a side fell silent for 10 s");
  return seconds;
}

}  // namespace

double flag_round_trip_us(runtime& rt, std::uint32_t trips) {
  if (trips == 0) throw std::invalid_argument("flag round trip: trips must be positive");
  const pinned_words flag(rt, 2);
  (void)one_run(rt, flag.words, std::min<std::uint32_t>(trips, 100));  // warm up: the first launch
  std::vector<double> runs;
  for (int k = 0; k < 3; ++k) runs.push_back(one_run(rt, flag.words, trips) / trips * 1e6);
  std::sort(runs.begin(), runs.end());
  return runs[1];
}

}  // namespace agio::bench
