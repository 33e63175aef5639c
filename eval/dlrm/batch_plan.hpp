#pragma once
// What the baselines without agio's cache (cpu_pipeline.hpp, the cufile mode) read for one
// batch: its distinct blocks, in block order, and each lookup's index rewritten so that the
// gather finds its row among them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "dlrm/embedding.hpp"

namespace agio::bench::dlrm {

struct batch_plan {
  std::vector<std::uint64_t> blocks;        // sorted, each once
  std::vector<std::uint32_t> slot_indices;  // per lookup: slot * rows_per_block + row in block
};

// The plan of `lookups` sample-major lookups (lookup i is in table i % tables). The blocks land
// in consecutive 4 KiB slots, so the gather reads slot_indices[i] with every table at block 0.
inline batch_plan plan_batch(const table_layout& layout, const std::uint32_t* indices, std::uint32_t lookups) {
  batch_plan p;
  const auto block_of = [&](std::uint32_t i) {
    return layout.first_block[i % layout.tables()] + indices[i] / layout.rows_per_block;
  };
  p.blocks.resize(lookups);
  for (std::uint32_t i = 0; i < lookups; ++i) p.blocks[i] = block_of(i);
  std::sort(p.blocks.begin(), p.blocks.end());
  p.blocks.erase(std::unique(p.blocks.begin(), p.blocks.end()), p.blocks.end());
  p.slot_indices.resize(lookups);
  for (std::uint32_t i = 0; i < lookups; ++i) {
    const auto slot =
        static_cast<std::uint32_t>(std::lower_bound(p.blocks.begin(), p.blocks.end(), block_of(i)) - p.blocks.begin());
    p.slot_indices[i] = slot * layout.rows_per_block + indices[i] % layout.rows_per_block;
  }
  return p;
}

}  // namespace agio::bench::dlrm
