#pragma once
// Skewed block traces for the cache benchmarks: block ranks drawn from Zipf(alpha) by inverting
// its CDF, ranks mapped to blocks by a random permutation so that hot blocks are scattered (and
// spread over a cache's sets).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace agio::bench {

// Calls emit(block) for each of `accesses` draws over blocks [0, blocks).
template <class Emit>
void draw_zipf_blocks(std::uint64_t blocks, std::uint64_t accesses, double alpha, std::mt19937_64& rng, Emit&& emit) {
  std::vector<double> cdf(blocks);
  double sum = 0;
  for (std::uint64_t r = 0; r < blocks; ++r) cdf[r] = sum += std::pow(static_cast<double>(r + 1), -alpha);
  std::vector<std::uint64_t> block_of(blocks);
  std::iota(block_of.begin(), block_of.end(), 0);
  std::shuffle(block_of.begin(), block_of.end(), rng);
  std::uniform_real_distribution<double> u(0, sum);
  for (std::uint64_t i = 0; i < accesses; ++i) {
    const auto rank = static_cast<std::uint64_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
    emit(block_of[std::min(rank, blocks - 1)]);
  }
}

}  // namespace agio::bench
