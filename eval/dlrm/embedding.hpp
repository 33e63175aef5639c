#pragma once
// DLRM's embedding tables on storage and the jobs that fetch a batch's rows (AGILE §4.4).
// Table t holds vocab[t] rows of `dim` floats, laid out from its own first block on; a row
// never straddles a block, so one cache line (one 4 KiB block) serves a whole lookup. Block
// numbers are global to the tables; the blocks are striped over the devices (`striping`,
// baselines/block_reader.hpp).
//
// A batch's lookups are sample-major (lookup i is table i % tables of sample i / tables). The
// gather writes each looked-up row into the interaction input T, laid out [sample][1 + tables]
// [dim]: vector 0 of a sample is the bottom MLP's output, vectors 1.. are its embeddings.
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include "agio/cache/cache.hpp"
#include "agio/cache/host_tier.hpp"
#include "agio/portable.hpp"
#include "baselines/block_reader.hpp"
#include "harness/bench_common.hpp"
#include "harness/mix.hpp"

namespace agio::bench::dlrm {

// Where the tables are: the first block of each, and the sizes every job needs.
struct table_layout {
  std::uint32_t dim = 0;             // floats per row
  std::uint32_t rows_per_block = 0;  // block_bytes / (dim * 4)
  std::vector<std::uint32_t> vocab;  // rows per table
  std::vector<std::uint64_t> first_block;
  std::uint64_t blocks = 0;  // all tables together

  table_layout(std::uint32_t row_floats, std::vector<std::uint32_t> rows) : dim(row_floats), vocab(std::move(rows)) {
    rows_per_block = block_bytes / (dim * static_cast<std::uint32_t>(sizeof(float)));
    for (const std::uint32_t v : vocab) {
      first_block.push_back(blocks);
      blocks += (v + rows_per_block - 1) / rows_per_block;
    }
  }
  std::uint32_t tables() const { return static_cast<std::uint32_t>(vocab.size()); }
  std::uint64_t bytes() const { return blocks * block_bytes; }
};

// Element k of row `row` of table `table`: a fixed function, so the store, the HBM copy of the
// reference run and any check agree without keeping the tables anywhere else.
AGIO_HD inline float embedding_value(std::uint32_t table, std::uint64_t row, std::uint32_t k) {
  const std::uint64_t h = mix64((std::uint64_t{table} << 40) ^ (row << 8) ^ k ^ 0xe1b0d7ull);
  return static_cast<float>(h >> 40) * (1.0f / 16777216.0f) - 0.5f;  // [-0.5, 0.5)
}

// The tables' contents word by word, as the store holds them (zero past a table's last row):
// writes the store on the host and the reference's HBM copy on the device.
struct table_contents {
  const std::uint64_t* first_block;  // per table
  const std::uint32_t* vocab;        // per table
  std::uint32_t tables;
  std::uint32_t dim;
  std::uint32_t rows_per_block;
  AGIO_HD float word(std::uint64_t w) const {
    constexpr std::uint64_t per_block = block_bytes / sizeof(float);
    const std::uint64_t block = w / per_block;
    std::uint32_t t = tables - 1;
    while (t > 0 && first_block[t] > block) --t;
    const auto slot = static_cast<std::uint32_t>(w % per_block) / dim;
    const std::uint64_t row = (block - first_block[t]) * rows_per_block + slot;
    if (slot >= rows_per_block || row >= vocab[t]) return 0;
    return embedding_value(t, row, static_cast<std::uint32_t>(w % per_block) % dim);
  }
};

// Fills `words` floats of GPU (or CPU-thread) memory with the tables.
struct table_fill_job {
  table_contents contents;
  float* out;
  std::uint64_t words;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint64_t w = t; w < words; w += threads) out[w] = contents.word(w);
  }
};

// Writes words [first, first + count) of device `dev`'s share of the tables to `out`, on host
// threads (each a contiguous part, so no two threads share a cache line of the output).
inline void fill_tables_on_host(const table_contents& contents, striping stripes, std::uint32_t dev, float* out,
                                std::uint64_t first, std::uint64_t count) {
  constexpr std::uint64_t per_block = block_bytes / sizeof(float);
  const unsigned n = std::max(1u, std::min(std::thread::hardware_concurrency(), 32u));
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < n; ++t) {
    pool.emplace_back([=] {
      for (std::uint64_t w = count * t / n; w < count * (t + 1) / n; ++w) {
        const std::uint64_t local = first + w;
        out[w] = contents.word((local / per_block * stripes.devices + dev) * per_block + local % per_block);
      }
    });
  }
  for (auto& th : pool) th.join();
}

// Where the lookups of a batch go: block and float offset of each row.
struct lookup_map {
  const std::uint64_t* first_block;  // per table (device memory)
  const std::uint32_t* indices;      // the batch's lookups (device memory)
  std::uint32_t tables;
  std::uint32_t dim;
  std::uint32_t rows_per_block;
  AGIO_HD std::uint64_t block_of(std::uint32_t i) const {
    return first_block[i % tables] + indices[i] / rows_per_block;
  }
  AGIO_HD std::uint32_t offset_in_block(std::uint32_t i) const { return indices[i] % rows_per_block * dim; }
  // Where lookup i's row goes in T.
  AGIO_HD std::uint64_t destination(std::uint32_t i) const {
    return (std::uint64_t{i / tables} * (tables + 1) + 1 + i % tables) * dim;
  }
};

// Rows straight from blocks the GPU addresses: the tables in HBM (the reference) or in CUDA
// managed memory, or the blocks a CPU pipeline copied in (there `block_of` is a slot of its
// staging area).
struct hbm_rows {
  const float* blocks;
  AGIO_HD status acquire(std::uint64_t block, std::uint64_t& held) const {
    held = block;
    return {outcome::success, 0};
  }
  AGIO_HD const float* data(std::uint64_t held) const { return blocks + held * (block_bytes / sizeof(float)); }
  AGIO_HD void release(std::uint64_t) const {}
};

// Rows through agio's cache (`Handle`: a cache::cache_handle): a pinned line per lookup,
// filled from storage on a miss.
template <class Handle>
struct cached_rows {
  Handle cache;
  striping stripes;
  AGIO_HD status acquire(std::uint64_t block, std::uint64_t& held) const {
    std::uint32_t line = cache::no_line;
    const status s = cache.acquire_line(stripes.device_of(block), stripes.block_on_device(block), line,
                                        deadline::after_ns(cache.wait_timeout_ns));
    held = line;
    return s;
  }
  AGIO_HD const float* data(std::uint64_t held) const {
    return reinterpret_cast<const float*>(cache.line_data(static_cast<std::uint32_t>(held)));
  }
  AGIO_HD void release(std::uint64_t held) const { cache.unpin(static_cast<std::uint32_t>(held)); }
};

// Rows through a GPU cache above a host tier (`Handle`: the GPU cache's handle, its I/O a
// cache::tiered_io), where a row the GPU cache misses and the tier holds is read where it lies in
// the tier's host memory: its bytes cross PCIe with no GPU line filled, as managed memory reads a
// row, instead of the whole 4 KiB line copied up by the few lanes that missed. A block missed
// again while its first such read is remembered (the host tier's admit_on_reuse: a table of as
// many tags as the GPU cache has lines) comes up into the GPU cache, so that reused rows still
// get there; a block neither holds is filled as by cached_rows (through the tier). For
// read-only tables only: a row read from the tier does not see a newer copy the GPU cache may
// come to hold meanwhile.
template <class Handle>
struct tier_direct_rows {
  using tier_handle = typename Handle::io_type::tier_handle;
  cached_rows<Handle> through_cache;  // a GPU-cache hit, and a block the tier does not hold
  cache::admit_on_reuse promote;      // which blocks come up into the GPU cache
  std::uint32_t* direct_reads;        // rows read from the tier where they lie (device memory)
  static constexpr std::uint64_t in_tier = std::uint64_t{1} << 63;  // `held` names a tier line
  AGIO_HD status acquire(std::uint64_t block, std::uint64_t& held) const {
    const Handle& gpu = through_cache.cache;
    const std::uint32_t dev = through_cache.stripes.device_of(block);
    const std::uint64_t on_device = through_cache.stripes.block_on_device(block);
    std::uint32_t line = cache::no_line;
    if (gpu.acquire_present(dev, on_device, line) == Handle::presence::pinned) {
      held = line;
      return {outcome::success, 0};
    }
    if (gpu.io.tier.acquire_present(dev, on_device, line) == tier_handle::presence::pinned) {
      if (!promote.admit(cache::block_tag(dev, on_device))) {
        portable::fetch_add<portable::scope::device>(*direct_reads, 1u, portable::relaxed);
        held = in_tier | line;
        return {outcome::success, 0};
      }
      gpu.io.tier.unpin(line);  // its line comes up through the GPU cache's miss
    }
    return through_cache.acquire(block, held);
  }
  AGIO_HD const float* data(std::uint64_t held) const {
    if ((held & in_tier) == 0) return through_cache.data(held);
    return reinterpret_cast<const float*>(through_cache.cache.io.tier.line_data(static_cast<std::uint32_t>(held)));
  }
  AGIO_HD void release(std::uint64_t held) const {
    if ((held & in_tier) == 0) {
      through_cache.release(held);
    } else {
      through_cache.cache.io.tier.unpin(static_cast<std::uint32_t>(held));
    }
  }
};

// Copies every lookup's row into T, one lookup per thread at a time: pin, copy, unpin. A
// thread never holds a pin while it waits for anything, so however small the cache (or full a
// set) the gather cannot deadlock; a warp-cooperative copy would have every lane hold its pin
// until the whole warp had its lines.
template <class Rows>
struct gather_job {
  Rows rows;
  lookup_map map;
  std::uint32_t lookups;
  float* t_matrix;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint32_t i = t; i < lookups; i += threads) {
      std::uint64_t held = 0;
      if (!rows.acquire(map.block_of(i), held).ok()) {
        portable::fetch_add<portable::scope::device>(*failures, 1u, portable::relaxed);
        continue;
      }
      copy_row(rows.data(held) + map.offset_in_block(i), t_matrix + map.destination(i), map.dim);
      rows.release(held);
    }
  }
  // 16-byte moves where the row allows (dim a multiple of 4 keeps rows 16-byte aligned).
  AGIO_HD static void copy_row(const float* src, float* dst, std::uint32_t dim) {
    if (dim % 4 == 0) {
      const auto* s4 = reinterpret_cast<const float4_words*>(src);
      auto* d4 = reinterpret_cast<float4_words*>(dst);
      for (std::uint32_t k = 0; k < dim / 4; ++k) d4[k] = s4[k];
    } else {
      for (std::uint32_t k = 0; k < dim; ++k) dst[k] = src[k];
    }
  }
  struct alignas(16) float4_words {
    float w[4];
  };
};

// Starts loading every block a batch looks up into the cache and returns without waiting
// (AGILE's async model: the rows travel while the previous batch computes). With `past_tier`
// (for tier_direct_rows), only the blocks the host tier below does not hold: rows of the others
// are read there, where they lie.
template <class Handle, bool past_tier = false>
struct prefetch_job {
  Handle cache;
  striping stripes;
  lookup_map map;
  std::uint32_t lookups;
  std::uint32_t* failures;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t threads) const {
    for (std::uint32_t i = t; i < lookups; i += threads) {
      const std::uint64_t g = map.block_of(i);
      const std::uint32_t dev = stripes.device_of(g);
      const std::uint64_t on_device = stripes.block_on_device(g);
      // A hint suffices to skip a block: one the tier gives up meanwhile is read from storage by
      // the gather that needs it.
      if constexpr (past_tier) {
        if (cache.io.tier.holds(dev, on_device)) continue;
      }
      if (!cache.prefetch(dev, on_device).ok()) {
        portable::fetch_add<portable::scope::device>(*failures, 1u, portable::relaxed);
      }
    }
  }
};

}  // namespace agio::bench::dlrm
