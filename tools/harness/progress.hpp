#pragma once
// A progress line on stderr: "[#####.....] 12/40 label".
#include <cstdio>
#include <string>

namespace agio::bench {

class progress {
 public:
  explicit progress(std::size_t total) : total_(total) {}
  void step(const std::string& label) {
    ++done_;
    constexpr int width = 30;
    const int filled = total_ ? static_cast<int>(width * done_ / total_) : width;
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %-60s", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done_, total_, label.substr(0, 60).c_str());
    if (done_ == total_) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  }

 private:
  std::size_t total_;
  std::size_t done_ = 0;
};

}  // namespace agio::bench
