// Transaction handles on the GPU: the CPU suite's scenarios (tests/host/test_transactions.cpp)
// with GPU threads as submitters. Many requests in flight per thread all succeed with their own
// data, and a second wait on a collected transaction is stale.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t lba_bytes = 512;
constexpr std::uint32_t store_blocks = 2048;  // ram:1M at 512-byte LBAs

// The byte at `offset` of LBA `lba`, as test_transactions.cpp writes it.
AGIO_HD std::byte pattern(std::uint64_t lba, std::uint32_t offset) {
  return static_cast<std::byte>((lba * 131 + offset * 7 + 1) & 0xff);
}

runtime_options gpu_options() {
  runtime_options o = test::gpu_options();
  o.max_transfer_bytes = 8 * 1024;
  return o;
}

struct fill_job {
  std::byte* data;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t i = t; i < std::uint64_t{store_blocks} * lba_bytes; i += threads) {
      data[i] = pattern(i / lba_bytes, static_cast<std::uint32_t>(i % lba_bytes));
    }
  }
};

// Thread t writes chunk t of the data (`chunk` blocks) to the store.
template <class IO>
struct write_chunks_job {
  static constexpr std::uint32_t chunk = 16;
  IO io;
  const std::byte* data;
  std::uint32_t* failed;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const std::uint64_t first = std::uint64_t{t} * chunk;
    if (!io.write(0, first, chunk, data + first * lba_bytes).ok()) {
      detail::fetch_add<detail::scope::device>(*failed, 1u, detail::relaxed);
    }
  }
};

// Writes the pattern to the whole store through agio, from GPU threads (the I/O handle is
// device-side: host code cannot call it on the GPU backend).
void fill_store(runtime& rt) {
  auto* data = static_cast<std::byte*>(rt.allocate_device(std::size_t{store_blocks} * lba_bytes));
  auto* failed = static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t)));
  const std::uint32_t none = 0;
  rt.copy_to_device(failed, &none, sizeof none);
  run_job(rt, 1024, fill_job{data});
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, store_blocks / write_chunks_job<IO>::chunk, write_chunks_job<IO>{io, data, failed});
  });
  std::uint32_t failures = 0;
  rt.copy_to_host(&failures, failed, sizeof failures);
  ASSERT_EQ(failures, 0u) << "writes of the pattern that failed";
  rt.free(data);
  rt.free(failed);
}

AGIO_HD std::uint64_t lba_of(std::uint32_t t, std::uint32_t k, std::uint32_t per_thread) {
  return (std::uint64_t{t} * per_thread + std::uint64_t{k} * 7) % store_blocks;
}

template <class IO>
struct many_in_flight_job {
  static constexpr std::uint32_t per_thread = 64;
  IO io;
  std::byte* buffers;
  std::uint32_t* failed;  // [0] requests that did not succeed, [1] requests with wrong data
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    transaction tx[per_thread];
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      tx[k] = io.async_read(0, lba_of(t, k, per_thread), 1, buffers + (std::uint64_t{t} * per_thread + k) * lba_bytes);
    }
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      if (!io.wait(tx[k]).ok()) {
        detail::fetch_add<detail::scope::device>(failed[0], 1u, detail::relaxed);
        continue;
      }
      const std::byte* got = buffers + (std::uint64_t{t} * per_thread + k) * lba_bytes;
      for (std::uint32_t i = 0; i < lba_bytes; ++i) {
        if (got[i] != pattern(lba_of(t, k, per_thread), i)) {
          detail::fetch_add<detail::scope::device>(failed[1], 1u, detail::relaxed);
          break;
        }
      }
    }
  }
};

// 8192 threads each hold 64 reads before waiting on any: 524288 requests in flight at most,
// so the pool is sized for all of them (transaction_records; 88 bytes each, 46 MiB).
TEST(GpuTransactions, ThreadsEachHoldSixtyFourReads) {
  constexpr std::uint32_t threads = 8192;
  constexpr std::uint32_t per_thread = many_in_flight_job<io_handle>::per_thread;
  runtime_options o = gpu_options();
  o.transaction_records = threads * per_thread + 8192;
  runtime rt(o);
  rt.attach(device_options{"ram:1M?lba=512", 8, 1024});
  rt.start();
  fill_store(rt);
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * per_thread * lba_bytes));
  auto* failed = static_cast<std::uint32_t*>(rt.allocate_device(2 * sizeof(std::uint32_t)));
  const std::uint32_t zeros[2] = {};
  rt.copy_to_device(failed, zeros, sizeof zeros);
  with_io(rt, [&](const auto& io) {
    run_job(rt, threads, many_in_flight_job<std::decay_t<decltype(io)>>{io, buffers, failed});
  });
  std::uint32_t counts[2] = {};
  rt.copy_to_host(counts, failed, sizeof counts);
  EXPECT_EQ(counts[0], 0u) << "requests that failed";
  EXPECT_EQ(counts[1], 0u) << "requests that read wrong data";
  rt.check();
  rt.stop();
  EXPECT_EQ(rt.counters()[0].rejected, 0u);
}

template <class IO>
struct double_wait_job {
  IO io;
  std::byte* buffers;
  std::uint32_t* outcomes;  // per thread: the first wait's status, then the second's
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const transaction tx = io.async_read(0, t % store_blocks, 1, buffers + std::uint64_t{t} * lba_bytes);
    outcomes[2 * t] = io.wait(tx).pack();
    outcomes[2 * t + 1] = io.wait_for(tx, deadline::after_ms(100)).pack();
  }
};

// Every thread waits twice on its transaction: the first wait collects its own data, the
// second is stale at once, while other threads' requests take and give back records.
TEST(GpuTransactions, SecondWaitIsStale) {
  constexpr std::uint32_t threads = 4096;
  runtime rt(gpu_options());
  rt.attach(device_options{"ram:1M?lba=512", 4, 256});
  rt.start();
  fill_store(rt);
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * lba_bytes));
  auto* outcomes = static_cast<std::uint32_t*>(rt.allocate_device(2 * threads * sizeof(std::uint32_t)));
  with_io(rt, [&](const auto& io) {
    run_job(rt, threads, double_wait_job<std::decay_t<decltype(io)>>{io, buffers, outcomes});
  });
  std::vector<std::uint32_t> got(2 * threads);
  rt.copy_to_host(got.data(), outcomes, got.size() * sizeof(std::uint32_t));
  std::vector<std::byte> data(std::size_t{threads} * lba_bytes);
  rt.copy_to_host(data.data(), buffers, data.size());
  for (std::uint32_t t = 0; t < threads; ++t) {
    const status first = status::unpack(got[2 * t]);
    const status second = status::unpack(got[2 * t + 1]);
    ASSERT_TRUE(first.ok()) << "thread " << t << ": " << describe(first.result);
    ASSERT_EQ(second.result, outcome::stale) << "thread " << t << ": " << describe(second.result);
    for (std::uint32_t i = 0; i < lba_bytes; ++i) {
      ASSERT_EQ(data[std::size_t{t} * lba_bytes + i], pattern(t % store_blocks, i)) << "thread " << t;
    }
  }
  rt.check();
  rt.stop();
}

}  // namespace
}  // namespace agio
