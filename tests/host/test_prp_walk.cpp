// The controller's PRP walk on its own: PRP1, PRP2 and PRP lists turned into runs of
// registered memory, and the NVMe statuses for what it must refuse.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <vector>

#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"
#include "proxy/prp_walk.hpp"

namespace agio::proxy {
namespace {

constexpr std::uint32_t page = spec::page_bytes;
constexpr std::uint16_t prp_offset_invalid =
    spec::make_status(spec::status_type::generic, spec::generic::prp_offset_invalid);
constexpr std::uint16_t data_transfer_error =
    spec::make_status(spec::status_type::generic, spec::generic::data_transfer_error);

// Page-aligned memory registered in an IOVA table as host or GPU memory (plain host memory
// either way: the walk only reads PRP lists, never data).
struct memory {
  explicit memory(std::size_t pages)
      : bytes(pages * page), base(static_cast<std::byte*>(std::aligned_alloc(page, bytes))) {}
  ~memory() { std::free(base); }
  memory(const memory&) = delete;
  memory& operator=(const memory&) = delete;
  std::uint64_t at(std::uint64_t offset) const { return reinterpret_cast<std::uint64_t>(base) + offset; }
  std::uint64_t* list(std::uint64_t offset) const { return reinterpret_cast<std::uint64_t*>(base + offset); }
  std::size_t bytes;
  std::byte* base;
};

class PrpWalk : public ::testing::Test {
 protected:
  memory host{16};
  memory gpu{16};
  memory lists{4};
  iova_table table;
  void SetUp() override {
    table.add({host.at(0), host.bytes, region_kind::host});
    table.add({gpu.at(0), gpu.bytes, region_kind::device});
    table.add({lists.at(0), lists.bytes, region_kind::host});
  }
  static spec::command read(std::uint64_t prp1, std::uint64_t prp2, std::uint32_t bytes) {
    return spec::make_rw(spec::opcode::read, 1, 1, 0, bytes / 512, prp1, prp2);
  }
};

TEST_F(PrpWalk, OnePageIsOneRunOfItsRegion) {
  prp_walker walk(table);
  ASSERT_EQ(walk.walk(read(host.at(page), 0, page), page), 0);
  ASSERT_TRUE(walk.whole());
  EXPECT_EQ(walk.whole()->kind, region_kind::host);
  EXPECT_EQ(walk.whole()->address, host.base + page);
  ASSERT_EQ(walk.runs().size(), 1u);
  EXPECT_EQ(walk.runs()[0].bytes, page);
  // A dword offset into the page is allowed in PRP1; the transfer may then end in PRP2's page.
  ASSERT_EQ(walk.walk(read(gpu.at(512), 0, 1024), 1024), 0);
  EXPECT_EQ(walk.whole()->kind, region_kind::device);
  EXPECT_EQ(walk.whole()->address, gpu.base + 512);
}

TEST_F(PrpWalk, TwoPagesThroughPrp2MergeWhenContiguous) {
  prp_walker walk(table);
  ASSERT_EQ(walk.walk(read(host.at(page + 2048), host.at(2 * page), page), page), 0);
  ASSERT_EQ(walk.runs().size(), 1u);
  EXPECT_EQ(walk.runs()[0].address, host.at(page + 2048));
  EXPECT_EQ(walk.runs()[0].bytes, page);
  ASSERT_TRUE(walk.whole());
  // Not contiguous: two runs of host memory, no single translation.
  ASSERT_EQ(walk.walk(read(host.at(page + 2048), host.at(5 * page), page), page), 0);
  EXPECT_FALSE(walk.whole());
  ASSERT_EQ(walk.runs().size(), 2u);
  EXPECT_EQ(walk.runs()[0].bytes, 2048u);
  EXPECT_EQ(walk.runs()[1].address, host.at(5 * page));
  EXPECT_EQ(walk.runs()[1].bytes, 2048u);
}

TEST_F(PrpWalk, APrpListNamesThePagesAfterTheFirst) {
  // Four pages: PRP1 and a list of three, the middle one out of order.
  std::uint64_t* list = lists.list(0);
  list[0] = host.at(2 * page);
  list[1] = host.at(7 * page);
  list[2] = host.at(8 * page);
  prp_walker walk(table);
  ASSERT_EQ(walk.walk(read(host.at(page), lists.at(0), 4 * page), 4 * page), 0);
  ASSERT_EQ(walk.runs().size(), 2u);
  EXPECT_EQ(walk.runs()[0].address, host.at(page));
  EXPECT_EQ(walk.runs()[0].bytes, 2 * page);
  EXPECT_EQ(walk.runs()[1].address, host.at(7 * page));
  EXPECT_EQ(walk.runs()[1].bytes, 2 * page);
  EXPECT_FALSE(walk.whole());
}

TEST_F(PrpWalk, AFullListPageChainsToTheNextThroughItsLastEntry) {
  // A transfer of 514 pages: PRP1, then 511 entries in the first list page, whose last entry
  // points to a second list page holding the remaining two entries.
  memory data{520};
  table.add({data.at(0), data.bytes, region_kind::host});
  std::uint64_t* first = lists.list(0);
  for (std::uint32_t i = 0; i < 511; ++i) first[i] = data.at((i + 1) * std::uint64_t{page});
  first[511] = lists.at(2 * page);
  std::uint64_t* second = lists.list(2 * page);
  second[0] = data.at(512ull * page);
  second[1] = data.at(513ull * page);
  const std::uint32_t bytes = 514 * page;
  prp_walker walk(table);
  ASSERT_EQ(walk.walk(spec::make_rw(spec::opcode::read, 1, 1, 0, 1, data.at(0), lists.at(0)), bytes), 0);
  ASSERT_EQ(walk.runs().size(), 1u) << "contiguous data pages merge into one run across list pages";
  EXPECT_EQ(walk.runs()[0].bytes, bytes);
  ASSERT_TRUE(walk.whole());
  EXPECT_EQ(walk.whole()->address, data.base);
  table.remove(data.at(0));
}

TEST_F(PrpWalk, MisalignedEntriesArePrpOffsetInvalid) {
  prp_walker walk(table);
  EXPECT_EQ(walk.walk(read(host.at(2), 0, 512), 512), prp_offset_invalid) << "PRP1 must be dword aligned";
  EXPECT_EQ(walk.walk(read(host.at(2048), host.at(2 * page + 8), page), page), prp_offset_invalid)
      << "PRP2 naming a page must be page aligned";
  EXPECT_EQ(walk.walk(read(host.at(0), lists.at(4), 3 * page), 3 * page), prp_offset_invalid)
      << "a PRP list pointer must be qword aligned";
  std::uint64_t* list = lists.list(0);
  list[0] = host.at(page);
  list[1] = host.at(2 * page + 512);
  EXPECT_EQ(walk.walk(read(host.at(0), lists.at(0), 3 * page), 3 * page), prp_offset_invalid)
      << "a list entry must be page aligned";
}

TEST_F(PrpWalk, UnregisteredMemoryIsADataTransferError) {
  prp_walker walk(table);
  std::vector<std::uint64_t> outside(8);
  const auto stray = reinterpret_cast<std::uint64_t>(outside.data());
  EXPECT_EQ(walk.walk(read(stray, 0, 512), 512), data_transfer_error) << "data outside every region";
  EXPECT_EQ(walk.walk(read(host.at(host.bytes - page), host.at(host.bytes), 2 * page), 2 * page), data_transfer_error)
      << "data running off the end of its region";
  EXPECT_EQ(walk.walk(read(host.at(0), stray, 3 * page), 3 * page), data_transfer_error)
      << "a PRP list the controller cannot read";
  EXPECT_EQ(walk.walk(read(host.at(0), gpu.at(0), 3 * page), 3 * page), data_transfer_error)
      << "a PRP list in GPU memory";
  // Several runs must all be host memory: the controller cannot scatter into GPU memory.
  EXPECT_EQ(walk.walk(read(gpu.at(2048), gpu.at(5 * page), page), page), data_transfer_error);
  EXPECT_EQ(walk.walk(read(host.at(2048), gpu.at(5 * page), page), page), data_transfer_error);
}

}  // namespace
}  // namespace agio::proxy
