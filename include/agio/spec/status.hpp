#pragma once
// NVMe status field (15 bits: SC 7:0, SCT 10:8, CRD 12:11, M 13, DNR 14) and the codes agio's
// controller reports. Values are those of the NVM Express Base Specification 2.0, Figures
// "Generic Command Status Values" and "Media and Data Integrity Errors Values".
#include <cstdint>

#include "agio/detail/platform.hpp"

namespace agio::spec {

enum class status_type : std::uint8_t { generic = 0x0, command_specific = 0x1, media = 0x2, path = 0x3 };

namespace generic {
inline constexpr std::uint8_t success = 0x00;
inline constexpr std::uint8_t invalid_opcode = 0x01;
inline constexpr std::uint8_t invalid_field = 0x02;
inline constexpr std::uint8_t data_transfer_error = 0x04;
inline constexpr std::uint8_t internal_error = 0x06;
inline constexpr std::uint8_t aborted_sq_deletion = 0x08;
inline constexpr std::uint8_t invalid_namespace = 0x0b;
inline constexpr std::uint8_t prp_offset_invalid = 0x13;
inline constexpr std::uint8_t lba_out_of_range = 0x80;
}  // namespace generic

namespace media {
inline constexpr std::uint8_t write_fault = 0x80;
inline constexpr std::uint8_t unrecovered_read_error = 0x81;
}  // namespace media

AGIO_HD constexpr std::uint16_t make_status(status_type sct, std::uint8_t sc, bool dnr = true) {
  return static_cast<std::uint16_t>(std::uint16_t{sc} | (std::uint16_t(static_cast<std::uint8_t>(sct)) << 8) |
                                    (std::uint16_t{dnr} << 14));
}
AGIO_HD constexpr std::uint8_t status_code(std::uint16_t status) { return static_cast<std::uint8_t>(status & 0xffu); }
AGIO_HD constexpr status_type status_code_type(std::uint16_t status) {
  return static_cast<status_type>((status >> 8) & 0x7u);
}
AGIO_HD constexpr bool status_dnr(std::uint16_t status) { return ((status >> 14) & 1u) != 0; }
AGIO_HD constexpr bool status_ok(std::uint16_t status) { return (status & 0x7ffu) == 0; }

// A short English name for a status, for error messages; a string literal on either side.
AGIO_HD inline const char* describe_status(std::uint16_t status) {
  const std::uint8_t sc = status_code(status);
  switch (status_code_type(status)) {
    case status_type::generic:
      switch (sc) {
        case generic::success: return "success";
        case generic::invalid_opcode: return "invalid command opcode";
        case generic::invalid_field: return "invalid field in command";
        case generic::data_transfer_error: return "data transfer error";
        case generic::internal_error: return "internal error";
        case generic::aborted_sq_deletion: return "command aborted due to SQ deletion";
        case generic::invalid_namespace: return "invalid namespace or format";
        case generic::prp_offset_invalid: return "PRP offset invalid";
        case generic::lba_out_of_range: return "LBA out of range";
        default: return "generic command error";
      }
    case status_type::media:
      switch (sc) {
        case media::write_fault: return "write fault";
        case media::unrecovered_read_error: return "unrecovered read error";
        default: return "media error";
      }
    default: return "command error";
  }
}

}  // namespace agio::spec
