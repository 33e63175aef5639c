// Retiring completions (AGILE Algorithm 1) on its own: retire_window, poll_queue and the
// service loop driven on hand-built queue memory, with the test playing submitter and
// controller. The host's warp_team plays all 32 lanes of a warp, so both retirers of
// service/team.hpp run here.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <future>
#include <thread>
#include <vector>

#include "agio/io/io_handle.hpp"
#include "agio/service/service.hpp"
#include "test_support.hpp"

namespace agio::service {
namespace {

using namespace std::chrono_literals;

constexpr std::uint16_t lba_out_of_range =
    spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range);
constexpr std::uint16_t internal_error = spec::make_status(spec::status_type::generic, spec::generic::internal_error);
// The head doorbell's value before anything rang it: tells "not written" from "written 0".
constexpr std::uint32_t never_rung = 0xdead'beefu;

// One device with one queue pair and its transaction records, laid out as the runtime lays
// them out, in plain host memory. The test submits (issue) and completes (post) by hand.
struct rig {
  explicit rig(std::uint32_t depth = 64, std::uint32_t record_count = 128)
      : cq(queue::cq_depth_for(depth - 1)), states(depth), cid_to_tx(depth, 0), deferred(depth), records(record_count) {
    for (std::uint32_t i = 0; i < depth; ++i) states[i] = queue::sqe_word(i, queue::sqe_empty);
    qp.cq = cq.data();
    qp.cq_head_doorbell = &head_doorbell;
    qp.states = states.data();
    qp.cid_to_tx = cid_to_tx.data();
    qp.deferred = deferred.data();
    qp.control = &sq;
    qp.poll = &poll;
    qp.depth = depth;
    qp.cq_depth = static_cast<std::uint32_t>(cq.size());
    qp.qid = 1;
    device.capacity_blocks = 1 << 20;
    device.qp_count = 1;
    device.lba_bytes = 512;
    device.max_blocks = 256;
    device.nsid = 1;
    control.records_available = static_cast<std::int32_t>(record_count);
    io.devices = &device;
    io.queue_pairs = &qp;
    io.records = records.data();
    io.control = &control;
    io.counters = &counters;
    io.first_error = &first_error;
    io.device_count = 1;
    io.queue_pair_count = 1;
    io.record_count = record_count;
    io.wait_timeout_ns = 10'000'000'000ull;
  }

  struct issued {
    std::uint16_t cid;
    std::uint32_t record;
    std::uint32_t generation;
    std::uint64_t position;
  };

  // Takes record `record` for a read of `lba` and submits it at the next position, as
  // Algorithm 2 leaves it: entry ISSUED, claimed and tail moved on.
  issued issue(std::uint32_t record, std::uint64_t lba) {
    const std::uint64_t position = sq.claimed;
    const auto cid = static_cast<std::uint16_t>(position % qp.depth);
    EXPECT_EQ(states[cid], queue::sqe_word(position, queue::sqe_empty)) << "entry " << cid << " is not free";
    io::transaction_record& rec = records[record];
    rec.state = io::record_state::taken_from(rec.state);
    rec.lba = lba;
    rec.blocks = 8;
    rec.bytes = 4096;
    rec.device = 0;
    rec.opcode = static_cast<std::uint32_t>(spec::opcode::read);
    rec.queue_pair = 0;
    rec.issued_ns = now_ns();
    cid_to_tx[cid] = record;
    --control.records_available;
    std::atomic_ref(states[cid]).store(queue::sqe_word(position, queue::sqe_issued), std::memory_order_relaxed);
    std::atomic_ref(sq.claimed).store(position + 1, std::memory_order_release);
    sq.tail = position + 1;
    return {cid, record, io::record_state::generation(rec.state), position};
  }

  // Writes a completion entry at `slot` as the controller does: DW3, which carries the phase,
  // last and with release.
  void post_at(std::uint32_t slot, std::uint16_t cid, bool phase, std::uint16_t nvme_status = 0) {
    cq[slot].dw0 = 0;
    cq[slot].dw2 = spec::make_cqe_dw2(0, 1);
    std::atomic_ref(cq[slot].dw3).store(spec::make_cqe_dw3(cid, phase, nvme_status), std::memory_order_release);
  }
  // The controller's next completion slot, in ring order.
  void post(std::uint16_t cid, std::uint16_t nvme_status = 0) {
    post_at(cq_tail, cid, cq_phase, nvme_status);
    if (++cq_tail == qp.cq_depth) {
      cq_tail = 0;
      cq_phase = !cq_phase;
    }
  }

  status result_of(std::uint32_t record) const {
    return status::unpack(
        io::record_state::result(std::atomic_ref(records[record].state).load(std::memory_order_acquire)));
  }
  std::uint32_t doorbell() const { return std::atomic_ref(head_doorbell).load(std::memory_order_acquire); }
  bool freed(const issued& c) const {
    return std::atomic_ref(states[c.cid]).load(std::memory_order_acquire) ==
           queue::sqe_word(c.position + qp.depth, queue::sqe_empty);
  }
  io_handle handle() const {
    io_handle c;
    static_cast<io::io_state&>(c) = io;
    return c;
  }

  std::vector<spec::completion> cq;
  std::uint32_t head_doorbell = never_rung;
  std::vector<std::uint64_t> states;
  std::vector<std::uint32_t> cid_to_tx;
  std::vector<queue::deferred_copy> deferred;
  queue::sq_control sq{};
  queue::cq_poll_state poll{0, 1, 0, 0};  // as the runtime starts it: window 0, phase 1
  queue::queue_pair qp{};
  std::vector<io::transaction_record> records;
  io::runtime_control control{};
  io::shared_counters counters{};
  io::error_record first_error{};
  io::device_info device{};
  io::io_state io{};
  std::uint32_t cq_tail = 0;  // the controller's side of the completion queue
  bool cq_phase = true;
};

template <class Team>
class Retire : public ::testing::Test {};
using teams = ::testing::Types<warp_team, solo_team>;
class TeamNames {
 public:
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, warp_team> ? "warp" : "solo";
  }
};
TYPED_TEST_SUITE(Retire, teams, TeamNames);

TYPED_TEST(Retire, AWindowOf32IsRetiredAndTheHeadDoorbellRungOnceForIt) {
  rig r;
  std::vector<rig::issued> cmds;
  for (std::uint32_t k = 0; k < 32; ++k) cmds.push_back(r.issue(k, 1000 + k));
  for (std::uint32_t k = 0; k < 31; ++k) r.post(cmds[k].cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 31u);
  // A window with one entry left is not handed back to the controller.
  EXPECT_EQ(r.doorbell(), never_rung);
  EXPECT_EQ(r.poll.offset, 0u);
  EXPECT_EQ(r.poll.mask, 0x7fff'ffffu);
  for (std::uint32_t k = 0; k < 31; ++k) {
    EXPECT_TRUE(r.result_of(k).ok()) << "record " << k;
    EXPECT_TRUE(r.freed(cmds[k])) << "entry " << cmds[k].cid;
  }
  EXPECT_FALSE(r.result_of(31).finished());
  EXPECT_FALSE(r.freed(cmds[31]));
  // Nothing new: nothing retired twice.
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 0u);
  EXPECT_EQ(r.counters.completed, 31u);

  r.post(cmds[31].cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(r.doorbell(), 32u) << "the head moves a whole window at once";
  EXPECT_EQ(r.poll.offset, 32u);
  EXPECT_EQ(r.poll.mask, 0u);
  EXPECT_EQ(r.poll.phase, 1u);
  EXPECT_TRUE(r.result_of(31).ok());
  EXPECT_TRUE(r.freed(cmds[31]));
  EXPECT_EQ(r.counters.completed, 32u);
  EXPECT_EQ(r.counters.bytes, 32u * 4096);
  EXPECT_EQ(r.counters.errors, 0u);
  EXPECT_EQ(r.sq.completed, 32u);
  EXPECT_EQ(r.first_error.valid, 0u);
}

TYPED_TEST(Retire, ThePhaseFlipsWhenTheRingWrapsAndOldEntriesAreNotNew) {
  rig r;  // 64 entries, a completion ring of 96: three windows
  ASSERT_EQ(r.qp.cq_depth, 96u);
  std::uint32_t record = 0;
  for (std::uint32_t window = 0; window < 7; ++window) {
    // The previous lap's entries of this window still hold the other phase: nothing is new.
    EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 0u) << "window " << window;
    std::vector<rig::issued> cmds;
    for (std::uint32_t k = 0; k < 32; ++k, ++record) cmds.push_back(r.issue(record % 128, record));
    for (const auto& c : cmds) r.post(c.cid);
    ASSERT_EQ(poll_queue<TypeParam>(r.io, r.qp), 32u) << "window " << window;
    const std::uint32_t next = (window + 1) % 3 * 32;
    EXPECT_EQ(r.doorbell(), next);
    EXPECT_EQ(r.poll.offset, next);
    // Phase 1 on the first lap, 0 on the second, 1 again on the third.
    EXPECT_EQ(r.poll.phase, (window + 1) / 3 % 2 == 0 ? 1u : 0u) << "window " << window;
    for (const auto& c : cmds) {
      EXPECT_TRUE(r.result_of(c.record).ok());
      EXPECT_TRUE(r.freed(c));
      // Collected, as a waiter would, so the record can carry the next lap's request.
      r.records[c.record].state = io::record_state::given_back(r.records[c.record].state);
    }
  }
  EXPECT_EQ(r.counters.completed, 7u * 32);
  EXPECT_EQ(r.sq.completed, 7u * 32);
}

TYPED_TEST(Retire, APartlyFilledWindowWaitsForItsGapsInEitherOrder) {
  rig r;
  std::vector<rig::issued> cmds;
  for (std::uint32_t k = 0; k < 32; ++k) cmds.push_back(r.issue(k, k));
  // Controller threads fill slots 0-2, 5 and 7 first; the rest later.
  for (const std::uint32_t slot : {0u, 1u, 2u, 5u, 7u}) r.post_at(slot, cmds[slot].cid, true);
  const std::uint32_t first = poll_queue<TypeParam>(r.io, r.qp);
  std::uint32_t expect_mask = 0;
  if constexpr (TypeParam::whole_warp) {
    // Every lane looks at its own entry: all five are retired.
    expect_mask = 0b1010'0111u;
  } else {
    // One thread walks the ring as a driver does and stops at the first gap.
    expect_mask = 0b111u;
  }
  EXPECT_EQ(first, static_cast<std::uint32_t>(__builtin_popcount(expect_mask)));
  EXPECT_EQ(r.poll.mask, expect_mask);
  for (std::uint32_t k = 0; k < 32; ++k) {
    EXPECT_EQ(r.result_of(k).finished(), ((expect_mask >> k) & 1u) != 0) << "slot " << k;
  }
  EXPECT_EQ(r.doorbell(), never_rung);

  for (std::uint32_t slot = 0; slot < 32; ++slot) {
    if (((0b1010'0111u >> slot) & 1u) == 0) r.post_at(slot, cmds[slot].cid, true);
  }
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 32u - first);
  EXPECT_EQ(r.doorbell(), 32u);
  for (std::uint32_t k = 0; k < 32; ++k) {
    EXPECT_TRUE(r.result_of(k).ok()) << "record " << k;
    EXPECT_TRUE(r.freed(cmds[k]));
  }
  EXPECT_EQ(r.counters.completed, 32u);
}

TYPED_TEST(Retire, CompletionsInAnyCommandOrderFinishTheirOwnTransactions) {
  rig r;
  std::vector<rig::issued> cmds;
  // Records out of step with entries, so that a cid mistaken for a record shows.
  for (std::uint32_t k = 0; k < 32; ++k) cmds.push_back(r.issue(127 - 3 * k, k));
  // The controller completes them in reverse; every fourth fails.
  for (std::uint32_t k = 32; k-- > 0;) r.post(cmds[k].cid, k % 4 == 0 ? lba_out_of_range : 0);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 32u);
  for (std::uint32_t k = 0; k < 32; ++k) {
    const status s = r.result_of(cmds[k].record);
    if (k % 4 == 0) {
      EXPECT_EQ(s.result, outcome::nvme_error) << "command " << k;
      EXPECT_EQ(s.nvme_status, lba_out_of_range);
    } else {
      EXPECT_TRUE(s.ok()) << "command " << k;
    }
  }
  EXPECT_EQ(r.counters.errors, 8u);
  EXPECT_EQ(r.counters.bytes, 24u * 4096);
}

TYPED_TEST(Retire, AnUnknownCommandIdentifierFinishesNothingButIsConsumed) {
  rig r;
  std::vector<rig::issued> cmds;
  for (std::uint32_t k = 0; k < 31; ++k) cmds.push_back(r.issue(k, k));
  const std::vector<std::uint64_t> states_before = r.states;
  r.post(static_cast<std::uint16_t>(r.qp.depth + 5));  // no entry has that identifier
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u) << "the entry is consumed";
  EXPECT_EQ(r.counters.completed, 0u);
  EXPECT_EQ(r.sq.completed, 0u);
  EXPECT_EQ(r.states, states_before);
  for (std::uint32_t k = 0; k < 31; ++k) EXPECT_FALSE(r.result_of(k).finished());
  // The window still moves on once the real completions fill it.
  for (const auto& c : cmds) r.post(c.cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 31u);
  EXPECT_EQ(r.doorbell(), 32u);
  EXPECT_EQ(r.counters.completed, 31u);
}

// A second completion for a command already retired (a controller that answers twice) names an
// entry that is free again, and a record that may by now belong to another request: it must
// neither finish that request nor free the entry a second time.
TYPED_TEST(Retire, AStaleCompletionFinishesNoOtherRequestAndFreesNoEntryTwice) {
  rig r;
  const rig::issued first = r.issue(7, 100);
  r.post(first.cid);
  ASSERT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  ASSERT_TRUE(r.result_of(7).ok());
  // Its waiter collects the status; a new request on another entry takes record 7.
  const io_handle io = r.handle();
  ASSERT_TRUE(io.wait_for({7, first.generation}, deadline::after_ms(1000)).ok());
  const rig::issued second = r.issue(7, 200);
  ASSERT_NE(second.cid, first.cid);
  ASSERT_NE(second.generation, first.generation);
  const std::uint64_t record_before = r.records[7].state;
  const std::uint64_t entry_before = r.states[first.cid];

  r.post(first.cid, internal_error);  // the duplicate, with an error the new request must not get
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(r.records[7].state, record_before) << "the stale completion finished another request";
  EXPECT_EQ(r.states[first.cid], entry_before) << "the entry was freed twice: its next position can never claim it";
  EXPECT_EQ(r.counters.completed, 1u);
  EXPECT_EQ(r.counters.errors, 0u);
  EXPECT_EQ(r.first_error.valid, 0u);

  // The new request's own completion still finishes it.
  r.post(second.cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_TRUE(io.wait_for({7, second.generation}, deadline::after_ms(1000)).ok());
  EXPECT_TRUE(r.freed(second));
}

TYPED_TEST(Retire, TheFirstFailureIsRecordedAndLaterOnesDoNotReplaceIt) {
  rig r;
  std::vector<rig::issued> cmds;
  for (std::uint32_t k = 0; k < 4; ++k) cmds.push_back(r.issue(k, 1000 * (k + 1)));
  r.post(cmds[0].cid);
  r.post(cmds[1].cid, lba_out_of_range);
  r.post(cmds[2].cid, internal_error);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 3u);
  ASSERT_EQ(r.first_error.valid, 1u);
  EXPECT_EQ(r.first_error.cause, io::failure_cause::completed);
  EXPECT_EQ(r.first_error.lba, 2000u);
  EXPECT_EQ(r.first_error.device, 0u);
  EXPECT_EQ(r.first_error.blocks, 8u);
  EXPECT_EQ(r.first_error.opcode, static_cast<std::uint32_t>(spec::opcode::read));
  EXPECT_EQ(status::unpack(r.first_error.result).nvme_status, lba_out_of_range);
  EXPECT_EQ(r.counters.errors, 2u);

  r.post(cmds[3].cid, internal_error);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(r.first_error.lba, 2000u) << "a later failure replaced the first";
  EXPECT_EQ(r.counters.errors, 3u);
}

TYPED_TEST(Retire, ADeferredCopyLandsBeforeTheWaiterWakes) {
  rig r;
  const auto source = test::random_bytes(4096, 11);
  std::vector<std::byte> destination(4096);
  const rig::issued c = r.issue(3, 42);
  r.deferred[c.cid] = {reinterpret_cast<std::uint64_t>(source.data()),
                       reinterpret_cast<std::uint64_t>(destination.data()), 4096, 0};
  const io_handle io = r.handle();
  // A real waiter on another thread: it reads the buffer once its wait returns.
  auto waiter = std::async(std::launch::async, [&] {
    const status s = io.wait_for({3, c.generation}, deadline::after_ms(10'000));
    return s.ok() && std::memcmp(destination.data(), source.data(), 4096) == 0;
  });
  std::this_thread::sleep_for(10ms);
  r.post(c.cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_TRUE(waiter.get()) << "the waiter woke without its data";
  // A failed read copies nothing.
  std::vector<std::byte> untouched(4096, std::byte{0x5a});
  const rig::issued failed = r.issue(4, 43);
  r.deferred[failed.cid] = {reinterpret_cast<std::uint64_t>(source.data()),
                            reinterpret_cast<std::uint64_t>(untouched.data()), 4096, 0};
  r.post(failed.cid, internal_error);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(untouched[0], std::byte{0x5a});
  EXPECT_EQ(r.result_of(4).nvme_status, internal_error);
}

// The signal's values are added to its word, whose other bits (a cache line's pins) stay.
TYPED_TEST(Retire, ASignalledRequestAddsItsOutcomeToItsWordAndGivesItsRecordBack) {
  rig r;
  constexpr std::uint32_t others = 0x700;
  std::uint32_t word = others;
  std::uint32_t packed = 0;
  std::uint64_t failures = 0;
  const auto signalled = [&](std::uint32_t record) {
    const rig::issued c = r.issue(record, record);
    io::transaction_record& rec = r.records[record];
    rec.signal_word = reinterpret_cast<std::uint64_t>(&word);
    rec.signal_status = reinterpret_cast<std::uint64_t>(&packed);
    rec.signal_failures = reinterpret_cast<std::uint64_t>(&failures);
    rec.signal_ok = 11;
    rec.signal_failed = 22;
    return c;
  };
  const rig::issued ok = signalled(5);
  const std::int32_t available = r.control.records_available;
  r.post(ok.cid);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(word, others + 11);
  EXPECT_TRUE(status::unpack(packed).ok());
  EXPECT_EQ(failures, 0u);
  EXPECT_TRUE(io::record_state::claimable(r.records[5].state));
  EXPECT_EQ(r.control.records_available, available + 1);

  const rig::issued bad = signalled(6);
  r.post(bad.cid, lba_out_of_range);
  EXPECT_EQ(poll_queue<TypeParam>(r.io, r.qp), 1u);
  EXPECT_EQ(word, others + 11 + 22);
  EXPECT_EQ(status::unpack(packed).nvme_status, lba_out_of_range);
  EXPECT_EQ(failures, 1u);
  EXPECT_TRUE(io::record_state::claimable(r.records[6].state));
}

TYPED_TEST(Retire, PollIfFreeLeavesAQueueAnotherRetirerHoldsAndRetiresBurstsInOneTurn) {
  rig r;
  // A full window and most of the next: as many commands as the queue holds.
  for (std::uint32_t k = 0; k < 63; ++k) r.post(r.issue(k, k).cid);
  r.sq.retire_lock = 1;
  EXPECT_EQ(poll_queue_if_free<TypeParam>(r.io, r.qp), 0u);
  EXPECT_EQ(r.counters.completed, 0u);
  EXPECT_EQ(r.doorbell(), never_rung);
  r.sq.retire_lock = 0;
  EXPECT_EQ(poll_queue_if_free<TypeParam>(r.io, r.qp), 63u) << "one turn retires the whole burst";
  EXPECT_EQ(r.sq.retire_lock, 0u) << "the lock is released";
  EXPECT_EQ(r.doorbell(), 32u);
  EXPECT_EQ(r.poll.mask, 0x7fff'ffffu);
  EXPECT_EQ(r.counters.completed, 63u);
}

// The service loop on a host thread: it retires completions as they come, leaves at once when
// told to exit, and when told to drain leaves only once every claimed command is retired.
class ServiceLoop : public ::testing::Test {
 protected:
  std::future<void> start(const rig& r) {
    return std::async(std::launch::async, [&r] {
      const io_handle handle = r.handle();
      run(r.io, 0, 1, 0, nullptr, [&](std::uint32_t ring) { return handle.serve_posted(ring); });
    });
  }
  static void set_mode(rig& r, io::service_mode mode) {
    std::atomic_ref(r.control.service_mode).store(mode, std::memory_order_release);
  }
};

TEST_F(ServiceLoop, RetiresCompletionsAsTheyArriveAndExitsWhenTold) {
  rig r;
  auto loop = start(r);
  const io_handle io = r.handle();
  for (std::uint32_t k = 0; k < 100; ++k) {
    const rig::issued c = r.issue(k % 128, k);
    r.post(c.cid, k == 50 ? lba_out_of_range : 0);
    // The idle loop looks again within its backoff: a completion is picked up promptly.
    const status s = io.wait_for({c.record, c.generation}, deadline::after_ms(5'000));
    if (k == 50) {
      EXPECT_EQ(s.nvme_status, lba_out_of_range);
    } else {
      EXPECT_TRUE(s.ok()) << "request " << k << ": " << describe(s.result);
    }
  }
  // Still running with requests outstanding in `run` mode.
  const rig::issued pending = r.issue(0, 0);
  EXPECT_EQ(loop.wait_for(50ms), std::future_status::timeout);
  // Exit does not wait for them.
  set_mode(r, io::service_exit);
  ASSERT_EQ(loop.wait_for(5s), std::future_status::ready) << "the loop did not exit";
  EXPECT_FALSE(r.result_of(pending.record).finished());
  EXPECT_EQ(r.counters.completed, 100u);
}

TEST_F(ServiceLoop, DrainLeavesOnlyOnceEveryCommandIsRetired) {
  rig r;
  const rig::issued a = r.issue(1, 1);
  const rig::issued b = r.issue(2, 2);
  set_mode(r, io::service_drain);
  auto loop = start(r);
  r.post(a.cid);
  // One command still in flight: the loop stays, however long the store takes.
  EXPECT_EQ(loop.wait_for(200ms), std::future_status::timeout);
  EXPECT_TRUE(r.result_of(1).ok());
  r.post(b.cid);
  ASSERT_EQ(loop.wait_for(5s), std::future_status::ready) << "the loop did not leave once drained";
  EXPECT_TRUE(r.result_of(2).ok());
  EXPECT_EQ(r.sq.completed, 2u);
}

TEST_F(ServiceLoop, DrainWaitsForASubmitterBetweenItsCheckAndItsDoorbell) {
  rig r;
  std::atomic_ref(r.control.submission_gate).store(1, std::memory_order_relaxed);
  set_mode(r, io::service_drain);
  auto loop = start(r);
  EXPECT_EQ(loop.wait_for(100ms), std::future_status::timeout);
  // The submitter gets its command out; the loop retires it before leaving.
  const rig::issued c = r.issue(9, 9);
  std::atomic_ref(r.control.submission_gate).fetch_sub(1, std::memory_order_release);
  EXPECT_EQ(loop.wait_for(100ms), std::future_status::timeout);
  r.post(c.cid);
  ASSERT_EQ(loop.wait_for(5s), std::future_status::ready);
  EXPECT_TRUE(r.result_of(9).ok());
}

// stop() only asks the service to drain: the service closes the submission gate itself, so
// that a submitter needs one atomic add on one word to know whether it may go on.
TEST_F(ServiceLoop, DrainClosesTheGateToLaterSubmissions) {
  rig r;
  const io_handle io = r.handle();
  std::vector<std::byte> buffer(4096);
  set_mode(r, io::service_drain);
  auto loop = start(r);
  ASSERT_EQ(loop.wait_for(5s), std::future_status::ready);
  const transaction t = io.async_read(0, 0, 8, buffer.data());
  ASSERT_FALSE(t.submitted());
  EXPECT_EQ(status::unpack(t.tag).result, outcome::stopped) << describe(status::unpack(t.tag).result);
  EXPECT_EQ(std::atomic_ref(r.sq.claimed).load(std::memory_order_acquire), 0u) << "a command was queued";
  EXPECT_EQ(std::atomic_ref(r.control.submission_gate).load(std::memory_order_acquire), io::gate_closed);
}

// The runtime's stop() ends a drain that a hung command would keep going by switching to exit
// at its deadline; the loop must honour the switch while the command is still outstanding.
TEST_F(ServiceLoop, ExitEndsADrainThatAHungCommandHoldsOpen) {
  rig r;
  const rig::issued hung = r.issue(1, 1);
  set_mode(r, io::service_drain);
  auto loop = start(r);
  EXPECT_EQ(loop.wait_for(100ms), std::future_status::timeout);
  set_mode(r, io::service_exit);
  ASSERT_EQ(loop.wait_for(5s), std::future_status::ready);
  EXPECT_FALSE(r.result_of(hung.record).finished());
}

}  // namespace
}  // namespace agio::service
