#pragma once
// Helpers shared by the CPU suite: random data, temporary store files, and running a
// function on many threads.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <unistd.h>

namespace agio::test {

inline std::vector<std::byte> random_bytes(std::size_t n, std::uint64_t seed) {
  std::vector<std::byte> v(n);
  std::mt19937_64 rng(seed);
  for (std::size_t i = 0; i < n; i += 8) {
    const std::uint64_t x = rng();
    for (std::size_t k = 0; k < 8 && i + k < n; ++k) v[i + k] = static_cast<std::byte>(x >> (8 * k));
  }
  return v;
}

// A file under the temporary directory, removed when the object goes.
class temp_file {
 public:
  explicit temp_file(const std::string& name)
      : path_(std::filesystem::temp_directory_path() /
              ("agio-test-" + std::to_string(::getpid()) + "-" + name)) {
    std::filesystem::remove(path_);
  }
  ~temp_file() { std::filesystem::remove(path_); }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

inline void run_threads(unsigned count, const std::function<void(unsigned)>& body) {
  std::vector<std::thread> threads;
  for (unsigned t = 0; t < count; ++t) threads.emplace_back(body, t);
  for (auto& t : threads) t.join();
}

}  // namespace agio::test
