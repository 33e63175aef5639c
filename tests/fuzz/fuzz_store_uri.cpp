// libFuzzer target: the store-URI parser and store opening (open_store). Any input
// either opens a store that keeps the URI's promises or throws std::invalid_argument or
// std::system_error; anything else (another exception, a crash, a sanitizer report) is a bug.
//
// A file: URI is opened only when its path is a plain name, and then inside a scratch directory
// (the URI is rewritten to name the file there), so no input can create or grow a file
// anywhere else; other paths are only parsed. The process's working directory stays as it is:
// libFuzzer reads its corpus by relative paths.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <new>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>

#include "agio/store/store.hpp"
#include "proxy/store_impl.hpp"

namespace {

// Big enough for every seed, small enough that "ram:1T" cannot exhaust the fuzzing machine:
// larger requests fail as a real allocator would, which open_store turns into system_error.
constexpr std::size_t memory_cap = std::size_t{64} << 20;

const agio::host_memory plain_memory{
    [](std::size_t bytes) -> void* {
      return bytes > memory_cap ? nullptr : ::operator new (bytes, std::align_val_t{4096}, std::nothrow);
    },
    [](void* p) { ::operator delete (p, std::align_val_t{4096}); }};

const std::filesystem::path& scratch_directory() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path made =
        std::filesystem::temp_directory_path() / ("agio-fuzz-uri-" + std::to_string(::getpid()));
    std::filesystem::create_directories(made);
    return made;
  }();
  return dir;
}

bool plain_name(std::string_view path) {
  if (path.empty() || path.size() > 64 || path == "." || path == "..") return false;
  for (const char c : path) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

// What an opened store must satisfy whatever the URI said.
void check_store(agio::store& s, std::string_view uri) {
  const std::uint32_t lba = s.lba_bytes();
  if (s.uri() != uri || (lba != 512 && lba != 4096) || s.capacity_bytes() % lba != 0 || s.buffer_alignment() == 0) {
    std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string uri(reinterpret_cast<const char*>(data), size);
  agio::store_spec spec;
  try {
    spec = agio::parse_store_uri(uri);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  const bool file = spec.what == agio::store_spec::kind::file;
  if (file && !plain_name(spec.path)) return 0;
  const std::filesystem::path path = scratch_directory() / spec.path;
  if (file) uri = "file:" + path.string() + uri.substr(std::string_view("file:").size() + spec.path.size());
  try {
    const auto s = agio::open_store(uri, plain_memory);
    check_store(*s, uri);
  } catch (const std::invalid_argument&) {
  } catch (const std::system_error&) {
  }
  if (file) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  return 0;
}
