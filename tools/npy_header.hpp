#pragma once
// The header of a .npy file (NumPy's format 1.0 or 2.0), read and written only as far as the
// tool needs to stage a .npy file into a store and export it again: the dtype's size, the shape
// and where the data starts. Python's agio reads headers with numpy.lib.format itself; this
// minimal reader is tested against files NumPy wrote (tests/tool_cli.sh).
//
// An array staged into a store is a record laid out as a .npy file whose header is padded with
// spaces so that the data starts a multiple of 4096 bytes after the record's start: aligned for
// 512- and 4096-byte LBAs, and still a .npy file NumPy reads.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace agio::tools {

constexpr std::uint64_t npy_record_align = 4096;

struct npy_header {
  std::string dict;   // the header's dict as written, without its padding: "{'descr': '<f4', ...}"
  std::string descr;  // the dtype: "<f4", "|u1", "<M8[ns]"
  std::vector<std::uint64_t> shape;
  std::uint64_t item_bytes = 0;
  std::uint64_t header_bytes = 0;  // where the data starts, counted from the header's first byte

  std::uint64_t data_bytes() const;
  std::string shape_text() const;  // "(3, 4)"
};

// How long the header that `first` begins is (magic, version, length and dict), once `first`
// holds its first 12 bytes (or all there is). Throws std::invalid_argument naming `where` when
// `first` is not the start of a .npy header; the message shows the bytes found.
std::uint64_t npy_header_length(std::string_view first, const std::string& where);

// Parses a whole header (npy_header_length bytes). Throws std::invalid_argument naming `where`
// for a header that does not parse, Fortran order, and dtypes the tool does not stage: Python
// objects, structured records (Python's agio.stage takes those).
npy_header parse_npy_header(std::string_view bytes, const std::string& where);

// The same dict as a header whose length is a multiple of `align` (format 1.0 while the dict
// fits its 16-bit length, else 2.0).
std::string padded_npy_header(const npy_header& h, std::uint64_t align);

}  // namespace agio::tools
