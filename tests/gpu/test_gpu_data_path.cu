// The data path on the GPU: the CPU suite's scenarios (tests/host/test_data_path.cpp) with GPU
// threads as submitters. Raw commands whose buffer does not name what their PRPs name are
// refused with an NVMe status and never executed (a read with no buffer must not make the
// service copy to address 0), and reads racing writes to the same LBAs return one whole write
// per LBA, for both data movers.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "agio/detail/atomic.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"
#include "passthrough_fixture.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

constexpr std::uint16_t generic(std::uint8_t sc) { return spec::make_status(spec::status_type::generic, sc); }

runtime_options gpu_options(data_mover mover) {
  runtime_options o = test::gpu_options(mover);
  o.max_transfer_bytes = 16 * 1024;
  return o;
}

std::string mover_name(const ::testing::TestParamInfo<data_mover>& info) {
  return info.param == data_mover::gpu_warps ? "GpuWarps" : "CopyEngine";
}

using test::filled;

// One thread submits one raw command and records its status.
template <class IO>
struct raw_job {
  IO io;
  spec::command cmd;
  void* buffer;
  std::uint32_t bytes;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    *result = io.wait(io.async_passthrough(0, cmd, buffer, bytes)).pack();
  }
};

// One thread reads or writes one block with a typed call and records its status.
template <class IO>
struct typed_job {
  IO io;
  bool write;
  std::uint64_t lba;
  std::byte* buffer;
  std::uint32_t* result;
  AGIO_HD void operator()(std::uint32_t, std::uint32_t) const {
    *result = (write ? io.write(0, lba, 1, buffer) : io.read(0, lba, 1, buffer)).pack();
  }
};

class GpuPassthrough : public ::testing::TestWithParam<data_mover>, protected test::passthrough_fixture {
 protected:
  void SetUp() override {
    open(gpu_options(GetParam()));
    result = static_cast<std::uint32_t*>(rt->allocate_device(4));
    unregistered = static_cast<std::byte*>(rt->allocate_device(block));
    rt->unregister_memory(unregistered);
    store_known_block();
  }

  status outcome_of() {
    std::uint32_t word = 0;
    rt->copy_to_host(&word, result, 4);
    return status::unpack(word);
  }
  status typed(bool write, std::byte* where) override {
    with_io(*rt, [&](const auto& io) {
      run_job(*rt, 1, typed_job<std::decay_t<decltype(io)>>{io, write, lba, where, result});
    });
    return outcome_of();
  }
  // A one-block command whose PRPs name `target` (GPU allocations need not start a page, so
  // the block may span two: PRP2 names the second).
  status raw(spec::opcode op, const void* target, void* user_buffer, std::uint32_t bytes) {
    std::uint64_t prp1 = 0;
    std::uint64_t prp2 = 0;
    spec::build_prps(reinterpret_cast<std::uint64_t>(target), block, nullptr, 0, prp1, prp2);
    const auto cmd = spec::make_rw(op, 0, 1, lba, 1, prp1, prp2);
    with_io(*rt, [&](const auto& io) {
      run_job(*rt, 1, raw_job<std::decay_t<decltype(io)>>{io, cmd, user_buffer, bytes, result});
    });
    return outcome_of();
  }

  std::byte* unregistered = nullptr;
  std::uint32_t* result = nullptr;
};

TEST_P(GpuPassthrough, WriteWithoutABufferIsRefused) {
  EXPECT_EQ(raw(spec::opcode::write, buffer, nullptr, block).nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(on_store(), stored);
}

TEST_P(GpuPassthrough, WriteWhoseBufferIsNotItsPrpTargetIsRefused) {
  EXPECT_EQ(raw(spec::opcode::write, buffer, other, block).nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(on_store(), stored);
}

TEST_P(GpuPassthrough, ReadWithoutABufferIsRefused) {
  EXPECT_EQ(raw(spec::opcode::read, buffer, nullptr, block).nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, block), filled(block, 0xb1));
}

TEST_P(GpuPassthrough, ReadWhoseBufferIsNotItsPrpTargetIsRefused) {
  EXPECT_EQ(raw(spec::opcode::read, buffer, other, block).nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, block), filled(block, 0xb1));
  EXPECT_EQ(get(other, block), filled(block, 0x07));
}

TEST_P(GpuPassthrough, ReadLongerThanItsBufferSaysIsRefused) {
  EXPECT_EQ(raw(spec::opcode::read, buffer, buffer, 4 * block).nvme_status, generic(spec::generic::invalid_field));
  EXPECT_EQ(get(buffer, 4 * block), filled(4 * block, 0xb1));
}

TEST_P(GpuPassthrough, UnregisteredPrpsAreRefused) {
  EXPECT_EQ(raw(spec::opcode::read, unregistered, unregistered, block).nvme_status,
            generic(spec::generic::data_transfer_error));
  EXPECT_EQ(raw(spec::opcode::write, unregistered, unregistered, block).nvme_status,
            generic(spec::generic::data_transfer_error));
  EXPECT_EQ(on_store(), stored);
}

TEST_P(GpuPassthrough, CommandsWhoseBufferIsTheirPrpTargetWork) {
  const std::vector<std::byte> data = test::random_bytes(block, 43);
  put(other, data);
  ASSERT_TRUE(raw(spec::opcode::write, other, other, block).ok());
  EXPECT_EQ(on_store(), data);
  ASSERT_TRUE(raw(spec::opcode::read, buffer, buffer, block).ok());
  EXPECT_EQ(get(buffer, block), data);
  EXPECT_EQ(get(buffer + block, block), filled(block, 0xb1));
}

INSTANTIATE_TEST_SUITE_P(DataPath, GpuPassthrough, ::testing::Values(data_mover::gpu_warps, data_mover::copy_engine),
                         mover_name);

constexpr std::uint64_t race_lbas = 4;

AGIO_HD std::uint64_t word_of(std::uint64_t lba, std::uint64_t which) {
  return (lba << 8 | which) * 0x0101'0001'0001'0101ull;
}

// The first `writers` threads rewrite runs of the LBAs with their pattern (thread parity) while
// the others read all of them and count LBAs that are not one whole pattern, and failures.
template <class IO>
struct race_job {
  IO io;
  std::uint32_t lba_bytes;
  std::uint32_t writers;
  std::uint32_t rounds;
  std::byte* buffers;  // race_lbas * lba_bytes per thread; writers' hold their pattern
  std::uint32_t* torn;
  std::uint32_t* failed;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::byte* mine = buffers + std::uint64_t{t} * race_lbas * lba_bytes;
    for (std::uint32_t r = 0; r < rounds; ++r) {
      if (t < writers) {
        const std::uint64_t first = (t + r) % race_lbas;
        const std::uint32_t count = r % 3 == 0 ? static_cast<std::uint32_t>(race_lbas - first) : 1;
        if (!io.write(0, first, count, mine + first * lba_bytes).ok()) {
          detail::fetch_add<detail::scope::device>(*failed, 1u, detail::relaxed);
        }
        continue;
      }
      if (!io.read(0, 0, race_lbas, mine).ok()) {
        detail::fetch_add<detail::scope::device>(*failed, 1u, detail::relaxed);
        continue;
      }
      for (std::uint64_t lba = 0; lba < race_lbas; ++lba) {
        const auto* words = reinterpret_cast<const std::uint64_t*>(mine + lba * lba_bytes);
        const std::uint64_t w = words[0];
        bool whole = w == word_of(lba, 0) || w == word_of(lba, 1);
        for (std::uint32_t i = 1; i < lba_bytes / 8; ++i) whole &= words[i] == w;
        if (!whole) detail::fetch_add<detail::scope::device>(*torn, 1u, detail::relaxed);
      }
    }
  }
};

class GpuLbaAtomicity : public ::testing::TestWithParam<data_mover> {
 protected:
  // With the controller's copy depth `copy_depth` (runtime_options::controller_copy_depth).
  void race(std::uint32_t lba_bytes, std::uint32_t copy_depth = runtime_options{}.controller_copy_depth) {
    runtime_options o = gpu_options(GetParam());
    o.controller_copy_depth = copy_depth;
    runtime rt(o);
    rt.attach(device_options{"ram:1M?lba=" + std::to_string(lba_bytes), 4, 64});
    rt.start();
    constexpr std::uint32_t threads = 512;
    constexpr std::uint32_t writers = 128;
    const std::size_t span = race_lbas * lba_bytes;
    auto* buffers = static_cast<std::byte*>(rt.allocate_device(threads * span));
    auto* counters = static_cast<std::uint32_t*>(rt.allocate_device(8));
    const std::uint32_t zero[2] = {0, 0};
    rt.copy_to_device(counters, zero, sizeof zero);
    std::vector<std::byte> pattern(span);
    for (std::uint32_t t = 0; t < writers; ++t) {
      for (std::uint64_t lba = 0; lba < race_lbas; ++lba) {
        const std::uint64_t w = word_of(lba, t % 2);
        for (std::size_t i = 0; i < lba_bytes; i += 8) std::memcpy(pattern.data() + lba * lba_bytes + i, &w, 8);
      }
      rt.copy_to_device(buffers + t * span, pattern.data(), span);
    }
    with_io(rt, [&](const auto& io) {
      // Start from a whole pattern: writer 0's.
      run_job(rt, 1, race_job<std::decay_t<decltype(io)>>{io, lba_bytes, 1, 1, buffers, counters, counters + 1});
      run_job(rt, threads,
              race_job<std::decay_t<decltype(io)>>{io, lba_bytes, writers, 32, buffers, counters, counters + 1});
    });
    std::uint32_t seen[2] = {};
    rt.copy_to_host(seen, counters, sizeof seen);
    EXPECT_EQ(seen[1], 0u) << "failed requests";
    EXPECT_EQ(seen[0], 0u) << "torn LBAs";
    rt.stop();
  }
};

TEST_P(GpuLbaAtomicity, SmallBlocks) { race(512); }
TEST_P(GpuLbaAtomicity, LargeBlocks) { race(4096); }
// Every small read copied by the controller into its bounce slot, none left in the store for
// the retirer (512 threads keep the controller threads busier than the default depth).
TEST_P(GpuLbaAtomicity, SmallBlocksCopiedByTheController) { race(512, ~0u); }

INSTANTIATE_TEST_SUITE_P(DataPath, GpuLbaAtomicity, ::testing::Values(data_mover::gpu_warps, data_mover::copy_engine),
                         mover_name);

}  // namespace
}  // namespace agio
