#pragma once
// Helpers shared by the CPU suite: random data, temporary store files, running a function on
// many threads, and a cache round trip that any replacement policy must pass.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

#include "agio/runtime/software_cache.hpp"

namespace agio::test {

inline std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t x = rng();
    for (std::size_t k = 0; k < 8 && i + k < n; ++k) v[i + k] = static_cast<std::byte>(x >> (8 * k));
  }
  return v;
}

// A file under the temporary directory, removed when the object goes.
class temp_file {
 public:
  // `in_memory`: on /dev/shm where there is one, for tests that exercise agio rather than the
  // disk: on a small VM a file on disk made the cache's shadow runs eight times slower.
  explicit temp_file(const std::string& name, bool in_memory = false)
      : path_(directory(in_memory) / ("agio-test-" + std::to_string(::getpid()) + "-" + name)) {
    std::filesystem::remove(path_);
  }
  ~temp_file() { std::filesystem::remove(path_); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string path() const { return path_.string(); }

 private:
  static std::filesystem::path directory(bool in_memory) {
    if (in_memory && std::filesystem::is_directory("/dev/shm")) return "/dev/shm";
    return std::filesystem::temp_directory_path();
  }
  std::filesystem::path path_;
};

// Divisors for detail::divisor's tests (CPU and GPU): small ones, the sizes agio sets up
// (elements per 4 KiB line, queue depths, set counts) and both ends of the 32-bit range.
inline std::vector<std::uint32_t> divisor_edges() {
  return {
      1,           2,    3,    5,    7,      8,      12,        64,           255,          256,          341,
      1000,        1024, 4095, 4096, 65'535, 65'537, 1'000'003, 0x7fff'ffffu, 0x8000'0000u, 0x8000'0001u, 0xffff'fffeu,
      0xffff'ffffu};
}

// Numerators for divisor `d`: around 0, around multiples of d, around the 32-bit boundary and
// the top of the 64-bit range, and random ones of every width.
inline std::vector<std::uint64_t> numerator_edges(std::uint32_t d, std::mt19937_64& random) {
  constexpr std::uint64_t top = ~std::uint64_t{0};
  std::vector<std::uint64_t> n = {0,
                                  1,
                                  d - 1u,
                                  d,
                                  std::uint64_t{d} + 1,
                                  0xffff'ffffu,
                                  0x1'0000'0000u,
                                  std::uint64_t{1} << 63,
                                  top - 1,
                                  top,
                                  top / d * d,
                                  top / d * d - 1};
  for (const std::uint64_t k : {std::uint64_t{2}, std::uint64_t{3}, std::uint64_t{1} << 20, std::uint64_t{1} << 31}) {
    n.push_back(k * d - 1);
    n.push_back(k * d);
  }
  for (int i = 0; i < 2000; ++i) n.push_back(random() >> (i % 64));
  return n;
}

// The message of the exception `f` throws ("" if none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

inline void run_threads(unsigned count, const std::function<void(unsigned)>& body) {
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < count; ++t) threads.emplace_back(body, t);
  for (auto& t : threads) t.join();
}

// Environment variable `name` as a count, or `unset` where it is not set.
inline std::uint32_t env_count(const char* name, std::uint32_t unset) {
  const char* value = std::getenv(name);
  return value == nullptr ? unset : static_cast<std::uint32_t>(std::stoul(value));
}

// The GPU suite's options. AGIO_TEST_COMPLETION=waiters runs it without a completion service,
// the mode scripts/gpu-sanitize.sh uses: compute-sanitizer runs one kernel at a time, so a
// persistent service kernel would never run beside a test's kernels. The timeouts are
// generous: under compute-sanitizer every kernel runs tens of times slower.
// AGIO_TEST_LANES_PER_QUEUE and AGIO_TEST_WAIT_TOGETHER_NS set those options for every case
// that keeps the suite's, so that the whole suite can run with values other than the defaults
// before they become the defaults.
inline runtime_options gpu_options(data_mover mover = data_mover::gpu_warps) {
  runtime_options o;
  o.backend = backend::gpu;
  o.mover = mover;
  const char* mode = std::getenv("AGIO_TEST_COMPLETION");
  o.completion =
      mode != nullptr && std::string(mode) == "waiters" ? completion_mode::waiters : completion_mode::service;
  o.lanes_per_queue = env_count("AGIO_TEST_LANES_PER_QUEUE", o.lanes_per_queue);
  o.wait_together_ns = env_count("AGIO_TEST_WAIT_TOGETHER_NS", o.wait_together_ns);
  o.max_transfer_bytes = 64 * 1024;
  o.submit_timeout_ms = 120'000;
  o.wait_timeout_ms = 120'000;
  o.stop_timeout_ms = 120'000;
  return o;
}

// A runtime on CPU threads with transfers up to 16 KiB and a minute for every wait.
inline runtime_options cpu_options() {
  runtime_options o;
  o.backend = backend::cpu;
  o.max_transfer_bytes = 16 * 1024;
  o.wait_timeout_ms = 60'000;
  return o;
}

// A cache between accesses: no line pinned, BUSY or CLEANING.
template <class Cache>
void expect_nothing_held(const Cache& cache) {
  const cache_audit a = cache.audit();
  EXPECT_EQ(a.live_pins, 0u);
  EXPECT_EQ(a.busy, 0u);
  EXPECT_EQ(a.cleaning, 0u);
}

// What rt.check() throws; an io_error without a request when it throws nothing.
inline io_error check_error(const runtime& rt) {
  try {
    rt.check();
  } catch (const io_error& e) {
    return e;
  }
  return io_error("check() threw nothing");
}

// Reads `blocks` 4 KiB blocks of device 0 straight from storage, around any cache.
inline std::vector<std::uint64_t> read_storage(runtime& rt, std::uint64_t blocks) {
  std::vector<std::uint64_t> out(blocks * 512);
  auto* buf = static_cast<std::byte*>(rt.allocate_device(4096));
  const std::uint32_t lbas = 4096 / rt.devices()[0].lba_bytes;
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const status s = with_io(rt, [&](const auto& io) { return io.read(0, b * lbas, lbas, buf); });
    EXPECT_TRUE(s.ok()) << describe(s.result);
    std::memcpy(out.data() + b * 512, buf, 4096);
  }
  rt.free(buf);
  return out;
}

// Writes every 7th element of 64 blocks through a 16-line cache, reads them back through it,
// flushes, and checks storage: evictions must write MODIFIED lines back and lose nothing.
template <class Policy>
void sequential_roundtrip(std::uint32_t ways) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:4M?lba=512", 2, 16});
  rt.start();
  constexpr std::uint64_t blocks = 64;
  {
    software_cache<Policy> cache(rt, {16 * 4096, 4096, ways});
    const auto arr = cache.template array<std::uint64_t>();
    for (std::uint64_t i = 0; i < blocks * 512; i += 7) ASSERT_TRUE(arr.put(0, i, i * 3 + 1).ok());
    for (std::uint64_t i = 0; i < blocks * 512; i += 7) {
      std::uint64_t v = 0;
      ASSERT_TRUE(arr.get(0, i, v).ok());
      ASSERT_EQ(v, i * 3 + 1) << "element " << i;
    }
    cache.flush();
    const auto c = cache.counters();
    EXPECT_GT(c.evictions, 0u);
    EXPECT_GT(c.write_backs, 0u);
    EXPECT_GT(c.hits, 0u);
  }
  const auto stored = read_storage(rt, blocks);
  for (std::uint64_t i = 0; i < blocks * 512; ++i) {
    ASSERT_EQ(stored[i], i % 7 == 0 ? i * 3 + 1 : 0) << "element " << i;
  }
}

}  // namespace agio::test
