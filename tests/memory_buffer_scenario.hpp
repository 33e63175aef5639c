#pragma once
// LMB's zero-copy path, run by the CPU suite and the GPU suite alike: a store reads blocks
// straight into a region of a memory buffer, and device threads read them there, through the
// allocating runtime's mapping and through a second mapping of the region (shared_region).
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <type_traits>
#include <vector>

#include "agio/detail/atomic.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/memory_buffer.hpp"
#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio::test {

inline constexpr std::uint32_t region_block_bytes = 4096;

// Thread t reads block first_block + t of device 0 into block t of `into`.
template <class IO>
struct read_blocks_job {
  IO io;
  std::byte* into;
  std::uint64_t first_block;
  std::uint32_t* failed;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    const status s = io.read(0, first_block + t, 1, into + std::size_t{t} * region_block_bytes);
    if (!s.ok()) detail::fetch_add<detail::scope::device>(*failed, 1u, detail::relaxed);
  }
};

// Thread t counts the bytes of block t where `seen` and `expected` differ.
struct compare_blocks_job {
  const std::byte* seen;
  const std::byte* expected;
  std::uint32_t* differ;
  AGIO_HD void operator()(std::uint32_t t, std::uint32_t) const {
    std::uint32_t wrong = 0;
    const std::size_t base = std::size_t{t} * region_block_bytes;
    for (std::uint32_t i = 0; i < region_block_bytes; ++i) wrong += seen[base + i] != expected[base + i] ? 1u : 0u;
    if (wrong != 0) detail::fetch_add<detail::scope::device>(*differ, wrong, detail::relaxed);
  }
};

// A file store of random blocks; the reads go into a region of a memory buffer, and device
// threads compare what they find there (and in a second mapping of the region) with the blocks.
inline void check_a_store_reads_into_a_region(const runtime_options& options) {
  constexpr std::uint32_t blocks = 16;
  constexpr std::uint64_t first_block = 8;
  temp_file file("memory-buffer-store.bin");
  const std::vector<std::byte> data = random_bytes(std::size_t{first_block + blocks} * region_block_bytes, 91);
  std::ofstream(file.path(), std::ios::binary).write(reinterpret_cast<const char*>(data.data()), data.size());

  runtime rt(options);
  rt.attach("file:" + file.path() + "?lba=4096");
  rt.start();
  memory_buffer buffer(rt, std::size_t{1} << 20);
  const host_region r = buffer.allocate(std::size_t{blocks} * region_block_bytes);
  const std::byte* wanted = data.data() + first_block * region_block_bytes;
  auto* expected = static_cast<std::byte*>(rt.allocate_device(std::size_t{blocks} * region_block_bytes));
  rt.copy_to_device(expected, wanted, std::size_t{blocks} * region_block_bytes);
  auto* counts = static_cast<std::uint32_t*>(rt.allocate_device(3 * sizeof(std::uint32_t)));

  auto* into = static_cast<std::byte*>(r.data);
  with_io(rt, [&](const auto& io) {
    run_job(rt, blocks, read_blocks_job<std::decay_t<decltype(io)>>{io, into, first_block, counts});
  });
  run_job(rt, blocks, compare_blocks_job{into, expected, counts + 1});
  {
    const shared_region view(rt, buffer.descriptor(r.id));
    EXPECT_NE(view.data(), r.data);
    EXPECT_EQ(view.bytes(), r.bytes);
    run_job(rt, blocks, compare_blocks_job{static_cast<const std::byte*>(view.data()), expected, counts + 2});
  }
  std::uint32_t got[3] = {};
  rt.copy_to_host(got, counts, sizeof got);
  EXPECT_EQ(got[0], 0u) << "reads into the region failed";
  EXPECT_EQ(got[1], 0u) << "bytes of the region differ from the store's";
  EXPECT_EQ(got[2], 0u) << "bytes of the region's second mapping differ from the store's";
  EXPECT_EQ(std::memcmp(r.data, wanted, std::size_t{blocks} * region_block_bytes), 0);
  rt.check();
  buffer.free(r.id);
  rt.stop();
}

}  // namespace agio::test
