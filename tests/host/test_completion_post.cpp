// The controller's completion posting on its own: entries in ring order, the phase tag
// flipping at each wrap, the status and SQ head fields, and completions held back while the
// retirer has not handed the ring back.
#include <gtest/gtest.h>

#include <vector>

#include "agio/spec/status.hpp"
#include "proxy/completion_post.hpp"

namespace agio::proxy {
namespace {

constexpr std::uint16_t lba_out_of_range =
    spec::make_status(spec::status_type::generic, spec::generic::lba_out_of_range);

struct ring {
  explicit ring(std::uint32_t depth) : cq(depth), poster(cq.data(), depth, &head, 3) {}
  std::vector<spec::completion> cq;
  std::uint32_t head = 0;
  completion_poster poster;
};

TEST(CompletionPost, EntriesCarryIdentifierStatusPhaseAndSubmissionHead) {
  ring r(64);
  r.poster.post(17, 0, 5);
  r.poster.post(4, lba_out_of_range, 6);
  EXPECT_EQ(spec::cqe_cid(r.cq[0].dw3), 17);
  EXPECT_TRUE(spec::cqe_phase(r.cq[0].dw3)) << "the first pass carries phase 1";
  EXPECT_EQ(spec::cqe_status(r.cq[0].dw3), 0);
  EXPECT_EQ(r.cq[0].sq_head(), 5);
  EXPECT_EQ(r.cq[0].dw2 >> 16, 3u) << "submission queue identifier";
  EXPECT_EQ(r.cq[0].dw0, 0u);
  EXPECT_EQ(spec::cqe_cid(r.cq[1].dw3), 4);
  EXPECT_EQ(spec::cqe_status(r.cq[1].dw3), lba_out_of_range);
  EXPECT_EQ(r.cq[1].sq_head(), 6);
  EXPECT_EQ(r.poster.tail(), 2u);
}

TEST(CompletionPost, ThePhaseFlipsAtEachWrap) {
  ring r(64);
  for (std::uint32_t lap = 0; lap < 3; ++lap) {
    for (std::uint32_t k = 0; k < 64; ++k) {
      // The retirer keeps the head one window behind, as Algorithm 1 does.
      r.head = (r.poster.tail() + 32) % 64;
      r.poster.post(static_cast<std::uint16_t>(k), 0, 0);
      ASSERT_FALSE(r.poster.holding());
      EXPECT_EQ(spec::cqe_phase(r.cq[k].dw3), lap % 2 == 0) << "lap " << lap << " entry " << k;
    }
    EXPECT_EQ(r.poster.tail(), 0u);
    EXPECT_EQ(r.poster.phase(), lap % 2 != 0);
  }
}

TEST(CompletionPost, AFullRingHoldsCompletionsBackInOrderUntilTheHeadMoves) {
  ring r(64);
  // One slot always stays empty, so that a full ring is told from an empty one.
  for (std::uint16_t k = 0; k < 63; ++k) r.poster.post(k, 0, 0);
  EXPECT_FALSE(r.poster.holding());
  const spec::completion before = r.cq[63];
  r.poster.post(100, lba_out_of_range, 9);
  r.poster.post(101, 0, 9);
  EXPECT_TRUE(r.poster.holding());
  EXPECT_EQ(r.cq[63].dw3, before.dw3) << "nothing written past the head";
  EXPECT_FALSE(r.poster.post_held(9));
  // The retirer hands back the first window.
  r.head = 32;
  EXPECT_TRUE(r.poster.post_held(10));
  EXPECT_FALSE(r.poster.holding());
  EXPECT_EQ(spec::cqe_cid(r.cq[63].dw3), 100);
  EXPECT_EQ(spec::cqe_status(r.cq[63].dw3), lba_out_of_range);
  EXPECT_EQ(r.cq[63].sq_head(), 10) << "the head reported is the one at posting";
  EXPECT_EQ(spec::cqe_cid(r.cq[0].dw3), 101);
  EXPECT_FALSE(spec::cqe_phase(r.cq[0].dw3)) << "the second pass carries phase 0";
  // A new completion goes behind held ones, never ahead of them.
  r.head = 2;
  r.poster.post(102, 0, 0);
  EXPECT_TRUE(r.poster.holding());
  r.head = 32;
  EXPECT_TRUE(r.poster.post_held(0));
  EXPECT_EQ(spec::cqe_cid(r.cq[1].dw3), 102);
}

}  // namespace
}  // namespace agio::proxy
