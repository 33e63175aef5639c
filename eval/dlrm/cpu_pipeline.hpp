#pragma once
// The CPU-driven pipeline: what a user would build without agio. Host threads read the blocks a
// batch needs (batch_plan.hpp) from the store into pinned memory (baselines/block_reader.hpp);
// the GPU copies them in, gathers the rows and computes. Reading batch b + 1 on the host
// overlaps the GPU's work on batch b (double-buffered). There is no cache: every batch reads
// every distinct block it looks up.
#include <string>
#include <vector>

#include "agio/store/store.hpp"
#include "baselines/block_reader.hpp"
#include "dlrm/embedding.hpp"

namespace agio::bench::dlrm {

class cpu_pipeline_reader {
 public:
  // Opens its own instances of the stores (ram: stores are filled here from the tables'
  // contents), the tables striped over them as over agio's devices.
  cpu_pipeline_reader(const std::vector<std::string>& uris, const table_layout& layout, const host_memory& memory,
                      unsigned threads, unsigned depth)
      : reader_(uris, layout.blocks, memory, threads, depth) {
    const table_contents contents{layout.first_block.data(), layout.vocab.data(), layout.tables(), layout.dim,
                                  layout.rows_per_block};
    for (std::uint32_t d = 0; d < uris.size(); ++d) {
      if (std::byte* ram = reader_.host_view(d)) {
        const std::uint64_t blocks = reader_.stripes().blocks_on(d, layout.blocks);
        fill_tables_on_host(contents, reader_.stripes(), d, reinterpret_cast<float*>(ram), 0,
                            blocks * block_bytes / sizeof(float));
      }
    }
  }

  // Reads a plan's blocks into consecutive 4 KiB slots of `dst` (pinned).
  void read(const std::vector<std::uint64_t>& blocks, std::byte* dst) const { reader_.read(blocks, dst); }

 private:
  block_reader reader_;
};

}  // namespace agio::bench::dlrm
