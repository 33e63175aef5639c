#pragma once
// What a transaction ends with: success, the NVMe status the controller returned, or one of
// agio's own outcomes (deadline passed, runtime stopped, request rejected before submission),
// and the words for it: describe() on both sides (a string literal a kernel can printf),
// to_string() on the host.
#include <cstdint>
#include <string>

#include "agio/detail/platform.hpp"
#include "agio/spec/status.hpp"

namespace agio {

enum class outcome : std::uint8_t {
  pending = 0,  // not finished yet
  success = 1,
  nvme_error = 2,        // the controller answered with a non-zero NVMe status (see nvme_status)
  timeout = 3,           // the caller's deadline passed first; the request itself may still finish
  stopped = 4,           // the runtime was stopping and did not accept or could not finish it
  invalid_argument = 5,  // rejected before submission: zero blocks, over the maximum, no such device
  no_resources = 6,      // every transaction record in use (refused at once), or no queue entry freed in time
  deadlock = 7,          // the lock-chain debugger found a cycle of lock waits (cache/lock_chain.hpp)
  // The transaction was already collected by a wait, or its record has since been reused: its
  // result went to the wait that collected it. Never another request's result.
  stale = 8,
  // A byte-addressed request (io_handle::read_bytes and the like) whose offset or size is not
  // a multiple of the device's LBA size: refused before submission, nothing was issued.
  misaligned = 9,
};

// [[nodiscard]]: a status dropped on the floor is an error nobody sees.
struct [[nodiscard]] status {
  outcome result = outcome::pending;
  std::uint16_t nvme_status = 0;  // NVMe status field, meaningful for nvme_error

  AGIO_HD bool ok() const { return result == outcome::success; }
  AGIO_HD bool finished() const { return result != outcome::pending; }

  // Packs into one 32-bit word so a completion can be published with a single atomic store.
  AGIO_HD std::uint32_t pack() const { return static_cast<std::uint32_t>(result) | (std::uint32_t{nvme_status} << 16); }
  AGIO_HD static status unpack(std::uint32_t word) {
    return {static_cast<outcome>(word & 0xffu), static_cast<std::uint16_t>(word >> 16)};
  }
  AGIO_HD static status from_nvme(std::uint16_t nvme) {
    return spec::status_ok(nvme) ? status{outcome::success, 0} : status{outcome::nvme_error, nvme};
  }
};

AGIO_HD inline const char* describe(outcome o) {
  switch (o) {
    case outcome::pending: return "pending";
    case outcome::success: return "success";
    case outcome::nvme_error: return "NVMe error";
    case outcome::timeout: return "deadline passed";
    case outcome::stopped: return "runtime stopped";
    case outcome::invalid_argument: return "invalid argument";
    case outcome::no_resources: return "no free queue entry or transaction record";
    case outcome::deadlock: return "lock cycle detected";
    case outcome::stale: return "transaction already collected (each is waited on successfully once)";
    case outcome::misaligned: return "byte offset or size not a multiple of the device's LBA size";
  }
  return "unknown";
}

// What `s` means in a few words: the decoded NVMe status for nvme_error (e.g. "LBA out of
// range"), else the outcome. A string literal, so a kernel can print it:
//   printf("read failed: %s (code 0x%x)\n", agio::describe(s), s.pack());
AGIO_HD inline const char* describe(status s) {
  return s.result == outcome::nvme_error ? spec::describe_status(s.nvme_status) : describe(s.result);
}

// `s` for a log or an exception: the outcome, and for nvme_error the raw 15-bit NVMe status
// beside its meaning, e.g. "NVMe status 0x4080 (LBA out of range)".
inline std::string to_string(status s) {
  if (s.result != outcome::nvme_error) return describe(s.result);
  constexpr char hex[] = "0123456789abcdef";
  std::string code = "0x";
  for (int shift = 12; shift >= 0; shift -= 4) code += hex[(s.nvme_status >> shift) & 0xfu];
  return "NVMe status " + code + " (" + spec::describe_status(s.nvme_status) + ")";
}

}  // namespace agio
