#pragma once
// The CPU-driven pipeline: what a user would build without agio. Host threads read the blocks a
// batch needs from the store (io_uring for file: stores, the SSD profile for ram: stores) into
// pinned memory; the GPU copies them in, gathers the rows and computes. Reading batch b + 1
// on the host overlaps the GPU's work on batch b (double-buffered). There is no cache: every
// batch reads every distinct block it looks up.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "dlrm/embedding.hpp"
#include "proxy/store.hpp"

namespace agio::bench::dlrm {

class cpu_pipeline_reader {
 public:
  // Opens its own instances of the stores (ram: stores are filled here from the tables'
  // contents), the tables striped over them as over agio's devices.
  cpu_pipeline_reader(const std::vector<std::string>& uris, const table_layout& layout, const proxy::host_memory& memory,
                      unsigned threads, unsigned depth)
      : layout_(layout), stripes_{static_cast<std::uint32_t>(uris.size())}, threads_(threads), depth_(depth) {
    const table_contents contents{layout.first_block.data(), layout.vocab.data(), layout.tables(), layout.dim,
                                  layout.rows_per_block};
    for (std::uint32_t d = 0; d < uris.size(); ++d) {
      stores_.push_back(proxy::open_store(uris[d], memory));
      const std::uint64_t blocks = stripes_.blocks_on(d, layout.blocks);
      if (stores_[d]->capacity_bytes() < blocks * block_bytes) {
        throw std::invalid_argument("dlrm: " + uris[d] + " is smaller than its share of the tables");
      }
      if (std::byte* ram = stores_[d]->host_view()) {
        fill_tables_on_host(contents, stripes_, d, reinterpret_cast<float*>(ram), 0, blocks * block_bytes / sizeof(float));
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

  // Reads `blocks` into consecutive 4 KiB slots of `dst` (pinned), spread over the threads,
  // each keeping `depth` reads in flight. Throws on a failed or short read.
  void read(const std::vector<std::uint64_t>& blocks, std::byte* dst) const {
    std::vector<std::thread> pool;
    std::vector<std::exception_ptr> errors(threads_);
    for (unsigned t = 0; t < threads_; ++t) {
      pool.emplace_back([&, t] {
        try {
          read_share(blocks, dst, t);
        } catch (...) {
          errors[t] = std::current_exception();
        }
      });
    }
    for (auto& th : pool) th.join();
    for (const auto& e : errors) {
      if (e) std::rethrow_exception(e);
    }
  }

 private:
  // Thread t reads blocks t, t + threads, ... with a channel per store, `depth` reads in
  // flight on each.
  void read_share(const std::vector<std::uint64_t>& blocks, std::byte* dst, unsigned t) const {
    std::vector<std::unique_ptr<proxy::store_channel>> channels;
    for (const auto& s : stores_) channels.push_back(s->open_channel(depth_));
    std::vector<proxy::store_result> done(depth_);
    std::size_t next = t;
    std::size_t in_flight = 0;
    while (next < blocks.size() || in_flight != 0) {
      while (next < blocks.size()) {
        const std::uint32_t d = stripes_.device_of(blocks[next]);
        const proxy::store_io io{proxy::store_op::read, stripes_.block_on_device(blocks[next]) * block_bytes, block_bytes,
                                 dst + next * block_bytes, next};
        if (!channels[d]->submit(io)) break;
        ++in_flight;
        next += threads_;
      }
      for (std::uint32_t d = 0; d < channels.size(); ++d) {
        channels[d]->push();
        const std::size_t n = channels[d]->reap(done);
        for (std::size_t i = 0; i < n; ++i) {
          if (done[i].result != block_bytes) {
            throw std::runtime_error("dlrm CPU pipeline: reading block " + std::to_string(blocks[done[i].tag]) + " of " +
                                     stores_[d]->uri() + " failed (result " + std::to_string(done[i].result) + ")");
          }
        }
        in_flight -= n;
      }
    }
  }

  const table_layout& layout_;
  striping stripes_;
  unsigned threads_;
  unsigned depth_;
  std::vector<std::unique_ptr<proxy::store>> stores_;
};

}  // namespace agio::bench::dlrm
