// The GPU suite's requests that go wrong: every bad request gets its status, store errors
// become media errors, a wait's deadline passes while its request still finishes, and stopping
// under in-flight writes loses no acknowledged one.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::gpu_options;
using test::temp_file;

// One thread runs one request of each kind and records its status.
enum class probe : std::uint32_t {
  lba_past_end,
  zero_blocks,
  oversized,
  unknown_opcode,
  unregistered,
  misaligned,
  plain
};

template <class IO>
struct probe_job {
  IO io;
  probe what;
  std::byte* buffer;
  std::byte* unregistered;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    status s{};
    switch (what) {
      case probe::lba_past_end: s = io.read(0, io.capacity_blocks(0), 1, buffer); break;
      case probe::zero_blocks: s = io.read(0, 0, 0, buffer); break;
      case probe::oversized: s = io.read(0, 0, io.max_blocks(0) + 1, buffer); break;
      case probe::unknown_opcode: {
        auto cmd = spec::make_rw(spec::opcode::read, 0, 1, 0, 1, reinterpret_cast<std::uint64_t>(buffer), 0);
        cmd.cdw0 = (cmd.cdw0 & ~0xffu) | 0x7f;
        s = io.wait(io.async_passthrough(0, cmd, buffer, 4096));
        break;
      }
      case probe::unregistered: s = io.read(0, 0, 1, unregistered); break;
      case probe::misaligned: s = io.read(0, 0, 1, buffer + 2); break;
      case probe::plain: s = io.read(0, 1, 1, buffer); break;
    }
    *result = s.pack();
  }
};

class GpuFaults : public ::testing::Test {
 protected:
  void start(const std::string& uri) {
    rt = std::make_unique<runtime>(gpu_options());
    rt->attach(device_options{uri, 1, 8});
    rt->start();
    buffer = static_cast<std::byte*>(rt->allocate_device(64 * 1024));
    result = static_cast<std::uint32_t*>(rt->allocate_device(4));
    // GPU memory the controller was never told about. Not cudaMalloc/cudaFree: cudaFree waits
    // for every kernel on the device, the completion service included.
    unregistered = rt->allocate_device(4096);
    rt->unregister_memory(unregistered);
  }
  status run(probe what) {
    with_io(*rt, [&](const auto& io) {
      run_job(*rt, 1, probe_job{io, what, buffer, static_cast<std::byte*>(unregistered), result});
    });
    std::uint32_t word = 0;
    rt->copy_to_host(&word, result, 4);
    return status::unpack(word);
  }
  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
  std::uint32_t* result = nullptr;
  void* unregistered = nullptr;
};

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

TEST_F(GpuFaults, EveryBadRequestGetsItsStatus) {
  start("ram:1M?lba=4096");
  EXPECT_EQ(run(probe::lba_past_end).nvme_status, generic(spec::generic::lba_out_of_range));
  EXPECT_EQ(run(probe::zero_blocks).result, outcome::invalid_argument);
  EXPECT_EQ(run(probe::oversized).result, outcome::invalid_argument);
  EXPECT_EQ(run(probe::unknown_opcode).nvme_status, generic(spec::generic::invalid_opcode));
  EXPECT_EQ(run(probe::unregistered).nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(run(probe::misaligned).nvme_status, generic(spec::generic::prp_offset_invalid));
  EXPECT_TRUE(run(probe::plain).ok());
  try {
    rt->check();
    FAIL() << "check() must report the first failure";
  } catch (const io_error& e) {
    EXPECT_NE(std::string(e.what()).find("LBA 256"), std::string::npos) << e.what();
  }
}

TEST_F(GpuFaults, StoreErrorsBecomeMediaErrors) {
  start("ram:1M?lba=4096&fault=eio@1");
  EXPECT_EQ(run(probe::plain).nvme_status,
            spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error));
  const temp_file file("short");
  rt.reset();
  start("file:" + file.path() + "?create=1M&lba=4096&fault=short@1");
  EXPECT_EQ(run(probe::plain).nvme_status,
            spec::make_status(spec::status_type::media, spec::media::unrecovered_read_error));
  rt.reset();
}

template <class IO>
struct deadline_job {
  IO io;
  std::byte* buffer;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    const transaction t = io.async_read(0, 0, 1, buffer);
    result[0] = io.wait_for(t, deadline::after_ms(1)).pack();
    result[1] = io.wait(t).pack();
  }
};

TEST(GpuWait, DeadlinePassesThenTheRequestStillFinishes) {
  runtime rt(gpu_options());
  rt.attach("ram:1M?read_us=200000");
  rt.start();
  auto* buffer = static_cast<std::byte*>(rt.allocate_device(4096));
  auto* result = static_cast<std::uint32_t*>(rt.allocate_device(8));
  with_io(rt, [&](const auto& io) { run_job(rt, 1, deadline_job{io, buffer, result}); });
  std::uint32_t words[2];
  rt.copy_to_host(words, result, 8);
  EXPECT_EQ(status::unpack(words[0]).result, outcome::timeout);
  EXPECT_TRUE(status::unpack(words[1]).ok());
}

// Threads rewrite their block round after round until the runtime stops under them; each
// records the last round acknowledged. Afterwards every block holds at least that round.
template <class IO>
struct until_stopped_job {
  IO io;
  std::byte* buffers;
  std::uint32_t* acknowledged;
  std::uint32_t* unexpected;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::byte* slot = buffers + std::uint64_t{t} * 4096;
    for (std::uint32_t round = 1; round < 1'000'000; ++round) {
      reinterpret_cast<std::uint32_t*>(slot)[0] = round;
      reinterpret_cast<std::uint32_t*>(slot)[1] = t;
      const status s = io.write(0, t, 1, slot);
      if (s.ok()) {
        acknowledged[t] = round;
      } else {
        if (s.result != outcome::stopped) detail::fetch_add<detail::scope::device>(*unexpected, 1u, detail::relaxed);
        return;
      }
    }
  }
};

TEST(GpuStop, InFlightWritesFinishOrFailAndNoAcknowledgedWriteIsLost) {
  constexpr std::uint32_t threads = 2048;
  const temp_file file("stop");
  const std::string uri = "file:" + file.path() + "?create=16M&lba=4096";
  std::vector<std::uint32_t> acknowledged(threads);
  {
    runtime rt(gpu_options());
    rt.attach(device_options{uri, 4, 32});
    rt.start();
    auto* buffers = static_cast<std::byte*>(rt.allocate_device(std::size_t{threads} * 4096));
    auto* acks = static_cast<std::uint32_t*>(rt.allocate_device(threads * 4));
    auto* unexpected = static_cast<std::uint32_t*>(rt.allocate_device(4));
    std::thread stopper([&] {
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
      rt.stop();
    });
    with_io(rt, [&](const auto& io) { run_job(rt, threads, until_stopped_job{io, buffers, acks, unexpected}); });
    stopper.join();
    std::uint32_t bad = 0;
    rt.copy_to_host(&bad, unexpected, 4);
    EXPECT_EQ(bad, 0u);
    rt.copy_to_host(acknowledged.data(), acks, threads * 4);
  }
  EXPECT_GT(std::accumulate(acknowledged.begin(), acknowledged.end(), 0ull), 0ull);
  runtime_options o = gpu_options();
  o.backend = backend::cpu;  // read back on the host: independent of the GPU path under test
  runtime rt(o);
  rt.attach(uri);
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_host(4096));
  for (std::uint32_t t = 0; t < threads; ++t) {
    if (acknowledged[t] == 0) continue;
    ASSERT_TRUE(with_io(rt, [&](const auto& io) { return io.read(0, t, 1, buf); }).ok());
    std::uint32_t words[2];
    std::memcpy(words, buf, 8);
    EXPECT_EQ(words[1], t);
    EXPECT_GE(words[0], acknowledged[t]) << "block " << t << " lost an acknowledged write";
  }
  rt.stop();
}

}  // namespace
}  // namespace agio
