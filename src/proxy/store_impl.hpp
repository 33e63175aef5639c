#pragma once
// Internals shared by the store URI parser and the RAM and file stores. Not part of the
// proxy's interface: everything outside src/proxy/store_*.cpp goes through agio/store/store.hpp.
#include <atomic>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agio/store/store.hpp"
#include "agio/store/store_uri.hpp"

namespace agio::proxy {

// Text in double quotes, for error messages that name a URI, path or value. Appended piece by
// piece: `"\"" + std::string(text)` draws a false -Wrestrict warning from GCC 12 at -O3.
inline std::string in_quotes(std::string_view text) {
  std::string quoted;
  quoted.reserve(text.size() + 2);
  quoted += '"';
  quoted += text;
  quoted += '"';
  return quoted;
}

std::unique_ptr<store> make_ram_store(std::uint64_t bytes, store_options options, const host_memory& memory);
std::unique_ptr<store> make_file_store(const std::string& path, store_options options);

// Throws std::invalid_argument when the fault points past the store, since a fault that can
// never fire would let an error-path test pass without exercising anything.
void check_fault_in_range(const store_options& options, std::uint64_t capacity_bytes);

// 0 when a read or write lies on LBA boundaries inside the store, else -EINVAL. The
// controller range-checks commands first; this only keeps a bad caller from touching memory
// (RAM) or bytes (file) outside the store.
inline std::int64_t check_io_bounds(const store_io& io, std::uint64_t capacity_bytes, std::uint32_t lba_bytes) {
  const bool aligned = io.offset % lba_bytes == 0 && io.length % lba_bytes == 0;
  const bool inside = io.offset <= capacity_bytes && io.length <= capacity_bytes - io.offset;
  return aligned && inside ? 0 : -EINVAL;
}

// A store's injected faults, applied to its reads and writes (never to flushes). Shared by
// every channel of the store, so it is thread-safe.
class fault_plan {
 public:
  explicit fault_plan(const store_options& options);

  // Whether a read or write touches a hang block: its channel then holds it in flight forever.
  bool hangs(const store_io& io) const;
  // The bytes a read or write may move once the faults have had their say: -EIO, or a count
  // of at most io.length (the bytes before the first short block). Throws std::runtime_error,
  // naming the store and the block, for an I/O that touches a crash block.
  std::int64_t bytes_to_move(const store_io& io);

 private:
  bool touches(const store_io& io, std::uint64_t lba) const;

  std::string uri_;
  std::uint32_t lba_bytes_;
  std::vector<fault_injection> faults_;
  bool random_ = false;  // any random kind: only then is the I/O count kept
  // Reads and writes seen so far, one draw each. Relaxed: it pairs with no other access, only
  // the count matters (a single submitter sees a fixed sequence).
  std::atomic<std::uint64_t> sequence_{0};
};

}  // namespace agio::proxy
