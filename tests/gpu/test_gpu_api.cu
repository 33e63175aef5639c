// The CPU suite's first-hour calls (tests/host/test_api.cpp) from GPU threads: byte-addressed
// reads that split long ranges and refuse misaligned ones, wait_all over a thread's own
// transactions, read_all, and describe() words a kernel can print. And the GPUs' memory as
// agio info lists it.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>

#include "agio/agio.hpp"
#include "agio/runtime/gpu_memory.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint32_t lba_bytes = 4096;
constexpr std::uint64_t store_bytes = 1 << 20;  // ram:1M?lba=4096
constexpr std::uint32_t threads = 256;
constexpr std::uint32_t per_thread = 4;  // blocks each thread reads, through each call

AGIO_HD std::byte pattern(std::uint64_t at) { return static_cast<std::byte>((at * 131 + (at >> 12) * 7 + 1) & 0xff); }

struct fill_job {
  std::byte* data;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t n) const {
    for (std::uint64_t i = t; i < store_bytes; i += n) data[i] = pattern(i);
  }
};

// What each thread found, per call; 0 is right.
struct outcomes {
  std::uint32_t write_failed;
  std::uint32_t bytes_failed;
  std::uint32_t bytes_wrong;
  std::uint32_t misaligned_not_refused;
  std::uint32_t wait_all_wrong;
  std::uint32_t read_all_wrong;
  char words[64];  // describe() of an out-of-range read, as thread 0 saw it
};

AGIO_HD void bump(std::uint32_t& counter) { detail::fetch_add<detail::scope::device>(counter, 1u, detail::relaxed); }

template <class IO>
struct write_job {
  IO io;
  const std::byte* data;
  outcomes* out;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t n) const {
    // 256 KiB per call: split into transfers inside write_bytes.
    const std::uint64_t share = store_bytes / n;
    if (!io.write_bytes(0, t * share, share, data + t * share).ok()) bump(out->write_failed);
  }
};

template <class IO>
struct read_job {
  IO io;
  std::byte* buffers;  // per_thread blocks per thread, three times
  outcomes* out;

  AGIO_HD bool holds(const std::byte* where, std::uint64_t at, std::uint64_t bytes) const {
    for (std::uint64_t i = 0; i < bytes; ++i) {
      if (where[i] != pattern(at + i)) return false;
    }
    return true;
  }

  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const std::uint64_t blocks = store_bytes / lba_bytes;
    std::byte* mine = buffers + std::uint64_t{t} * 3 * per_thread * lba_bytes;

    // Byte-addressed: per_thread blocks from a thread-dependent offset, in one call.
    const std::uint64_t offset = (t * 7 % (blocks - per_thread)) * lba_bytes;
    if (!io.read_bytes(0, offset, per_thread * lba_bytes, mine).ok()) bump(out->bytes_failed);
    else if (!holds(mine, offset, per_thread * lba_bytes)) bump(out->bytes_wrong);
    if (io.read_bytes(0, offset + 1, lba_bytes, mine).result != outcome::misaligned) bump(out->misaligned_not_refused);

    // wait_all over the thread's own transactions; the last one reads past the end.
    std::byte* second = mine + per_thread * lba_bytes;
    transaction ts[per_thread + 1];
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      ts[k] = io.async_read(0, (t + k * 31) % blocks, 1, second + k * lba_bytes);
    }
    ts[per_thread] = io.async_read(0, blocks, 1, second);
    std::uint32_t failed = 0;
    const status all = io.wait_all(ts, per_thread + 1, &failed);
    bool right = failed == per_thread && all.result == outcome::nvme_error &&
                 all.nvme_status == spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range);
    for (std::uint32_t k = 0; k < per_thread && right; ++k) {
      right = holds(second + k * lba_bytes, (t + k * 31) % blocks * lba_bytes, lba_bytes);
    }
    if (!right) bump(out->wait_all_wrong);
    if (t == 0) {
      const char* words = describe(all);
      std::uint32_t i = 0;
      for (; words[i] != '\0' && i + 1 < sizeof out->words; ++i) out->words[i] = words[i];
      out->words[i] = '\0';
    }

    // read_all: more requests than a GPU thread keeps in flight (batch_window() is 4 there).
    std::byte* third = second + per_thread * lba_bytes;
    block_request requests[per_thread + 2];
    for (std::uint32_t k = 0; k < per_thread + 2; ++k) {
      // Request k + per_thread reuses request k's buffer, collected before it is issued.
      requests[k] = {0, (t * 3 + k) % blocks, 1, third + (k % per_thread) * lba_bytes};
    }
    std::uint32_t read_failed = 0;
    const status batch = io.read_all(requests, per_thread + 2, &read_failed);
    if (!batch.ok() || read_failed != per_thread + 2 ||
        !holds(third + (per_thread + 1) % per_thread * lba_bytes, (t * 3 + per_thread + 1) % blocks * lba_bytes,
               lba_bytes)) {
      bump(out->read_all_wrong);
    }
  }
};

TEST(GpuApi, ByteAddressedReadsWaitAllAndBatchesFromGpuThreads) {
  runtime rt(test::gpu_options());
  rt.attach(device_options{"ram:1M?lba=4096", 4, 64});
  rt.start();
  auto* data = static_cast<std::byte*>(rt.allocate_device(store_bytes));
  auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * 3 * per_thread * lba_bytes));
  auto* out = static_cast<outcomes*>(rt.allocate_device(sizeof(outcomes)));
  const outcomes zero{};
  rt.copy_to_device(out, &zero, sizeof zero);
  run_job(rt, 1024, fill_job{data});
  with_io(rt, [&](const auto& io) {
    using IO = std::decay_t<decltype(io)>;
    run_job(rt, 4, write_job<IO>{io, data, out});
    run_job(rt, threads, read_job<IO>{io, buffers, out});
  });
  outcomes got{};
  rt.copy_to_host(&got, out, sizeof got);
  EXPECT_EQ(got.write_failed, 0u);
  EXPECT_EQ(got.bytes_failed, 0u);
  EXPECT_EQ(got.bytes_wrong, 0u);
  EXPECT_EQ(got.misaligned_not_refused, 0u);
  EXPECT_EQ(got.wait_all_wrong, 0u);
  EXPECT_EQ(got.read_all_wrong, 0u);
  EXPECT_STREQ(got.words, "LBA out of range");
  // The misaligned reads were refused; check() reports the first failure, the first of them or
  // an out-of-range read, whichever came first.
  try {
    rt.check();
    ADD_FAILURE() << "check() reported nothing";
  } catch (const io_error& e) {
    EXPECT_TRUE(e.refusal() == io::failure_cause::misaligned || e.nvme_status() != 0) << e.what();
  }
  rt.free(data);
  rt.free(buffers);
  rt.free(out);
}

// Every GPU CUDA reports is listed once, by ordinal, with a name and its memory; the runtime's
// GPU is among them, by the name it describes; the caller's current device is left alone.
TEST(GpuApi, ListsTheGpusAndTheirMemory) {
  runtime rt(test::gpu_options());
  int before = -1;
  ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
  const std::vector<gpu_memory> gpus = gpu_memories();
  ASSERT_FALSE(gpus.empty());
  bool runtime_gpu_listed = false;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    EXPECT_EQ(gpus[i].index, static_cast<int>(i));
    EXPECT_FALSE(gpus[i].name.empty());
    EXPECT_GT(gpus[i].total_bytes, 0u);
    EXPECT_LE(gpus[i].free_bytes, gpus[i].total_bytes);
    runtime_gpu_listed = runtime_gpu_listed || rt.describe().find(gpus[i].name) != std::string::npos;
  }
  EXPECT_TRUE(runtime_gpu_listed) << rt.describe();
  int after = -1;
  ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
  EXPECT_EQ(after, before);
}

}  // namespace
}  // namespace agio
