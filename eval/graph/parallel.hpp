#pragma once
// Splits [0, count) into one contiguous range per hardware thread and runs body(begin, end) on
// each: the host-side graph work (generating, building CSR, references) is tens of millions of
// independent items at the full benchmark sizes. Results must not depend on the split.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace agio::bench::graph {

template <class Body>
void parallel_for(std::uint64_t count, Body&& body) {
  const std::uint64_t workers = std::clamp<std::uint64_t>(std::thread::hardware_concurrency(), 1, 64);
  const std::uint64_t per = (count + workers - 1) / workers;
  if (workers == 1 || count < 4096) {
    body(std::uint64_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  for (std::uint64_t begin = 0; begin < count; begin += per) {
    pool.emplace_back([&body, begin, end = std::min(count, begin + per)] { body(begin, end); });
  }
  for (auto& t : pool) t.join();
}

}  // namespace agio::bench::graph
