#pragma once
// One nanosecond clock for both sides, and the deadline every agio wait takes.
#include <cstdint>

#include "agio/detail/platform.hpp"

#include <chrono>

namespace agio {

// Nanoseconds on the caller's clock: the GPU's global timer on the device, steady_clock on the
// host. The two clocks are not comparable, so deadlines are made where they are used.
AGIO_HD inline std::uint64_t now_ns() {
#if defined(__CUDA_ARCH__)
  std::uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
#else
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
#endif
}

// An absolute point on now_ns()'s clock; `never` waits without limit but still reports status.
struct deadline {
  std::uint64_t at_ns;

  AGIO_HD static deadline after_ns(std::uint64_t ns) {
    const std::uint64_t now = now_ns();
    return {ns > ~std::uint64_t{0} - now ? ~std::uint64_t{0} : now + ns};
  }
  AGIO_HD static deadline after_ms(std::uint64_t ms) { return after_ns(ms * 1'000'000ull); }
  AGIO_HD static deadline never() { return {~std::uint64_t{0}}; }
  AGIO_HD bool passed() const { return at_ns != ~std::uint64_t{0} && now_ns() >= at_ns; }
};

}  // namespace agio
