#pragma once
// The host side of a CPU-driven pipeline, the baseline a user would build without agio: host
// threads read the blocks a step needs straight from the stores (io_uring for file: stores,
// the SSD profile for ram: stores) into pinned memory, with no cache. The reader opens its
// own instances of the stores, so a ram: store starts empty: its user writes the data in
// through host_view() first.
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agio/store/store.hpp"
#include "harness/bench_common.hpp"

namespace agio::bench {

// Where a block of the data is stored: blocks are striped over the devices (block g is block
// g / devices of device g % devices), so that any stretch of blocks spreads over all of them.
struct striping {
  std::uint32_t devices = 1;
  AGIO_HD std::uint32_t device_of(std::uint64_t g) const { return static_cast<std::uint32_t>(g % devices); }
  AGIO_HD std::uint64_t block_on_device(std::uint64_t g) const { return g / devices; }
  // Blocks of the data's `blocks` that device `dev` holds.
  std::uint64_t blocks_on(std::uint32_t dev, std::uint64_t blocks) const {
    return (blocks + devices - 1 - dev) / devices;
  }
};

class block_reader {
 public:
  static constexpr std::uint32_t block_bytes = bench::block_bytes;

  // Opens each of `uris` for its share of `blocks` blocks striped over them; `threads` host
  // threads read, each with `depth` reads in flight per store.
  block_reader(const std::vector<std::string>& uris, std::uint64_t blocks, const host_memory& memory, unsigned threads,
               unsigned depth)
      : stripes_{static_cast<std::uint32_t>(uris.size())}, threads_(threads), depth_(depth) {
    for (std::uint32_t d = 0; d < uris.size(); ++d) {
      stores_.push_back(open_store(uris[d], memory));
      if (stores_[d]->capacity_bytes() < stripes_.blocks_on(d, blocks) * block_bytes) {
        throw std::invalid_argument(uris[d] + " is smaller than its share of the " +
                                    std::to_string(blocks * block_bytes >> 20) + " MiB to read");
      }
    }
  }

  striping stripes() const { return stripes_; }
  // Store `dev`'s bytes in host memory (a ram: store), nullptr for a file: store.
  std::byte* host_view(std::uint32_t dev) const { return stores_[dev]->host_view(); }

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
    std::vector<std::unique_ptr<store_channel>> channels;
    for (const auto& s : stores_) channels.push_back(s->open_channel(depth_));
    std::vector<store_result> done(depth_);
    std::size_t next = t;
    std::size_t in_flight = 0;
    while (next < blocks.size() || in_flight != 0) {
      while (next < blocks.size()) {
        const std::uint32_t d = stripes_.device_of(blocks[next]);
        const store_io io{store_op::read, stripes_.block_on_device(blocks[next]) * block_bytes, block_bytes,
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
            throw std::runtime_error("CPU pipeline: reading block " + std::to_string(blocks[done[i].tag]) + " of " +
                                     stores_[d]->uri() + " failed (result " + std::to_string(done[i].result) + ")");
          }
        }
        in_flight -= n;
      }
    }
  }

  striping stripes_;
  unsigned threads_;
  unsigned depth_;
  std::vector<std::unique_ptr<store>> stores_;
};

}  // namespace agio::bench
