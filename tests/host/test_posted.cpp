// Requests posted for the completion service to submit (io_handle::post_signalled): the ring
// alone, then through a runtime on CPU threads, where a small ring and a small queue make
// posters wait for slots and the service wait for queue entries.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <vector>

#include "agio/queue/posted_ring.hpp"
#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio {
namespace {

using test::cpu_options;
using test::random_bytes;
using test::run_threads;

queue::posted_request request_for_lba(std::uint64_t lba) {
  queue::posted_request r{};
  r.lba = lba;
  return r;
}

// A ring of four slots, in zeroed memory as the runtime lays it out.
struct four_slot_ring {
  std::vector<queue::posted_slot> slots = std::vector<queue::posted_slot>(4);
  std::vector<queue::posted_cursor> cursors = std::vector<queue::posted_cursor>(1);
  queue::posted_rings rings{slots.data(), cursors.data(), 1, 4};
};

TEST(PostedRing, ZeroedSlotsAreFreeAndAFullRingRefusesByItsDeadline) {
  four_slot_ring f;
  for (std::uint64_t lba = 0; lba < 4; ++lba) {
    ASSERT_TRUE(queue::post(f.rings, 0, request_for_lba(lba), deadline::after_ns(1'000'000)));
  }
  EXPECT_FALSE(queue::post(f.rings, 0, request_for_lba(4), deadline::after_ns(1'000'000))) << "the ring is full";
  EXPECT_FALSE(queue::empty(f.rings, 0));
  for (std::uint64_t ticket = 0; ticket < 4; ++ticket) {
    EXPECT_EQ(queue::state_of(f.rings, f.rings.slot(0, ticket), ticket), queue::posted_state::posted);
    EXPECT_EQ(f.rings.slot(0, ticket).request.lba, ticket);
  }
  // The consumer moves past ticket 0: its slot takes the next lap's ticket 4, and only that.
  queue::free_slot(f.rings, f.rings.slot(0, 0), 0);
  f.cursors[0].head = 1;
  EXPECT_EQ(queue::state_of(f.rings, f.rings.slot(0, 4), 4), queue::posted_state::empty);
  ASSERT_TRUE(queue::post(f.rings, 0, request_for_lba(40), deadline::after_ns(1'000'000)));
  EXPECT_EQ(queue::state_of(f.rings, f.rings.slot(0, 4), 4), queue::posted_state::posted);
  EXPECT_EQ(f.rings.slot(0, 4).request.lba, 40u);
  EXPECT_FALSE(queue::post(f.rings, 0, request_for_lba(5), deadline::after_ns(1'000'000)));
}

TEST(PostedRing, ASlotHandledOutOfOrderIsDoneUntilTheConsumerMovesPastIt) {
  four_slot_ring f;
  for (std::uint64_t lba = 0; lba < 2; ++lba) {
    ASSERT_TRUE(queue::post(f.rings, 0, request_for_lba(lba), deadline::after_ns(1'000'000)));
  }
  queue::mark_done(f.rings, f.rings.slot(0, 1), 1);
  EXPECT_EQ(queue::state_of(f.rings, f.rings.slot(0, 1), 1), queue::posted_state::done);
  EXPECT_EQ(queue::state_of(f.rings, f.rings.slot(0, 0), 0), queue::posted_state::posted);
  // Neither slot is free for the next lap until the consumer frees it.
  ASSERT_TRUE(queue::post(f.rings, 0, request_for_lba(2), deadline::after_ns(1'000'000)));
  ASSERT_TRUE(queue::post(f.rings, 0, request_for_lba(3), deadline::after_ns(1'000'000)));
  EXPECT_FALSE(queue::post(f.rings, 0, request_for_lba(4), deadline::after_ns(1'000'000)));
}

// Where a posted request reports: its line-state-like word and its status, watched by a thread.
struct signal_words {
  std::uint32_t word = 0;
  std::uint32_t status = 0;
  std::uint64_t failures = 0;
  std::uint64_t tag = 0;
  completion_signal signal() { return {&word, 2, 3, &status, &failures}; }
  // The word once it is not `pending`, or `pending` at the deadline.
  std::uint32_t wait(std::uint32_t pending) {
    std::uint32_t seen = pending;
    detail::poll_until(
        [&] {
          seen = std::atomic_ref(word).load(std::memory_order_acquire);
          return seen != pending;
        },
        deadline::after_ns(30'000'000'000ull));
    return seen;
  }
};
constexpr std::uint32_t refused_word = 5;

// Threads post writes and then reads of their own blocks through a ring of four slots, one
// queue pair of depth two and two transaction records: posters wait for slots, the service for
// queue entries and records (it leaves a request in its ring when none is free), and every
// request lands, none refused.
TEST(Posted, ManyThreadsThroughASmallRingAndASmallQueueAllLand) {
  runtime_options opt = cpu_options();
  opt.posted_slots = 4;
  opt.service_warps = 1;
  opt.transaction_records = 2;
  runtime rt(opt);
  rt.attach(device_options{"ram:4M?lba=4096", 1, 2});
  rt.start();
  const io_handle io = rt.io();
  constexpr unsigned threads = 8;
  constexpr unsigned blocks_per_thread = 24;
  const auto data = random_bytes(std::size_t{threads} * blocks_per_thread * 4096, 5);
  auto* source = static_cast<std::byte*>(rt.allocate_device(data.size()));
  auto* back = static_cast<std::byte*>(rt.allocate_device(data.size()));
  std::memcpy(source, data.data(), data.size());
  run_threads(threads, [&](unsigned t) {
    for (unsigned k = 0; k < blocks_per_thread; ++k) {
      const std::uint64_t block = std::uint64_t{t} * blocks_per_thread + k;
      for (const spec::opcode op : {spec::opcode::write, spec::opcode::read}) {
        signal_words s;
        std::byte* buffer = (op == spec::opcode::write ? source : back) + block * 4096;
        const status posted = io.post_signalled(op, 0, block, 1, buffer, s.signal(), refused_word, &s.tag);
        ASSERT_TRUE(posted.ok()) << to_string(posted);
        ASSERT_EQ(s.wait(0), 2u) << "block " << block << ": status " << to_string(status::unpack(s.status));
        EXPECT_EQ(s.tag, 0u) << "a submitted request clears nothing";
      }
    }
  });
  EXPECT_EQ(std::memcmp(back, data.data(), data.size()), 0);
  const device_counters c = rt.counters()[0];
  EXPECT_EQ(c.rejected, 0u);
  EXPECT_EQ(c.submitted, 2u * threads * blocks_per_thread);
  rt.check();
}

// A request the service cannot submit (here: more blocks than a command may carry) gets its
// status and the refusal's change added to its word (whose other bits stay), and its cleared
// word all ones; the refusal is reported as a submitter's would be.
TEST(Posted, ARefusedRequestSignalsItsStatusAndClearsItsWord) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:4M?lba=4096", 1, 8});
  rt.start();
  const io_handle io = rt.io();
  auto* buffer = static_cast<std::byte*>(rt.allocate_device(1 << 20));
  signal_words s;
  s.tag = 42;
  constexpr std::uint32_t others = 0x700;
  s.word = others;
  const std::uint32_t too_many = io.max_blocks(0) + 1;
  ASSERT_TRUE(io.post_signalled(spec::opcode::read, 0, 0, too_many, buffer, s.signal(), refused_word, &s.tag).ok());
  ASSERT_EQ(s.wait(others), others + refused_word);
  EXPECT_EQ(status::unpack(s.status).result, outcome::invalid_argument);
  EXPECT_EQ(s.tag, ~std::uint64_t{0});
  EXPECT_EQ(s.failures, 0u) << "a refusal is no failed request";
  EXPECT_EQ(rt.counters()[0].rejected, 1u);
  const io_error reported = test::check_error(rt);
  EXPECT_EQ(reported.request().refusal, io::failure_cause::too_many_blocks);
  EXPECT_EQ(reported.request().blocks, too_many);
}

// A ring's size is a power of two from 4 to 65536 (a ticket's slot is its low bits, and a slot's
// sequence word tells three states of one lap apart); start() says so for any other.
TEST(Posted, RingSizesOtherThanPowersOfTwoFromFourAreRefusedAtStart) {
  for (const std::uint32_t slots : {0u, 2u, 6u, 131'072u}) {
    runtime_options opt = cpu_options();
    opt.posted_slots = slots;
    runtime rt(opt);
    rt.attach(device_options{"ram:1M?lba=4096", 1, 8});
    EXPECT_EQ(test::error_of([&] { rt.start(); }), "agio: posted_slots must be a power of two in 4..65536") << slots;
  }
}

// Once stop() has closed the submission gate, a post is refused with `stopped` at once.
TEST(Posted, AfterStopAPostIsRefusedWithStopped) {
  runtime rt(cpu_options());
  rt.attach(device_options{"ram:4M?lba=4096", 1, 8});
  rt.start();
  const io_handle io = rt.io();
  auto* buffer = static_cast<std::byte*>(rt.allocate_device(4096));
  rt.stop();
  signal_words s;
  const status posted = io.post_signalled(spec::opcode::read, 0, 0, 1, buffer, s.signal(), refused_word, &s.tag);
  EXPECT_EQ(posted.result, outcome::stopped);
  EXPECT_EQ(s.word, 0u) << "nothing was posted to signal";
}

}  // namespace
}  // namespace agio
