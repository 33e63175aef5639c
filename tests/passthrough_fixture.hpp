#pragma once
// What the passthrough tests of the CPU and GPU suites start from: a one-queue 1 MiB ram: store
// with 4 KiB LBAs whose LBA `lba` holds `stored`, and two device buffers of four blocks that
// hold other bytes, so that what a refused or executed command moved shows.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "test_support.hpp"

namespace agio::test {

inline std::vector<std::byte> filled(std::size_t bytes, std::uint8_t value) {
  return std::vector<std::byte>(bytes, std::byte{value});
}

class passthrough_fixture {
 public:
  virtual ~passthrough_fixture() = default;

 protected:
  static constexpr std::uint32_t block = 4096;
  static constexpr std::uint64_t lba = 8;

  // A one-block typed read or write of `lba` from the suite's threads (host or GPU).
  virtual status typed(bool write, std::byte* where) = 0;

  // The started runtime and the two buffers.
  void open(const runtime_options& options) {
    rt = std::make_unique<runtime>(options);
    rt->attach(device_options{"ram:1M?lba=4096", 1, 8});
    rt->start();
    // Page-aligned on the CPU backend, so one block is one PRP entry there.
    buffer = static_cast<std::byte*>(rt->allocate_device(4 * block));
    other = static_cast<std::byte*>(rt->allocate_device(4 * block));
  }

  // `stored` at `lba` through a typed write, then other bytes in both buffers; every queue
  // slot's bounce slot now holds what the typed write staged last.
  void store_known_block() {
    stored = random_bytes(block, 41);
    put(buffer, stored);
    ASSERT_TRUE(typed(true, buffer).ok());
    put(buffer, filled(4 * block, 0xb1));
    put(other, filled(4 * block, 0x07));
  }

  void put(std::byte* device, const std::vector<std::byte>& bytes) {
    rt->copy_to_device(device, bytes.data(), bytes.size());
  }
  std::vector<std::byte> get(const std::byte* device, std::size_t bytes) {
    std::vector<std::byte> out(bytes);
    rt->copy_to_host(out.data(), device, bytes);
    return out;
  }
  // What the store holds at `lba`, read through a fresh typed read.
  std::vector<std::byte> on_store() {
    std::byte* scratch = buffer + 3 * block;
    EXPECT_TRUE(typed(false, scratch).ok());
    return get(scratch, block);
  }

  std::unique_ptr<runtime> rt;
  std::byte* buffer = nullptr;
  std::byte* other = nullptr;
  std::vector<std::byte> stored;
};

}  // namespace agio::test
