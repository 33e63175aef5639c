// NVMe structures: bit positions against the NVMe Base Specification 2.0.
#include <gtest/gtest.h>

#include <cstring>

#include "agio/spec/nvme.hpp"
#include "agio/spec/prp.hpp"
#include "agio/spec/status.hpp"

namespace agio::spec {

TEST(Spec, ReadCommandFieldsLandInTheirDwords) {
  const command c = make_rw(opcode::read, 0x1234, 1, 0x0000'0005'0000'0007ull, 8, 0x1000, 0x2000);
  std::uint32_t dw[16];
  std::memcpy(dw, &c, sizeof dw);
  EXPECT_EQ(dw[0], 0x1234'0002u);  // CID 31:16, opcode 7:0
  EXPECT_EQ(dw[1], 1u);            // NSID
  EXPECT_EQ(dw[6], 0x1000u);       // PRP1 low
  EXPECT_EQ(dw[8], 0x2000u);       // PRP2 low
  EXPECT_EQ(dw[10], 7u);           // SLBA low
  EXPECT_EQ(dw[11], 5u);           // SLBA high
  EXPECT_EQ(dw[12], 7u);           // NLB is zero-based
  EXPECT_EQ(c.blocks(), 8u);
  EXPECT_EQ(c.slba(), 0x0000'0005'0000'0007ull);
  EXPECT_EQ(c.cid(), 0x1234);
}

TEST(Spec, CompletionDword3PacksCidPhaseAndStatus) {
  const std::uint16_t st = make_status(status_type::generic, generic::lba_out_of_range);
  const std::uint32_t dw3 = make_cqe_dw3(0x00ab, true, st);
  EXPECT_EQ(cqe_cid(dw3), 0x00ab);
  EXPECT_TRUE(cqe_phase(dw3));
  EXPECT_EQ(cqe_status(dw3), st);
  EXPECT_EQ(status_code(st), 0x80);
  EXPECT_EQ(status_code_type(st), status_type::generic);
  EXPECT_TRUE(status_dnr(st));
  EXPECT_EQ(dw3 >> 17 & 0xff, 0x80u);  // SC at bits 24:17 of DW3
  EXPECT_FALSE(status_ok(st));
  EXPECT_TRUE(status_ok(0));
  EXPECT_STREQ(describe_status(st), "LBA out of range");
  EXPECT_STREQ(describe_status(make_status(status_type::media, media::unrecovered_read_error)),
               "unrecovered read error");
}

TEST(Spec, PrpEntriesForOneTwoAndManyPages) {
  std::uint64_t list[32] = {};
  std::uint64_t prp1 = 0, prp2 = 0;
  build_prps(0x10000, 4096, list, 0x9000, prp1, prp2);
  EXPECT_EQ(prp1, 0x10000u);
  EXPECT_EQ(prp2, 0u);
  build_prps(0x10200, 4096, list, 0x9000, prp1, prp2);  // offset start spills into a second page
  EXPECT_EQ(prp1, 0x10200u);
  EXPECT_EQ(prp2, 0x11000u);
  build_prps(0x10000, 5 * 4096, list, 0x9000, prp1, prp2);
  EXPECT_EQ(prp2, 0x9000u);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(list[i], 0x11000u + 0x1000u * static_cast<unsigned>(i));
  EXPECT_EQ(pages_spanned(0x10200, 5 * 4096), 6u);
}

}  // namespace agio::spec
