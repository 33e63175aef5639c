// The data path between user buffers, queue slots and stores: raw (passthrough) commands whose
// buffer does not name what their PRPs name are refused with an NVMe status and never executed,
// and a read concurrent with writes to the same LBA returns one whole write per LBA, on every
// path (zero copy from a RAM store, bounce slot, direct host buffer), for both data movers and
// both completion modes, with reads from the RAM store copied by the retirer or, where the
// controller has time, by the controller.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "agio/spec/status.hpp"
#include "passthrough_fixture.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

struct path_config {
  data_mover mover;
  completion_mode completion;
};

std::string config_name(const ::testing::TestParamInfo<path_config>& info) {
  return std::string(info.param.mover == data_mover::gpu_warps ? "GpuWarps" : "CopyEngine") +
         (info.param.completion == completion_mode::service ? "Service" : "Waiters");
}

runtime_options options_for(const path_config& config) {
  runtime_options opt = test::cpu_options();
  opt.mover = config.mover;
  opt.completion = config.completion;
  return opt;
}

using test::filled;

class Passthrough : public ::testing::TestWithParam<path_config>, protected test::passthrough_fixture {
 protected:
  void SetUp() override {
    open(options_for(GetParam()));
    store_known_block();
  }

  status typed(bool write, std::byte* where) override {
    return with_io(*rt, [&](const auto& io) { return write ? io.write(0, lba, 1, where) : io.read(0, lba, 1, where); });
  }
  status raw(spec::opcode op, std::uint64_t prp1, void* user_buffer, std::uint32_t bytes) {
    const auto cmd = spec::make_rw(op, 0, 1, lba, 1, prp1, 0);
    return with_io(*rt, [&](const auto& io) { return io.wait(io.async_passthrough(0, cmd, user_buffer, bytes)); });
  }
  static std::uint64_t iova(const void* p) { return reinterpret_cast<std::uint64_t>(p); }
};

TEST_P(Passthrough, WriteWithoutABufferIsRefused) {
  const status s = raw(spec::opcode::write, iova(buffer), nullptr, block);
  EXPECT_EQ(s.result, outcome::nvme_error);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(on_store(), stored) << "the refused write changed the store";
}

TEST_P(Passthrough, WriteWhoseBufferIsNotItsPrpTargetIsRefused) {
  const status s = raw(spec::opcode::write, iova(buffer), other, block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(on_store(), stored) << "the refused write changed the store";
}

TEST_P(Passthrough, ReadWithoutABufferIsRefused) {
  const status s = raw(spec::opcode::read, iova(buffer), nullptr, block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, block), filled(block, 0xb1)) << "the refused read moved data";
}

TEST_P(Passthrough, ReadWhoseBufferIsNotItsPrpTargetIsRefused) {
  const status s = raw(spec::opcode::read, iova(buffer), other, block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, block), filled(block, 0xb1));
  EXPECT_EQ(get(other, block), filled(block, 0x07));
}

TEST_P(Passthrough, ReadLongerThanItsBufferSaysIsRefused) {
  // The command moves one block; a copy of `bytes` would run over the next three.
  const status s = raw(spec::opcode::read, iova(buffer), buffer, 4 * block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, 4 * block), filled(4 * block, 0xb1));
}

TEST_P(Passthrough, ReadIntoAnUnregisteredPrpIsRefused) {
  std::vector<std::byte> unregistered = filled(2 * block, 0x5a);
  const status s = raw(spec::opcode::read, iova(unregistered.data()), unregistered.data(), block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(unregistered, filled(2 * block, 0x5a));
}

TEST_P(Passthrough, WriteFromAnUnregisteredPrpIsRefused) {
  std::vector<std::byte> unregistered = filled(block, 0x5a);
  const status s = raw(spec::opcode::write, iova(unregistered.data()), unregistered.data(), block);
  EXPECT_EQ(s.nvme_status, generic(spec::generic::data_transfer_error));
  EXPECT_EQ(on_store(), stored);
}

TEST_P(Passthrough, CommandsWhoseBufferIsTheirPrpTargetWork) {
  const std::vector<std::byte> data = test::random_bytes(block, 43);
  put(other, data);
  ASSERT_TRUE(raw(spec::opcode::write, iova(other), other, block).ok());
  EXPECT_EQ(on_store(), data);
  ASSERT_TRUE(raw(spec::opcode::read, iova(buffer), buffer, block).ok());
  EXPECT_EQ(get(buffer, block), data);
  EXPECT_EQ(get(buffer + block, block), filled(block, 0xb1)) << "the read ran past its block";
}

INSTANTIATE_TEST_SUITE_P(DataPath, Passthrough,
                         ::testing::Values(path_config{data_mover::gpu_warps, completion_mode::service},
                                           path_config{data_mover::gpu_warps, completion_mode::waiters},
                                           path_config{data_mover::copy_engine, completion_mode::service},
                                           path_config{data_mover::copy_engine, completion_mode::waiters}),
                         config_name);

// Writers rewrite a few LBAs with one of two whole-LBA patterns while readers read them; every
// LBA a read returns must be one pattern, never a mix. A pattern's words name its LBA and which
// of the two it is, so a read also shows a block that landed at the wrong LBA.
class LbaAtomicity : public ::testing::TestWithParam<path_config> {
 protected:
  static constexpr std::uint64_t lbas = 4;

  static std::uint64_t word_of(std::uint64_t lba, std::uint64_t which) {
    return (lba << 8 | which) * 0x0101'0001'0001'0101ull;
  }

  // Runs the race on a RAM store of `lba_bytes` blocks, reading into `device` or host buffers,
  // with the controller's copy depth `copy_depth` (runtime_options::controller_copy_depth; 0:
  // every read into a device buffer is copied from the store's bytes by the retirer).
  void race(std::uint32_t lba_bytes, bool device_buffers, std::uint32_t copy_depth = 0) {
    runtime_options opt = options_for(GetParam());
    // Two controller threads, so that a write and a read the controller copies itself can
    // overlap too.
    opt.controller_threads = 2;
    opt.controller_copy_depth = copy_depth;
    runtime rt(opt);
    rt.attach(device_options{"ram:1M?lba=" + std::to_string(lba_bytes), 4, 16});
    rt.start();
    const std::size_t span = lbas * lba_bytes;
    constexpr unsigned writers = 2;
    constexpr unsigned readers = 4;
    // Fewer rounds of large blocks: under ThreadSanitizer every word copied costs.
    const int rounds = lba_bytes <= 512 ? 250 : 60;
    std::vector<std::byte*> buffers;
    for (unsigned t = 0; t < writers + readers; ++t) {
      buffers.push_back(static_cast<std::byte*>(device_buffers ? rt.allocate_device(span) : rt.allocate_host(span)));
    }
    // Both patterns of every LBA, laid out as the writers send them.
    std::vector<std::vector<std::byte>> patterns(2, std::vector<std::byte>(span));
    for (std::uint64_t which = 0; which < 2; ++which) {
      for (std::uint64_t lba = 0; lba < lbas; ++lba) {
        const std::uint64_t w = word_of(lba, which);
        for (std::size_t i = 0; i < lba_bytes; i += 8) std::memcpy(patterns[which].data() + lba * lba_bytes + i, &w, 8);
      }
    }
    rt.copy_to_device(buffers[0], patterns[0].data(), span);
    ASSERT_TRUE(with_io(rt, [&](const auto& io) { return io.write(0, 0, lbas, buffers[0]); }).ok());

    std::atomic<int> torn{0};
    std::atomic<int> failed{0};
    std::string first_tear;
    std::atomic<bool> noted{false};
    test::run_threads(writers + readers, [&](unsigned t) {
      std::byte* mine = buffers[t];
      if (t < writers) {
        // Writer t owns pattern t: it rewrites runs of LBAs (one, or all of them), so reads
        // overlap writes of every length.
        rt.copy_to_device(mine, patterns[t].data(), span);
        for (int r = 0; r < rounds; ++r) {
          const std::uint64_t first = static_cast<std::uint64_t>(r) % lbas;
          const std::uint32_t count = r % 3 == 0 ? static_cast<std::uint32_t>(lbas - first) : 1;
          const status s =
              with_io(rt, [&](const auto& io) { return io.write(0, first, count, mine + first * lba_bytes); });
          if (!s.ok()) failed.fetch_add(1);
        }
        return;
      }
      std::vector<std::byte> seen(span);
      for (int r = 0; r < rounds; ++r) {
        const status s = with_io(rt, [&](const auto& io) { return io.read(0, 0, lbas, mine); });
        if (!s.ok()) {
          failed.fetch_add(1);
          continue;
        }
        rt.copy_to_host(seen.data(), mine, span);
        for (std::uint64_t lba = 0; lba < lbas; ++lba) {
          const std::byte* got = seen.data() + lba * lba_bytes;
          const bool whole = std::memcmp(got, patterns[0].data() + lba * lba_bytes, lba_bytes) == 0 ||
                             std::memcmp(got, patterns[1].data() + lba * lba_bytes, lba_bytes) == 0;
          if (whole) continue;
          torn.fetch_add(1);
          if (!noted.exchange(true)) {
            std::uint64_t a = 0;
            std::uint64_t b = 0;
            std::memcpy(&a, got, 8);
            std::memcpy(&b, got + lba_bytes - 8, 8);
            first_tear = "LBA " + std::to_string(lba) + " starts with " + std::to_string(a) + " and ends with " +
                         std::to_string(b);
          }
        }
      }
    });
    EXPECT_EQ(failed.load(), 0);
    EXPECT_EQ(torn.load(), 0) << "torn LBAs; first: " << first_tear;
    rt.stop();
  }
};

TEST_P(LbaAtomicity, SmallBlocksIntoDeviceBuffers) { race(512, true); }
TEST_P(LbaAtomicity, LargeBlocksIntoDeviceBuffers) { race(4096, true); }
TEST_P(LbaAtomicity, SmallBlocksIntoHostBuffers) { race(512, false); }
TEST_P(LbaAtomicity, LargeBlocksIntoHostBuffers) { race(4096, false); }
// Six threads' reads of 2 KiB over two controller threads: some copied by the controller into
// the bounce slot, some left in the store for the retirer.
TEST_P(LbaAtomicity, SmallBlocksSomeCopiedByTheController) { race(512, true, 4); }

INSTANTIATE_TEST_SUITE_P(DataPath, LbaAtomicity,
                         ::testing::Values(path_config{data_mover::gpu_warps, completion_mode::service},
                                           path_config{data_mover::gpu_warps, completion_mode::waiters},
                                           path_config{data_mover::copy_engine, completion_mode::service},
                                           path_config{data_mover::copy_engine, completion_mode::waiters}),
                         config_name);

}  // namespace
}  // namespace agio
