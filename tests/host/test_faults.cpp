// Bad input and faults: each ends in a clear status, none in a hang or a crash.
#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <system_error>

#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::run_threads;
using test::temp_file;

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }
constexpr std::uint16_t media(std::uint8_t sc) { return spec::make_status(spec::status_type::media, sc); }

class Faults : public ::testing::Test {
 protected:
  void start(const std::string& uri, runtime_options opt = {}) {
    opt.backend = backend::cpu;
    opt.max_transfer_bytes = 16 * 1024;
    rt = std::make_unique<runtime>(opt);
    rt->attach(device_options{uri, 1, 8});
    rt->start();
    buffer = static_cast<std::byte*>(rt->allocate_device(64 * 1024));
  }
  const io_handle& io() const { return rt->io(); }
  io_error checked() const { return test::check_error(*rt); }

  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
};

TEST_F(Faults, LbaPastTheEndIsOutOfRangeAndReachesTheHost) {
  start("ram:1M?lba=4096");
  const status s = io().read(0, 256, 1, buffer);  // 1 MiB holds blocks 0..255
  EXPECT_EQ(s.result, outcome::nvme_error);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::lba_out_of_range));
  EXPECT_EQ(io().read(0, 255, 2, buffer).nvme_status, generic(spec::generic::lba_out_of_range));
  EXPECT_EQ(io().read(0, ~std::uint64_t{0} - 1, 4, buffer).nvme_status, generic(spec::generic::lba_out_of_range));
  EXPECT_TRUE(io().read(0, 255, 1, buffer).ok());
  const io_error e = checked();
  ASSERT_TRUE(e.has_request()) << e.what();
  EXPECT_EQ(e.device(), 0u);
  EXPECT_EQ(e.uri(), "ram:1M?lba=4096");
  EXPECT_EQ(e.lba(), 256u);
  EXPECT_EQ(e.blocks(), 1u);
  EXPECT_EQ(e.result().result, outcome::nvme_error);
  EXPECT_EQ(e.nvme_status(), generic(spec::generic::lba_out_of_range));
  EXPECT_EQ(e.refusal(), io::failure_cause::completed);
}

TEST_F(Faults, ZeroBlocksAndOversizedTransfersAreRejected) {
  start("ram:1M?lba=512");
  EXPECT_EQ(io().read(0, 0, 0, buffer).result, outcome::invalid_argument);
  EXPECT_EQ(io().read(0, 0, 16 * 1024 / 512 + 1, buffer).result, outcome::invalid_argument);
  EXPECT_EQ(io().read(7, 0, 1, buffer).result, outcome::invalid_argument);  // no device 7
  // A raw command beyond the maximum transfer size is refused by the controller itself.
  const auto cmd = spec::make_rw(spec::opcode::read, 0, 1, 0, 64, reinterpret_cast<std::uint64_t>(buffer), 0);
  const status s = io().wait(io().async_passthrough(0, cmd, buffer, 512));
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
}

TEST_F(Faults, UnknownOpcodeAndWrongNamespace) {
  start("ram:1M");
  auto cmd = spec::make_rw(spec::opcode::read, 0, 1, 0, 1, reinterpret_cast<std::uint64_t>(buffer), 0);
  cmd.cdw0 = (cmd.cdw0 & ~0xffu) | 0x7f;
  EXPECT_EQ(io().wait(io().async_passthrough(0, cmd, buffer, 512)).nvme_status, generic(spec::generic::invalid_opcode));
  auto wrong_ns = spec::make_rw(spec::opcode::read, 0, 9, 0, 1, reinterpret_cast<std::uint64_t>(buffer), 0);
  EXPECT_EQ(io().wait(io().async_passthrough(0, wrong_ns, buffer, 512)).nvme_status,
            generic(spec::generic::invalid_namespace));
}

TEST_F(Faults, UnregisteredOrMisalignedBuffers) {
  start("ram:1M");
  std::vector<std::byte> not_registered(8192);
  EXPECT_EQ(io().read(0, 0, 1, not_registered.data()).nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(io().write(0, 0, 1, not_registered.data()).nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(io().read(0, 0, 1, buffer + 2).nvme_status, generic(spec::generic::prp_offset_invalid));
  // A buffer that runs off the end of its registered region.
  EXPECT_EQ(io().read(0, 0, 8, buffer + 64 * 1024 - 2048).nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_TRUE(io().read(0, 0, 1, buffer + 4).ok()) << "dword-aligned buffers are valid NVMe";
}

TEST_F(Faults, StoreEioBecomesUnrecoveredReadError) {
  start("ram:1M?lba=4096&fault=eio@7");
  EXPECT_TRUE(io().read(0, 6, 1, buffer).ok());
  EXPECT_EQ(io().read(0, 6, 2, buffer).nvme_status, media(spec::media::unrecovered_read_error));
  EXPECT_EQ(io().write(0, 7, 1, buffer).nvme_status, media(spec::media::write_fault));
  const io_error e = checked();
  EXPECT_EQ(e.lba(), 6u);
  EXPECT_EQ(e.blocks(), 2u);
  EXPECT_EQ(e.opcode(), spec::opcode::read);
  EXPECT_EQ(e.nvme_status(), media(spec::media::unrecovered_read_error));
  EXPECT_EQ(e.error_number(), EIO);
  // The store's own words come with it.
  EXPECT_NE(e.request().store_error.find("Input/output error"), std::string::npos) << e.what();
}

TEST_F(Faults, ShortReadFromAFileIsAnError) {
  temp_file file("short");
  start("file:" + file.path() + "?create=1M&lba=4096&fault=short@3");
  EXPECT_EQ(io().read(0, 2, 2, buffer).nvme_status, media(spec::media::unrecovered_read_error));
  const io_error e = checked();
  EXPECT_EQ(e.lba(), 2u);
  EXPECT_EQ(e.error_number(), 0) << "a short transfer has no errno";
  EXPECT_NE(e.request().store_error.find("short transfer"), std::string::npos) << e.what();
}

TEST_F(Faults, WaitDeadlinePassesThenTheRequestStillFinishes) {
  start("ram:1M?read_us=200000");
  const transaction t = io().async_read(0, 0, 1, buffer);
  EXPECT_EQ(io().wait_for(t, deadline::after_ms(1)).result, outcome::timeout);
  EXPECT_TRUE(io().wait(t).ok());
}

TEST(Attach, MissingFileNamesThePath) {
  runtime_options opt;
  opt.backend = backend::cpu;
  runtime rt(opt);
  try {
    rt.attach("file:/nonexistent/agio/store.bin");
    FAIL() << "attach must throw";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/agio/store.bin"), std::string::npos) << e.what();
  }
  EXPECT_THROW(rt.attach("tape:0"), std::invalid_argument);
  EXPECT_THROW(rt.start(), std::logic_error);  // nothing attached
}

// The handle's type says who retires completions, so a runtime hands out only its own mode's:
// the other one would leave completions unretired, or poll beside the service.
TEST(Handle, EachCompletionModeHandsOutOnlyItsOwnController) {
  const auto message = [](const auto& get) {
    try {
      get();
    } catch (const std::logic_error& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  for (const completion_mode mode : {completion_mode::service, completion_mode::waiters}) {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.completion = mode;
    runtime rt(opt);
    rt.attach("ram:1M");
    EXPECT_THROW(rt.io(), std::logic_error);  // not started
    EXPECT_THROW(rt.waiting_io(), std::logic_error);
    rt.start();
    EXPECT_EQ(rt.completion(), mode);
    if (mode == completion_mode::service) {
      EXPECT_TRUE(rt.io().read(0, 0, 1, rt.allocate_device(4096)).ok());
      EXPECT_NE(message([&] { rt.waiting_io(); }).find("use io()"), std::string::npos);
    } else {
      EXPECT_TRUE(rt.waiting_io().read(0, 0, 1, rt.allocate_device(4096)).ok());
      EXPECT_NE(message([&] { rt.io(); }).find("use waiting_io()"), std::string::npos);
    }
  }
}

// Stopping with writes in flight: every write acknowledged as successful is in the store
// afterwards; every other one reports `stopped` (never a hang, never a silent loss).
void stop_with_writes_in_flight(completion_mode completion) {
  temp_file file("stop");
  const std::string uri = "file:" + file.path() + "?create=4M&lba=4096";
  constexpr unsigned threads = 4;
  constexpr std::uint32_t blocks = 1024;
  std::vector<std::atomic<std::uint32_t>> acknowledged(blocks);
  std::atomic<unsigned> stopped_seen{0};
  {
    runtime_options opt;
    opt.backend = backend::cpu;
    opt.completion = completion;
    opt.max_transfer_bytes = 4096;
    runtime rt(opt);
    rt.attach(device_options{uri, 2, 8});
    rt.start();
    with_io(rt, [&](const auto& io) {
      auto* buf = static_cast<std::byte*>(rt.allocate_device(std::size_t{blocks} * 4096));
      std::atomic<bool> go{false};
      std::thread stopper([&] {
        while (!go.load()) std::this_thread::yield();
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        rt.stop();
      });
      run_threads(threads, [&](unsigned t) {
        go.store(true);
        for (std::uint32_t round = 1; round < 1'000'000; ++round) {
          std::vector<std::pair<std::uint32_t, transaction>> mine;
          for (std::uint32_t b = t; b < blocks; b += threads * 16) {
            std::byte* slot = buf + std::size_t{b} * 4096;
            std::memcpy(slot, &round, sizeof round);
            std::memcpy(slot + 4, &b, sizeof b);
            mine.emplace_back(b, io.async_write(0, b, 1, slot));
          }
          bool any_stopped = false;
          for (auto [b, tx] : mine) {
            const status s = io.wait(tx);
            if (s.ok()) {
              acknowledged[b].store(round);
            } else {
              ASSERT_EQ(s.result, outcome::stopped) << describe(s.result);
              any_stopped = true;
            }
          }
          if (any_stopped) {
            stopped_seen.fetch_add(1);
            return;
          }
        }
      });
      stopper.join();
    });
  }
  EXPECT_EQ(stopped_seen.load(), threads);
  // Read the store back through a fresh runtime: each block holds its last acknowledged round.
  runtime_options opt;
  opt.backend = backend::cpu;
  runtime rt(opt);
  rt.attach(uri);
  rt.start();
  auto* buf = static_cast<std::byte*>(rt.allocate_device(4096));
  for (std::uint32_t b = 0; b < blocks; ++b) {
    const std::uint32_t want = acknowledged[b].load();
    if (want == 0) continue;
    ASSERT_TRUE(rt.io().read(0, b, 1, buf).ok());
    std::uint32_t round = 0, block = 0;
    std::memcpy(&round, buf, sizeof round);
    std::memcpy(&block, buf + 4, sizeof block);
    EXPECT_EQ(block, b);
    EXPECT_GE(round, want) << "block " << b << " lost an acknowledged write";
  }
}

TEST(Stop, InFlightWritesFinishOrFailAndNoAcknowledgedWriteIsLost) {
  stop_with_writes_in_flight(completion_mode::service);
}
TEST(Stop, WithoutServiceNoAcknowledgedWriteIsLost) { stop_with_writes_in_flight(completion_mode::waiters); }

}  // namespace
}  // namespace agio
