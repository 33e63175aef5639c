#pragma once
// A store URI taken apart without opening anything: what kind of store, where, and what its
// query asks for (block size, creation, SSD profile, injected faults). open_store() uses it;
// tools use it to learn a file store's path or size before opening it.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "agio/store/store.hpp"

namespace agio {

// What a URI's query asks of the store, whichever kind it is.
struct store_options {
  std::string uri;  // the URI as given, for error messages and store::uri()
  std::uint32_t lba_bytes = 512;
  std::optional<std::uint64_t> create_bytes;  // file only
  ssd_profile profile;                        // ram only
  std::vector<fault_injection> faults;
};

struct store_spec {
  enum class kind : std::uint8_t { ram, file };
  kind what = kind::ram;
  std::uint64_t ram_bytes = 0;  // ram only
  std::string path;             // file only
  store_options options;
};

// Splits and checks a URI without touching memory or the filesystem, so every syntax error
// surfaces before anything is allocated or created. Throws std::invalid_argument.
store_spec parse_store_uri(std::string_view uri);

// "4096", "64K", "64M", "1GiB", "2TB": binary multiples. Empty on malformed text or overflow.
std::optional<std::uint64_t> parse_size(std::string_view text);

}  // namespace agio
