// Division by a run-time divisor through multiplication (detail/divisor.hpp) against the
// division operators, over the divisors agio sets up (set counts, queue depths, elements per
// line) and the edges of both ranges.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "agio/detail/divisor.hpp"
#include "test_support.hpp"

namespace agio::detail {
namespace {

TEST(Divisor, MatchesDivisionForEdgeAndRandomOperands) {
  std::mt19937_64 random(7);
  std::vector<std::uint32_t> divisors = test::divisor_edges();
  for (int i = 0; i < 200; ++i) divisors.push_back(static_cast<std::uint32_t>(random() >> (32 + i % 32)) | 1u);
  for (const std::uint32_t d : divisors) {
    const divisor fast(d);
    for (const std::uint64_t n : test::numerator_edges(d, random)) {
      ASSERT_EQ(fast.quotient(n), n / d) << n << " / " << d;
      ASSERT_EQ(fast.remainder(n), n % d) << n << " % " << d;
    }
  }
}

TEST(Divisor, ReadsBackAsTheNumberItWasSetTo) {
  divisor depth;
  EXPECT_EQ(static_cast<std::uint32_t>(depth), 0u);
  depth = 256;
  EXPECT_EQ(static_cast<std::uint32_t>(depth), 256u);
  EXPECT_EQ(depth.remainder(std::uint64_t{5} << 40 | 300), 300u - 256u);
  constexpr divisor max_lines(std::numeric_limits<std::uint32_t>::max());
  static_assert(static_cast<std::uint32_t>(max_lines) == std::numeric_limits<std::uint32_t>::max());
}

}  // namespace
}  // namespace agio::detail
