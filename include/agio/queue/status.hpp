#pragma once
// What a transaction ends with: success, the NVMe status the controller returned, or one of
// agio's own outcomes (deadline passed, runtime stopped, request rejected before submission).
#include <cstdint>

#include "agio/detail/platform.hpp"
#include "agio/spec/status.hpp"

namespace agio {

enum class outcome : std::uint8_t {
  pending = 0,       // not finished yet
  success = 1,
  nvme_error = 2,    // the controller answered with a non-zero NVMe status (see nvme_status)
  timeout = 3,       // the caller's deadline passed first; the request itself may still finish
  stopped = 4,       // the runtime was stopping and did not accept or could not finish it
  invalid_argument = 5,  // rejected before submission: zero blocks, over the maximum, no such device
  no_resources = 6,  // every transaction record in use (refused at once), or no queue entry freed in time
  deadlock = 7,      // the lock-chain debugger found a cycle of lock waits (cache/lock_chain.hpp)
  // The transaction was already collected by a wait, or its record has since been reused: its
  // result went to the wait that collected it. Never another request's result.
  stale = 8,
};

// [[nodiscard]]: a status dropped on the floor is an error nobody sees.
struct [[nodiscard]] status {
  outcome result = outcome::pending;
  std::uint16_t nvme_status = 0;  // NVMe status field, meaningful for nvme_error

  AGIO_HD bool ok() const { return result == outcome::success; }
  AGIO_HD bool finished() const { return result != outcome::pending; }

  // Packs into one 32-bit word so a completion can be published with a single atomic store.
  AGIO_HD std::uint32_t pack() const {
    return static_cast<std::uint32_t>(result) | (std::uint32_t{nvme_status} << 16);
  }
  AGIO_HD static status unpack(std::uint32_t word) {
    return {static_cast<outcome>(word & 0xffu), static_cast<std::uint16_t>(word >> 16)};
  }
  AGIO_HD static status from_nvme(std::uint16_t nvme) {
    return spec::status_ok(nvme) ? status{outcome::success, 0} : status{outcome::nvme_error, nvme};
  }
};

inline const char* describe(outcome o) {
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
  }
  return "unknown";
}

}  // namespace agio
