#pragma once
// The CPU-driven pipeline: what a user would build without agio. Host threads read the blocks a
// batch needs from the store into pinned memory (harness/block_reader.hpp); the GPU copies them
// in, gathers the rows and computes. Reading batch b + 1 on the host overlaps the GPU's work on
// batch b (double-buffered). There is no cache: every batch reads every distinct block it looks
// up.
#include <algorithm>
#include <string>
#include <vector>

#include "dlrm/embedding.hpp"
#include "harness/block_reader.hpp"
#include "proxy/store.hpp"

namespace agio::bench::dlrm {

class cpu_pipeline_reader {
 public:
  // Opens its own instances of the stores (ram: stores are filled here from the tables'
  // contents), the tables striped over them as over agio's devices.
  cpu_pipeline_reader(const std::vector<std::string>& uris, const table_layout& layout, const proxy::host_memory& memory,
                      unsigned threads, unsigned depth)
      : layout_(layout), reader_(uris, layout.blocks, memory, threads, depth) {
    const table_contents contents{layout.first_block.data(), layout.vocab.data(), layout.tables(), layout.dim,
                                  layout.rows_per_block};
    for (std::uint32_t d = 0; d < uris.size(); ++d) {
      if (std::byte* ram = reader_.host_view(d)) {
        const std::uint64_t blocks = reader_.stripes().blocks_on(d, layout.blocks);
        fill_tables_on_host(contents, reader_.stripes(), d, reinterpret_cast<float*>(ram), 0, blocks * block_bytes / sizeof(float));
      }
    }
  }

  // The distinct blocks of one batch's lookups, and each lookup's index rewritten so that the
  // gather finds its row in slot order: (slot * rows_per_block + row in block), tables at 0.
  struct batch_plan {
    std::vector<std::uint64_t> blocks;
    std::vector<std::uint32_t> slot_indices;
  };
  batch_plan plan(const std::uint32_t* indices, std::uint32_t lookups) const {
    batch_plan p;
    p.blocks.resize(lookups);
    const auto block_of = [&](std::uint32_t i) {
      return layout_.first_block[i % layout_.tables()] + indices[i] / layout_.rows_per_block;
    };
    for (std::uint32_t i = 0; i < lookups; ++i) p.blocks[i] = block_of(i);
    std::sort(p.blocks.begin(), p.blocks.end());
    p.blocks.erase(std::unique(p.blocks.begin(), p.blocks.end()), p.blocks.end());
    p.slot_indices.resize(lookups);
    for (std::uint32_t i = 0; i < lookups; ++i) {
      const auto slot = static_cast<std::uint32_t>(std::lower_bound(p.blocks.begin(), p.blocks.end(), block_of(i)) - p.blocks.begin());
      p.slot_indices[i] = slot * layout_.rows_per_block + indices[i] % layout_.rows_per_block;
    }
    return p;
  }

  // Reads a plan's blocks into consecutive 4 KiB slots of `dst` (pinned).
  void read(const std::vector<std::uint64_t>& blocks, std::byte* dst) const { reader_.read(blocks, dst); }

 private:
  const table_layout& layout_;
  block_reader reader_;
};

}  // namespace agio::bench::dlrm
