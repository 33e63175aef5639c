#pragma once
// NVMe I/O command and completion structures, bit-exact with the NVM Express Base
// Specification 2.0 (Figures "Common Command Format" and "Common Completion Queue Entry").
// Fields are plain little-endian dwords; sub-fields are decoded with shifts, never bitfields,
// because bitfield layout is implementation-defined.
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::spec {

// NVM command set opcodes agio issues and the proxy executes.
enum class opcode : std::uint8_t { flush = 0x00, write = 0x01, read = 0x02 };

// Submission queue entry: 16 dwords.
struct command {
  std::uint32_t cdw0;  // OPC 7:0, FUSE 9:8, PSDT 15:14, CID 31:16
  std::uint32_t nsid;  // namespace
  std::uint32_t cdw2;
  std::uint32_t cdw3;
  std::uint64_t mptr;   // metadata pointer
  std::uint64_t prp1;   // data pointer, first PRP entry
  std::uint64_t prp2;   // second PRP entry or PRP list pointer
  std::uint32_t cdw10;  // read/write: starting LBA bits 31:0
  std::uint32_t cdw11;  // read/write: starting LBA bits 63:32
  std::uint32_t cdw12;  // read/write: NLB 15:0 (zero-based), FUA bit 30
  std::uint32_t cdw13;
  std::uint32_t cdw14;
  std::uint32_t cdw15;

  AGIO_HD std::uint8_t opc() const { return static_cast<std::uint8_t>(cdw0 & 0xffu); }
  AGIO_HD std::uint16_t cid() const { return static_cast<std::uint16_t>(cdw0 >> 16); }
  AGIO_HD std::uint64_t slba() const { return (std::uint64_t{cdw11} << 32) | cdw10; }
  // Number of logical blocks; the field itself is zero-based.
  AGIO_HD std::uint32_t blocks() const { return (cdw12 & 0xffffu) + 1; }
};
static_assert(sizeof(command) == 64, "an NVMe submission queue entry is 64 bytes");
static_assert(alignof(command) <= 64);

// Builds a read or write of `blocks` (1..65536) blocks starting at `slba`, PSDT = PRP.
AGIO_HD inline command make_rw(opcode op, std::uint16_t cid, std::uint32_t nsid, std::uint64_t slba,
                               std::uint32_t blocks, std::uint64_t prp1, std::uint64_t prp2) {
  command c{};
  c.cdw0 = static_cast<std::uint32_t>(op) | (std::uint32_t{cid} << 16);
  c.nsid = nsid;
  c.prp1 = prp1;
  c.prp2 = prp2;
  c.cdw10 = static_cast<std::uint32_t>(slba);
  c.cdw11 = static_cast<std::uint32_t>(slba >> 32);
  c.cdw12 = (blocks - 1) & 0xffffu;
  return c;
}

AGIO_HD inline command make_flush(std::uint16_t cid, std::uint32_t nsid) {
  command c{};
  c.cdw0 = static_cast<std::uint32_t>(opcode::flush) | (std::uint32_t{cid} << 16);
  c.nsid = nsid;
  return c;
}

// Completion queue entry: 4 dwords. DW3 carries the command identifier, the phase tag and
// the 15-bit status field; the controller writes DW3 last so that a matching phase tag
// means the whole entry is visible.
struct completion {
  std::uint32_t dw0;  // command specific
  std::uint32_t dw1;  // reserved
  std::uint32_t dw2;  // SQHD 15:0, SQID 31:16
  std::uint32_t dw3;  // CID 15:0, P bit 16, status 31:17

  AGIO_HD std::uint16_t sq_head() const { return static_cast<std::uint16_t>(dw2 & 0xffffu); }
  AGIO_HD std::uint16_t sq_id() const { return static_cast<std::uint16_t>(dw2 >> 16); }
};
static_assert(sizeof(completion) == 16, "an NVMe completion queue entry is 16 bytes");

AGIO_HD inline std::uint16_t cqe_cid(std::uint32_t dw3) { return static_cast<std::uint16_t>(dw3 & 0xffffu); }
AGIO_HD inline bool cqe_phase(std::uint32_t dw3) { return ((dw3 >> 16) & 1u) != 0; }
AGIO_HD inline std::uint16_t cqe_status(std::uint32_t dw3) { return static_cast<std::uint16_t>(dw3 >> 17); }

AGIO_HD inline std::uint32_t make_cqe_dw2(std::uint16_t sq_head, std::uint16_t sq_id) {
  return std::uint32_t{sq_head} | (std::uint32_t{sq_id} << 16);
}
AGIO_HD inline std::uint32_t make_cqe_dw3(std::uint16_t cid, bool phase, std::uint16_t status) {
  return std::uint32_t{cid} | (std::uint32_t{phase} << 16) | (std::uint32_t{status} << 17);
}

}  // namespace agio::spec
