#pragma once
// A file a command creates for its own use (a file: store to measure or check) and removes when
// it is done, whether it passes, fails or throws.
#include <filesystem>
#include <string>
#include <system_error>

namespace agio::bench {

class scoped_file {
 public:
  explicit scoped_file(std::string path) : path_(std::move(path)) {}
  ~scoped_file() {
    std::error_code ignored;  // already gone, or never made: nothing to do
    std::filesystem::remove(path_, ignored);
  }
  scoped_file(const scoped_file&) = delete;
  scoped_file& operator=(const scoped_file&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace agio::bench
