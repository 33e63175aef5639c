// agio stage in|out: moves data between a local file and a store through the runtime, the way
// a user's kernel would (device threads issuing reads and writes), so that a store can be
// filled before a job and its results taken out after. Staging goes through device memory in
// windows of 64 MiB; every request's status is checked, data staged in is read back and
// compared, and a progress line counts the windows.
//
// Compiled by nvcc when CUDA is available (the jobs then run as GPU kernels) and by the host
// compiler otherwise (CPU threads).
#include "stage.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/portable.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/backend_option.hpp"
#include "harness/options.hpp"
#include "harness/progress.hpp"
#include "harness/transfer_job.hpp"

namespace agio::tools {
namespace {

constexpr std::uint64_t window_bytes = 64ull << 20;

// A runtime with one store attached, device staging of one window and a failure counter.
class stager {
 public:
  stager(backend want, const std::string& uri) : rt_(options_for(want)) {
    dev_ = rt_.attach(device_options{uri, 4, 64});
    rt_.start();
    const auto d = rt_.devices()[dev_];
    lba_ = d.lba_bytes;
    capacity_ = d.capacity_blocks * d.lba_bytes;
    staging_ = static_cast<std::byte*>(rt_.allocate_device(window_bytes));
    failures_ = static_cast<std::uint32_t*>(rt_.allocate_device(sizeof(std::uint32_t)));
  }
  ~stager() {
    rt_.free(staging_);
    rt_.free(failures_);
  }
  stager(const stager&) = delete;
  stager& operator=(const stager&) = delete;

  runtime& rt() { return rt_; }
  std::uint32_t lba() const { return lba_; }
  std::uint64_t capacity() const { return capacity_; }
  std::byte* staging() const { return staging_; }

  // Moves `lbas` blocks from block `first_lba` on between the store and the staging buffer.
  void transfer(bool write, std::uint64_t first_lba, std::uint64_t lbas) {
    const std::uint32_t zero = 0;
    rt_.copy_to_device(failures_, &zero, sizeof zero);
    const std::uint32_t chunk = std::max<std::uint32_t>(1, (128u << 10) / lba_);  // 128 KiB requests
    const auto requests = static_cast<std::uint32_t>((lbas + chunk - 1) / chunk);
    const std::uint32_t threads = std::min<std::uint32_t>(requests, rt_.backend() == backend::gpu ? 512 : 8);
    with_io(rt_, [&](const auto& io) {
      run_job(rt_, std::max<std::uint32_t>(threads, 1),
              bench::range_transfer_job{io, dev_, write ? 1u : 0u, staging_, first_lba, lbas, chunk, failures_});
    });
    std::uint32_t failed = 0;
    rt_.copy_to_host(&failed, failures_, sizeof failed);
    rt_.check();
    if (failed != 0) {
      throw std::runtime_error(std::to_string(failed) + " " + (write ? "writes to" : "reads from") + " " +
                               rt_.devices()[dev_].uri + " in blocks " + std::to_string(first_lba) + ".." +
                               std::to_string(first_lba + lbas - 1) + " failed");
    }
  }

 private:
  static runtime_options options_for(backend want) {
    runtime_options o;
    o.backend = want;
    return o;
  }
  runtime rt_;
  std::uint32_t dev_ = 0;
  std::uint32_t lba_ = 0;
  std::uint64_t capacity_ = 0;
  std::byte* staging_ = nullptr;
  std::uint32_t* failures_ = nullptr;
};

std::string mib(std::uint64_t bytes) {
  if (bytes < (1u << 20)) return std::to_string(bytes) + " bytes";
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MiB", static_cast<double>(bytes) / (1 << 20));
  return text;
}

void report(const char* what, std::uint64_t bytes, std::chrono::steady_clock::time_point start, const runtime& rt) {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s %s in %.2f s (%.2f GB/s) on %s\n", what, mib(bytes).c_str(), seconds,
              seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0, rt.describe().c_str());
}

int stage_in(const bench::options& opt) {
  const std::string path = opt.get("file", "");
  const std::string uri = opt.get("store", "");
  const std::uint64_t offset = opt.bytes("offset", "0");
  const bool verify = opt.get("verify", "on") == "on";
  if (opt.get("verify", "on") != "on" && opt.get("verify", "on") != "off")
    throw std::invalid_argument("--verify is on or off");
  const backend want = bench::backend_option(opt);
  opt.reject_unknown();
  if (path.empty() || uri.empty()) throw std::invalid_argument("--file PATH and --store URI are both needed");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--file: cannot open '" + path + "' for reading");
  const std::uint64_t size = std::filesystem::file_size(path);

  stager s(want, uri);
  if (offset % s.lba() != 0) {
    throw std::invalid_argument("--offset " + std::to_string(offset) + " is not a multiple of the store's " +
                                std::to_string(s.lba()) + "-byte blocks");
  }
  if (offset > s.capacity() || size > s.capacity() - offset) {
    throw std::invalid_argument("--file is " + std::to_string(size) + " bytes, more than the " +
                                std::to_string(offset > s.capacity() ? 0 : s.capacity() - offset) + " bytes of " + uri +
                                " from --offset " + std::to_string(offset) + " on");
  }
  std::printf("staging %s (%s) into %s at byte %llu\n", path.c_str(), mib(size).c_str(), uri.c_str(),
              static_cast<unsigned long long>(offset));
  if (uri.rfind("ram:", 0) == 0)
    std::printf("note: a ram: store lives only as long as this command; use a file: store to keep the data\n");
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::byte> host(window_bytes), back(verify ? window_bytes : 0);
  bench::progress bar((size + window_bytes - 1) / window_bytes);
  for (std::uint64_t done = 0; done < size; done += window_bytes) {
    const std::uint64_t n = std::min(window_bytes, size - done);
    if (!in.read(reinterpret_cast<char*>(host.data()), static_cast<std::streamsize>(n))) {
      throw std::runtime_error("reading " + path + " at byte " + std::to_string(done) + " failed");
    }
    const std::uint64_t first_lba = (offset + done) / s.lba();
    const std::uint64_t lbas = (n + s.lba() - 1) / s.lba();
    // A last block the file fills only in part keeps the store's bytes beyond the file's end.
    if (const std::uint64_t part = n % s.lba(); part != 0) {
      s.transfer(false, first_lba + lbas - 1, 1);
      s.rt().copy_to_host(host.data() + n, s.staging() + part, s.lba() - part);
    }
    s.rt().copy_to_device(s.staging(), host.data(), lbas * s.lba());
    s.transfer(true, first_lba, lbas);
    if (verify) {
      s.transfer(false, first_lba, lbas);
      s.rt().copy_to_host(back.data(), s.staging(), n);
      if (std::memcmp(back.data(), host.data(), n) != 0) {
        std::uint64_t at = 0;
        while (back[at] == host[at]) ++at;
        throw std::runtime_error("verify: " + uri + " holds different data at byte " +
                                 std::to_string(offset + done + at) + " than " + path + " at byte " +
                                 std::to_string(done + at));
      }
    }
    bar.step(mib(done + n));
  }
  s.rt().stop();  // every write durable before we say so
  report(verify ? "staged and verified" : "staged", size, start, s.rt());
  return 0;
}

int stage_out(const bench::options& opt) {
  const std::string uri = opt.get("store", "");
  const std::string path = opt.get("file", "");
  const std::uint64_t offset = opt.bytes("offset", "0");
  const bool whole = !opt.has("length");
  const std::uint64_t asked = whole ? 0 : opt.bytes("length", "0");
  const backend want = bench::backend_option(opt);
  opt.reject_unknown();
  if (path.empty() || uri.empty()) throw std::invalid_argument("--store URI and --file PATH are both needed");

  stager s(want, uri);
  if (offset > s.capacity()) {
    throw std::invalid_argument("--offset " + std::to_string(offset) + " lies beyond the end of " + uri + " (" +
                                std::to_string(s.capacity()) + " bytes)");
  }
  const std::uint64_t length = whole ? s.capacity() - offset : asked;
  if (length > s.capacity() - offset) {
    throw std::invalid_argument("--length " + std::to_string(length) + " from --offset " + std::to_string(offset) +
                                " runs past the end of " + uri + " (" + std::to_string(s.capacity()) + " bytes)");
  }
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::invalid_argument("--file: cannot open '" + path + "' for writing");
  std::printf("copying bytes %llu..%llu of %s (%s) to %s\n", static_cast<unsigned long long>(offset),
              static_cast<unsigned long long>(offset + length), uri.c_str(), mib(length).c_str(), path.c_str());
  const auto start = std::chrono::steady_clock::now();
  const std::uint64_t window_lbas = window_bytes / s.lba();
  const std::uint64_t first = offset / s.lba();
  const std::uint64_t end = (offset + length + s.lba() - 1) / s.lba();
  std::vector<std::byte> host(window_bytes);
  bench::progress bar((end - first + window_lbas - 1) / window_lbas);
  for (std::uint64_t lba = first; lba < end; lba += window_lbas) {
    const std::uint64_t lbas = std::min(window_lbas, end - lba);
    s.transfer(false, lba, lbas);
    s.rt().copy_to_host(host.data(), s.staging(), lbas * s.lba());
    // The window's bytes that lie inside [offset, offset + length).
    const std::uint64_t from = std::max(offset, lba * s.lba());
    const std::uint64_t to = std::min(offset + length, (lba + lbas) * s.lba());
    out.write(reinterpret_cast<const char*>(host.data() + (from - lba * s.lba())),
              static_cast<std::streamsize>(to - from));
    if (!out) throw std::runtime_error("writing " + path + " failed at byte " + std::to_string(from - offset));
    bar.step(mib(to - offset));
  }
  out.close();
  if (!out || std::filesystem::file_size(path) != length) throw std::runtime_error("writing " + path + " failed");
  s.rt().stop();
  report("copied", length, start, s.rt());
  return 0;
}

}  // namespace

int stage_in_main(int argc, char** argv, int first) { return stage_in(bench::options(argc, argv, first)); }
int stage_out_main(int argc, char** argv, int first) { return stage_out(bench::options(argc, argv, first)); }

}  // namespace agio::tools
