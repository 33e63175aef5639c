// The CPU suite's cache fault scenarios (tests/host/test_cache_faults.cpp) on GPU threads: a
// failed fill never serves another block, a failed write-back keeps its data and reports its
// error at once, and no write accepted around rt.stop() is lost.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "gpu_jobs.hpp"
#include "harness/chunk_job.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

runtime_options gpu_options(std::uint32_t wait_ms) {
  runtime_options o = test::gpu_options();
  o.wait_timeout_ms = wait_ms;
  o.gpu_thread_stack_bytes = 8 * 1024;  // some jobs below hold a 4 KiB line on their stack
  return o;
}

using test::bump;
using test::expect_nothing_held;
using test::pattern;
using test::pattern_job;
template <class IO>
using view = test::clock_view<IO>;

struct fault_counts {
  std::uint32_t bad_successes;
  std::uint32_t bad_errors;
  std::uint32_t wrong;
  std::uint32_t good_failures;
};

// Warps 0, 3, 6 read block 8, whose every read fails; the others walk good blocks 0-7 of the
// same (only) set through array readers.
template <class IO>
struct failing_block_job {
  view<IO> arr;
  fault_counts* counts;
  std::uint32_t rounds;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const std::uint32_t warp = t / 32;
    if (warp % 3 == 0) {
      for (std::uint32_t r = 0; r < 8 * rounds; ++r) {
        std::uint32_t v = 0;
        const status s = arr.get(0, 8 * 1024 + t % 1024, v);
        if (s.ok()) bump(counts->bad_successes);
        if (s.result == outcome::nvme_error) bump(counts->bad_errors);
      }
      return;
    }
    auto reader = arr.reader(0);
    for (std::uint32_t k = 0; k < rounds; ++k) {
      const std::uint64_t b = (warp + k) % 8;
      for (std::uint64_t i = b * 1024 + t % 32; i < b * 1024 + 1024; i += 97) {
        std::uint32_t v = 0;
        if (!reader.get(i, v).ok()) {
          bump(counts->good_failures);
        } else if (v != pattern(i)) {
          bump(counts->wrong);
        }
      }
    }
  }
};

template <class T>
T* device_zeroed(runtime& rt) {
  auto* p = static_cast<T*>(rt.allocate_device(sizeof(T)));
  const T zero{};
  rt.copy_to_device(p, &zero, sizeof(T));
  return p;
}

template <class T>
T from_device(runtime& rt, const T* p) {
  T value{};
  rt.copy_to_host(&value, p, sizeof(T));
  return value;
}

// A 4-line clock cache on rt's device 0 whose first `blocks` blocks were written with
// pattern(i) through it (failures counted in *failures) and flushed; body(cache, io) goes on.
template <class Body>
void on_patterned_cache(runtime& rt, std::uint32_t blocks, std::uint32_t* failures, Body&& body) {
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {4 * 4096, 4096, 4});
    run_job(rt, 256, pattern_job<IO>{cache.template array<std::uint32_t>(), blocks, failures});
    cache.flush();
    body(cache, io);
  });
}

TEST(GpuCacheFaults, FailedFillNeverServesAnotherBlock) {
  runtime rt(gpu_options(10'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@8", 4, 32});
  rt.start();
  auto* counts = device_zeroed<fault_counts>(rt);
  on_patterned_cache(rt, 8, &counts->good_failures, [&](auto& cache, const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, 9 * 32, failing_block_job<IO>{cache.template array<std::uint32_t>(), counts, 64});
    expect_nothing_held(cache);
  });
  const fault_counts c = from_device(rt, counts);
  EXPECT_EQ(c.bad_successes, 0u);
  EXPECT_GT(c.bad_errors, 0u);
  EXPECT_EQ(c.wrong, 0u);
  EXPECT_EQ(c.good_failures, 0u);
}

// Requesters that give up on their fill after a few microseconds beside holders that keep a
// good block pinned a while: a holder's line never changes under it, every line is free after.
template <class IO>
struct impatient_job {
  cache::cache_handle<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache;
  fault_counts* counts;
  std::uint32_t rounds;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const bool impatient = t % 8 < 5;
    std::uint32_t random = t * 2654435761u + 1;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      random = random * 1664525u + 1013904223u;
      const std::uint64_t block = impatient && (random >> 16) % 2 == 0 ? 8 : (random >> 8) % 8;
      const deadline limit = deadline::after_ns(impatient ? 1'000 + (random >> 4) % 40'000 : cache.wait_timeout_ns);
      std::uint32_t line = cache::no_line;
      if (!cache.acquire_line(0, block, line, limit).ok()) continue;
      if (block == 8) bump(counts->bad_successes);
      const auto* data = reinterpret_cast<const std::uint32_t*>(cache.line_data(line));
      const std::uint32_t k = random % 1024;
      if (data[k] != pattern(block * 1024 + k)) bump(counts->wrong);
      if (!impatient) {
        detail::backoff hold(50'000);
        for (int i = 0; i < 6; ++i) hold.pause();
        if (data[k] != pattern(block * 1024 + k)) bump(counts->good_failures);
      }
      cache.unpin(line);
    }
  }
};

TEST(GpuCacheFaults, RequestersGivingUpLeaveNoPinOnTheNextFill) {
  runtime rt(gpu_options(10'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@8", 4, 32});
  rt.start();
  auto* counts = device_zeroed<fault_counts>(rt);
  on_patterned_cache(rt, 8, &counts->good_failures, [&](auto& cache, const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, 256, impatient_job<IO>{cache.device(), counts, 256});
    // Fills of requesters that gave up may still be landing.
    for (const auto until = clock_type::now() + 2s; cache.audit().busy != 0 && clock_type::now() < until;) {
      std::this_thread::sleep_for(1ms);
    }
    expect_nothing_held(cache);
  });
  const fault_counts c = from_device(rt, counts);
  EXPECT_EQ(c.bad_successes, 0u);
  EXPECT_EQ(c.wrong, 0u);
  EXPECT_EQ(c.good_failures, 0u);  // counted here: a holder's line changed under it
}

// Block 5 fails every write (and read): one thread writes it whole (no read), then reads
// `reads` other blocks through the cache, then block 5 again.
template <class IO>
struct failed_write_back_job {
  cache::cache_handle<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache;
  std::uint32_t reads;
  std::uint32_t* results;  // [0]: failures of good blocks, [1]: status::pack() of the first, [2]: block 5's word 9
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    std::uint32_t words[1024];
    for (std::uint32_t& w : words) w = 77;
    const deadline limit = deadline::after_ns(cache.wait_timeout_ns);
    if (!cache.write_bytes(0, 5, 0, 4096, words, limit).ok()) results[0]++;
    for (std::uint32_t r = 0; r < reads; ++r) {
      std::uint32_t v = 0;
      const status s = cache.read_bytes(0, r % 5, 36, 4, &v, limit);
      if (!s.ok() || v != pattern((r % 5) * 1024 + 9)) {
        if (results[0]++ == 0) results[1] = s.pack();
      }
    }
    if (!cache.read_bytes(0, 5, 36, 4, &results[2], limit).ok()) results[0]++;
  }
};

TEST(GpuCacheFaults, FailedWriteBackKeepsItsDataAndIsNoVictim) {
  runtime rt(gpu_options(5'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@5", 4, 32});
  rt.start();
  auto* results = static_cast<std::uint32_t*>(rt.allocate_device(3 * sizeof(std::uint32_t)));
  const std::uint32_t zero[3] = {};
  rt.copy_to_device(results, zero, sizeof zero);
  on_patterned_cache(rt, 5, results, [&](auto& cache, const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    cache.reset_counters();
    run_job(rt, 1, failed_write_back_job<IO>{cache.device(), 100, results});
    EXPECT_LE(cache.counters().write_backs, 1u);
    EXPECT_EQ(cache.audit().failed, 1u);
    expect_nothing_held(cache);
  });
  std::uint32_t r[3] = {};
  rt.copy_to_host(r, results, sizeof r);
  EXPECT_EQ(r[0], 0u) << describe(status::unpack(r[1]).result);
  EXPECT_EQ(r[2], 77u);
}

// One thread: block 5 written whole, then an access to another block of a one-line cache.
template <class IO>
struct failed_set_job {
  view<IO> arr;
  cache::cache_handle<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache;
  std::uint32_t* result;  // status::pack() of the access
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    std::uint32_t words[1024];
    for (std::uint32_t& w : words) w = 77;
    if (!cache.write_bytes(0, 5, 0, 4096, words, deadline::after_ns(cache.wait_timeout_ns)).ok()) return;
    std::uint32_t v = 0;
    *result = arr.get(0, 1, v).pack();
  }
};

TEST(GpuCacheFaults, SetOfFailedLinesGivesTheWriteBackErrorAtOnce) {
  runtime rt(gpu_options(5'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@5", 4, 32});
  rt.start();
  auto* result = device_zeroed<std::uint32_t>(rt);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {4096, 4096, 1});
    const auto start = clock_type::now();
    run_job(rt, 1, failed_set_job<IO>{cache.template array<std::uint32_t>(), cache.device(), result});
    EXPECT_LT(clock_type::now() - start, 2s);
  });
  const status s = status::unpack(from_device(rt, result));
  EXPECT_EQ(s.result, outcome::nvme_error);
  EXPECT_NE(s.nvme_status, 0u);
}

TEST(GpuCacheFaults, FlushRetriesAFailedWriteBackThenThrowsAtOnce) {
  runtime rt(gpu_options(10'000));
  rt.attach(device_options{"ram:64K?lba=4096&fault=eio@5", 4, 32});
  rt.start();
  auto* result = device_zeroed<std::uint32_t>(rt);
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    cache_options options{4 * 4096, 4096, 4};
    options.write_back_attempts = 3;
    software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, options);
    run_job(rt, 1, failed_set_job<IO>{cache.template array<std::uint32_t>(), cache.device(), result});
    cache.reset_counters();
    for (std::uint32_t flushes = 1; flushes <= 2; ++flushes) {
      const auto start = clock_type::now();
      std::string message;
      try {
        cache.flush();
      } catch (const io_error& e) {
        message = e.what();
      }
      EXPECT_LT(clock_type::now() - start, 5s);
      EXPECT_NE(message.find("LBA 5"), std::string::npos) << message;
      EXPECT_NE(message.find("write fault"), std::string::npos) << message;
      EXPECT_EQ(cache.counters().write_backs, flushes * options.write_back_attempts);
      EXPECT_EQ(cache.audit().failed, 1u);
    }
  });
}

// Writers on the element, partial-block and whole-line paths race with rt.stop() on the host.
// acked[t * 8 + b]: the last value thread t wrote successfully to its element of block b (the
// whole of block 8 + t / 96 for whole-line writers, in acked[t * 8]).
template <class IO>
struct racing_writers_job {
  view<IO> arr;
  cache::cache_handle<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache;
  std::uint32_t* acked;
  std::uint32_t* others;  // outcomes other than success, stopped or timeout
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::uint32_t refused = 0;
    for (std::uint32_t n = 1; refused < 300 && n < 2'000'000; ++n) {
      status s;
      std::uint64_t b = n % 8;
      const std::uint32_t kind = t / 32 % 3;
      if (kind == 0) {
        s = arr.put(0, b * 1024 + t, n);
      } else if (kind == 1) {
        s = cache.write_bytes(0, b, t * 4, 4, &n, deadline::after_ns(200'000'000));
      } else {
        // One whole-line writer per warp (lane 0), so one thread owns each whole block.
        if (t % 32 != 0) return;
        b = 0;
        std::uint32_t words[1024];
        for (std::uint32_t& w : words) w = n;
        s = cache.wait(cache.async_write(0, 8 + t / 96, words));
      }
      if (s.ok()) {
        acked[t * 8 + b] = n;
      } else if (s.result == outcome::stopped) {
        ++refused;
      } else if (s.result != outcome::timeout) {
        bump(*others);
      }
    }
  }
};

__global__ void racing_writers_kernel(racing_writers_job<io_handle> job) {
  job(blockIdx.x * blockDim.x + threadIdx.x, 0);
}
__global__ void racing_writers_kernel(racing_writers_job<waiting_io_handle> job) {
  job(blockIdx.x * blockDim.x + threadIdx.x, 0);
}

TEST(GpuCacheFaults, WritesRacingStopAreRefusedOrDurable) {
  const test::temp_file file("gpu-cache-stop-race");
  const std::string uri = "file:" + file.path() + "?create=1M&lba=4096";
  constexpr std::uint32_t threads = 288;  // 9 warps: 3 of each kind
  std::vector<std::uint32_t> acked(threads * 8);
  std::uint32_t others = 0;
  {
    runtime rt(gpu_options(5'000));
    rt.attach(device_options{uri, 4, 32});
    rt.start();
    auto* acked_device = static_cast<std::uint32_t*>(rt.allocate_device(acked.size() * sizeof(std::uint32_t)));
    rt.copy_to_device(acked_device, acked.data(), acked.size() * sizeof(std::uint32_t));
    auto* others_device = device_zeroed<std::uint32_t>(rt);
    with_io(rt, [&](const auto& io) {
      using IO = std::decay_t<decltype(io)>;
      software_cache<cache::clock, cache::no_lock_chain, cache::no_share_table, IO> cache(rt, {16 * 4096, 4096, 4});
      cudaStream_t stream;
      ASSERT_EQ(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), cudaSuccess);
      racing_writers_kernel<<<threads / 96, 96, 0, stream>>>(
          racing_writers_job<IO>{cache.template array<std::uint32_t>(), cache.device(), acked_device, others_device});
      std::this_thread::sleep_for(30ms);
      std::string stop_failure;
      try {
        rt.stop();
      } catch (const std::exception& e) {
        stop_failure = e.what();
      }
      EXPECT_EQ(stop_failure, "");
      EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      cudaStreamDestroy(stream);
      rt.copy_to_host(acked.data(), acked_device, acked.size() * sizeof(std::uint32_t));
      rt.copy_to_host(&others, others_device, sizeof others);
    });
  }
  EXPECT_EQ(others, 0u);
  runtime rt(gpu_options(5'000));
  rt.attach(uri);
  rt.start();
  // Storage read back around the cache, by device threads (the controller is theirs).
  constexpr std::uint32_t blocks = 8 + threads / 96;
  auto* stored_device = static_cast<std::byte*>(rt.allocate_device(blocks * 4096));
  auto* failures = device_zeroed<std::uint32_t>(rt);
  with_io(rt, [&](const auto& io) {
    run_job(rt, 64, bench::chunk_job{io, 0, 0, stored_device, 4096, blocks, failures});
  });
  ASSERT_EQ(from_device(rt, failures), 0u);
  std::vector<std::uint32_t> stored(blocks * 1024);
  rt.copy_to_host(stored.data(), stored_device, blocks * 4096);
  const auto word = [&](std::uint64_t block, std::uint64_t k) { return stored[block * 1024 + k]; };
  for (std::uint32_t t = 0; t < threads; ++t) {
    const std::uint32_t kind = t / 32 % 3;
    if (kind == 2) {
      if (t % 32 == 0) EXPECT_EQ(word(8 + t / 96, 0), acked[t * 8]) << "whole-line writer " << t;
      continue;
    }
    for (std::uint32_t b = 0; b < 8; ++b) EXPECT_EQ(word(b, t), acked[t * 8 + b]) << "writer " << t << " block " << b;
  }
}

}  // namespace
}  // namespace agio
