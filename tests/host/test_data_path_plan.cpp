// The controller's data-path plan on its own: for each kind of PRP target, data mover and
// store, which buffer the store uses and what moves the data to or from the PRP target.
#include <gtest/gtest.h>

#include <array>

#include "proxy/data_path_plan.hpp"

namespace agio::proxy {
namespace {

class DataPathPlan : public ::testing::Test {
 protected:
  alignas(4096) std::array<std::byte, 3 * 4096> user{};
  alignas(4096) std::array<std::byte, 4096> slot{};
  alignas(4096) std::array<std::byte, 8 * 4096> view{};

  data_path_request request(store_op op, const translation* whole) {
    data_path_request r;
    r.op = op;
    r.offset = 2 * 4096;
    r.bytes = 4096;
    r.whole = whole;
    runs[0] = {reinterpret_cast<std::uint64_t>(whole != nullptr ? whole->address : user.data()), 4096};
    r.runs = whole != nullptr ? std::span<const segment>(runs.data(), 1) : std::span<const segment>(split);
    r.bounce = slot.data();
    r.buffer_alignment = 512;
    return r;
  }
  translation host_at(std::size_t offset) { return {region_kind::host, user.data() + offset}; }
  translation gpu() { return {region_kind::device, user.data()}; }

  std::array<segment, 1> runs{};
  std::array<segment, 2> split{segment{reinterpret_cast<std::uint64_t>(user.data()), 2048},
                               segment{reinterpret_cast<std::uint64_t>(user.data() + 8192), 2048}};
};

TEST_F(DataPathPlan, AnAlignedHostReadGoesStraightIntoThePrpTarget) {
  const translation t = host_at(0);
  for (const data_mover mover : {data_mover::gpu_warps, data_mover::copy_engine}) {
    data_path_request r = request(store_op::read, &t);
    r.mover = mover;
    r.host_view = view.data();  // even from a store with host memory of its own
    const data_plan p = plan_data_path(r);
    EXPECT_EQ(p.io_buffer, user.data());
    EXPECT_EQ(p.next, then::complete);
    EXPECT_EQ(p.deferred_source, nullptr);
  }
}

TEST_F(DataPathPlan, WarpsCopyReadsTheStoreCannotPlaceFromTheBounceSlotOrTheStoresOwnMemory) {
  const translation device = gpu();
  const translation misaligned = host_at(64);  // dword aligned for NVMe, not for O_DIRECT
  for (const translation* t : {&device, &misaligned}) {
    data_path_request r = request(store_op::read, t);
    data_plan p = plan_data_path(r);
    EXPECT_EQ(p.io_buffer, slot.data());
    EXPECT_EQ(p.next, then::complete) << "the retirer copies; the controller only completes";
    EXPECT_EQ(p.deferred_source, slot.data());
    EXPECT_EQ(p.deferred_destination, t->address);
    // A RAM store: no bounce slot, the retirer copies from the store's bytes at the offset.
    r.host_view = view.data();
    p = plan_data_path(r);
    EXPECT_EQ(p.io_buffer, nullptr);
    EXPECT_EQ(p.deferred_source, view.data() + 2 * 4096);
    EXPECT_EQ(p.deferred_destination, t->address);
  }
}

TEST_F(DataPathPlan, AControllerWithTimeCopiesSmallReadsOutOfTheStoresMemoryIntoTheBounceSlot) {
  const translation device = gpu();
  data_path_request r = request(store_op::read, &device);
  r.host_view = view.data();
  r.copy_here = true;
  data_plan p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data()) << "the store copies the read into the slot";
  EXPECT_EQ(p.next, then::complete);
  EXPECT_EQ(p.deferred_source, slot.data()) << "the retirer copies from the slot, with no sequences to check";
  EXPECT_EQ(p.deferred_destination, device.address);

  r.bytes = copy_here_max_bytes + 4096;  // a larger read stays in the store for the retirer
  p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, nullptr);
  EXPECT_EQ(p.deferred_source, view.data() + 2 * 4096);
}

TEST_F(DataPathPlan, TheCopyEngineMovesReadsIntoGpuMemoryAndMemcpyScattersIntoHostMemory) {
  const translation device = gpu();
  data_path_request r = request(store_op::read, &device);
  r.mover = data_mover::copy_engine;
  data_plan p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data());
  EXPECT_EQ(p.next, then::copy_engine_to_user);
  EXPECT_EQ(p.user, device.address);
  EXPECT_EQ(p.deferred_source, nullptr);

  const translation misaligned = host_at(64);
  r = request(store_op::read, &misaligned);
  r.mover = data_mover::copy_engine;
  p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data());
  EXPECT_EQ(p.next, then::scatter_to_user);
  ASSERT_EQ(p.host_runs.size(), 1u);
  EXPECT_EQ(p.host_runs[0].address, reinterpret_cast<std::uint64_t>(misaligned.address));
  EXPECT_EQ(p.host_runs[0].bytes, 4096u);
}

TEST_F(DataPathPlan, SeveralHostRunsGoThroughTheBounceSlotWhateverTheMover) {
  for (const data_mover mover : {data_mover::gpu_warps, data_mover::copy_engine}) {
    data_path_request r = request(store_op::read, nullptr);
    r.mover = mover;
    r.host_view = view.data();
    data_plan p = plan_data_path(r);
    EXPECT_EQ(p.io_buffer, slot.data());
    EXPECT_EQ(p.next, then::scatter_to_user);
    EXPECT_EQ(p.deferred_source, nullptr);
    ASSERT_EQ(p.host_runs.size(), 2u);
    EXPECT_EQ(p.host_runs[1].address, split[1].address);

    r = request(store_op::write, nullptr);
    r.mover = mover;
    r.stage_writes = true;  // staging covers one run only
    p = plan_data_path(r);
    EXPECT_EQ(p.io_buffer, slot.data());
    EXPECT_TRUE(p.gather_before_store);
    EXPECT_EQ(p.next, then::complete);
    EXPECT_EQ(p.host_runs.size(), 2u);
  }
}

TEST_F(DataPathPlan, WritesComeFromTheStagedSlotTheHostBufferOrTheCopyEngine) {
  const translation device = gpu();
  const translation aligned = host_at(0);
  const translation misaligned = host_at(64);

  data_path_request r = request(store_op::write, &device);
  r.stage_writes = true;
  data_plan p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data()) << "the submitter staged the data in the slot";
  EXPECT_EQ(p.next, then::complete);
  EXPECT_FALSE(p.gather_before_store);

  r = request(store_op::write, &aligned);
  p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, aligned.address);
  EXPECT_FALSE(p.gather_before_store);

  r = request(store_op::write, &device);
  r.mover = data_mover::copy_engine;
  p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data());
  EXPECT_EQ(p.next, then::store_write) << "the copy engine fills the slot before the store writes";
  EXPECT_EQ(p.user, device.address);

  r = request(store_op::write, &misaligned);
  p = plan_data_path(r);
  EXPECT_EQ(p.io_buffer, slot.data());
  EXPECT_TRUE(p.gather_before_store);
  ASSERT_EQ(p.host_runs.size(), 1u);
  EXPECT_EQ(p.host_runs[0].address, reinterpret_cast<std::uint64_t>(misaligned.address));
}

}  // namespace
}  // namespace agio::proxy
