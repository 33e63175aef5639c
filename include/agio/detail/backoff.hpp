#pragma once
// Polling with exponential backoff. Every agio spin goes through here so that no loop burns a
// core (on CI the proxy's controller threads share two cores with the test's own threads) and
// none runs past its deadline.
#include <cstdint>

#include "agio/detail/clock.hpp"
#include "agio/detail/platform.hpp"

#if !defined(__CUDA_ARCH__)
#include <thread>
#endif

namespace agio::detail {

class backoff {
 public:
  AGIO_HD explicit backoff(std::uint32_t max_sleep_ns = 8'192) : max_sleep_ns_(max_sleep_ns) {}

  AGIO_HD void pause() {
#if defined(__CUDA_ARCH__)
    __nanosleep(sleep_ns_);
#else
    if (sleep_ns_ <= 256) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::nanoseconds(sleep_ns_));
    }
#endif
    sleep_ns_ = sleep_ns_ * 2 > max_sleep_ns_ ? max_sleep_ns_ : sleep_ns_ * 2;
  }

  AGIO_HD void reset() { sleep_ns_ = 32; }

 private:
  std::uint32_t sleep_ns_ = 32;
  std::uint32_t max_sleep_ns_;
};

// The longest sleep between looks at something that waits for I/O. GPU threads sleep briefly
// (a __nanosleep costs the SM nothing); host threads stand in for GPU threads by the thousand
// in tests, and a short sleep there turns into a storm of context switches on a small machine.
#if defined(__CUDA_ARCH__)
inline constexpr std::uint32_t io_wait_max_sleep_ns = 2'048;
#else
inline constexpr std::uint32_t io_wait_max_sleep_ns = 32'768;
#endif

// Polls `ready()` until it returns true or `limit` passes; true when ready.
template <class Ready>
AGIO_HD bool poll_until(Ready&& ready, deadline limit, std::uint32_t max_sleep_ns = 8'192) {
  backoff wait(max_sleep_ns);
  while (!ready()) {
    if (limit.passed()) return ready();
    wait.pause();
  }
  return true;
}

}  // namespace agio::detail
