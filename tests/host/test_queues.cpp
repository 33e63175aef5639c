// The submission-queue algorithm (AGILE Algorithm 2) on its own, against a minimal consumer
// that plays controller and service.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "agio/queue/submission.hpp"
#include "test_support.hpp"

namespace agio::queue {
namespace {

struct test_queue {
  explicit test_queue(std::uint32_t depth)
      : sq(depth), states(depth), cid_to_tx(depth), doorbell(0), control{}, poll{} {
    for (std::uint32_t i = 0; i < depth; ++i) states[i] = sqe_word(i, sqe_empty);
    qp.sq = sq.data();
    qp.sq_tail_doorbell = &doorbell;
    qp.states = states.data();
    qp.cid_to_tx = cid_to_tx.data();
    qp.control = &control;
    qp.poll = &poll;
    qp.depth = depth;
  }
  std::vector<spec::command> sq;
  std::vector<std::uint64_t> states;
  std::vector<std::uint32_t> cid_to_tx;
  std::uint32_t doorbell;
  sq_control control;
  cq_poll_state poll;
  queue_pair qp{};
};

TEST(SubmissionQueue, AtMostDepthMinusOneOutstanding) {
  test_queue q(4);
  std::uint64_t pos = 0;
  for (std::uint64_t expect = 0; expect < 3; ++expect) {
    ASSERT_TRUE(try_claim(q.qp, pos));
    EXPECT_EQ(pos, expect);
  }
  EXPECT_FALSE(try_claim(q.qp, pos)) << "a fourth entry would make tail catch up with head";
  // Nothing is issued until published, and publishing rings the doorbell with the new tail.
  for (std::uint64_t p = 0; p < 3; ++p) {
    write_entry(q.sq[p], spec::make_flush(static_cast<std::uint16_t>(p), 1));
    publish(q.qp, p);
  }
  EXPECT_EQ(q.doorbell, 3u);
  EXPECT_EQ(q.control.tail, 3u);
  // Retiring position 0 frees its entry for position 4, which makes room for position 3.
  q.states[0] = sqe_word(4, sqe_empty);
  ASSERT_TRUE(try_claim(q.qp, pos));
  EXPECT_EQ(pos, 3u);
}

TEST(SubmissionQueue, ConcurrentSubmittersEachCommandReachesTheControllerOnce) {
  constexpr std::uint32_t depth = 16;
  constexpr unsigned threads = 6;
  constexpr std::uint32_t per_thread = 3000;
  test_queue q(depth);
  std::atomic<bool> done{false};
  std::vector<std::uint8_t> seen(threads * per_thread, 0);
  std::uint64_t consumed = 0;

  // Plays controller and service: fetches entries up to the doorbell in order, then frees
  // each entry for the position one lap later, as the completion service does.
  std::thread consumer([&] {
    std::uint32_t head = 0;
    detail::backoff idle;
    while (!done.load(std::memory_order_acquire) ||
           head != std::atomic_ref(q.doorbell).load(std::memory_order_acquire)) {
      const std::uint32_t tail = std::atomic_ref(q.doorbell).load(std::memory_order_acquire);
      if (head == tail) {
        idle.pause();
        continue;
      }
      idle.reset();
      while (head != tail) {
        const spec::command& c = q.sq[head];
        const std::uint32_t id = c.cdw10;
        ASSERT_LT(id, seen.size());
        ASSERT_EQ(seen[id], 0) << "command " << id << " fetched twice";
        seen[id] = 1;
        const std::uint64_t word = std::atomic_ref(q.states[head]).load(std::memory_order_acquire);
        ASSERT_EQ(sqe_word_state(word), sqe_issued);
        ASSERT_EQ(sqe_word_position(word), consumed);
        std::atomic_ref(q.states[head]).store(sqe_word(consumed + depth, sqe_empty), std::memory_order_release);
        ++consumed;
        head = (head + 1) % depth;
      }
    }
  });
  test::run_threads(threads, [&](unsigned t) {
    for (std::uint32_t k = 0; k < per_thread; ++k) {
      std::uint64_t pos = 0;
      detail::backoff full;
      while (!try_claim(q.qp, pos)) full.pause();
      auto cmd = spec::make_flush(static_cast<std::uint16_t>(pos % depth), 1);
      cmd.cdw10 = t * per_thread + k;
      write_entry(q.sq[pos % depth], cmd);
      publish(q.qp, pos);
    }
  });
  done.store(true, std::memory_order_release);
  consumer.join();
  EXPECT_EQ(consumed, std::uint64_t{threads} * per_thread);
  for (std::size_t i = 0; i < seen.size(); ++i) ASSERT_EQ(seen[i], 1) << "command " << i << " never fetched";
}

TEST(CompletionQueue, DepthHoldsEveryOutstandingCommandPlusAWindow) {
  EXPECT_EQ(cq_depth_for(2), 64u);
  EXPECT_EQ(cq_depth_for(32), 64u);
  EXPECT_EQ(cq_depth_for(33), 96u);
  EXPECT_EQ(cq_depth_for(256), 288u);
}

}  // namespace
}  // namespace agio::queue
