// agio stage and agio export: move data between local files and a store through the runtime,
// the way a user's kernel would (device threads issuing reads and writes), so that a store can
// be filled before a job and its results taken out after. A .npy file goes in as a record (its
// header padded to 4096 bytes, then its data: npy_header.hpp) that Python's agio.Array.open
// opens and that exports back to a .npy file; any other file goes in as its bytes. Staging goes
// through device memory in windows of 64 MiB; every request's status is checked, data staged in
// is read back and compared, and a progress line counts the windows.
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
#include "agio/store/store_uri.hpp"
#include "harness/backend_option.hpp"
#include "harness/options.hpp"
#include "harness/progress.hpp"
#include "harness/transfer_job.hpp"
#include "npy_header.hpp"

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

// What goes into the store: a header held in memory (empty for a plain file), then `size`
// bytes of a local file from byte `from` on.
class stage_source {
 public:
  stage_source(const std::string& path, std::string header, std::uint64_t from, std::uint64_t size)
      : path_(path), header_(std::move(header)), in_(path, std::ios::binary), at_(from), size_(size) {
    if (!in_) throw std::invalid_argument("cannot open '" + path + "' for reading");
    in_.seekg(static_cast<std::streamoff>(from));
  }
  std::uint64_t bytes() const { return header_.size() + size_; }
  // The next n bytes into `to`.
  void read(std::byte* to, std::uint64_t n) {
    const std::uint64_t from_header = std::min<std::uint64_t>(n, header_.size() - std::min(done_, header_.size()));
    std::memcpy(to, header_.data() + done_, from_header);
    done_ += from_header;
    if (n > from_header &&
        !in_.read(reinterpret_cast<char*>(to + from_header), static_cast<std::streamsize>(n - from_header))) {
      throw std::runtime_error("reading " + path_ + " at byte " + std::to_string(at_ + done_ - header_.size()) +
                               " failed");
    }
    done_ += n - from_header;
  }

 private:
  std::string path_;
  std::string header_;
  std::ifstream in_;
  std::uint64_t at_ = 0;
  std::uint64_t size_ = 0;
  std::uint64_t done_ = 0;
};

// A .npy file's header, read from the file.
npy_header npy_file_header(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::invalid_argument("--npy: cannot open '" + path + "' for reading");
  std::string first(12, '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<std::size_t>(in.gcount()));
  std::string bytes(npy_header_length(first, path), '\0');
  in.seekg(0);
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<std::size_t>(in.gcount()));
  return parse_npy_header(bytes, path);
}

// A file: URI without create= whose file is missing or smaller than `bytes` gets create=bytes,
// so that staging creates or extends it; any other URI stays as it is.
std::string sized_store(const std::string& uri, std::uint64_t bytes) {
  const store_spec spec = parse_store_uri(uri);
  if (spec.what != store_spec::kind::file || spec.options.create_bytes) return uri;
  std::error_code error;
  const auto status = std::filesystem::status(spec.path, error);
  if (std::filesystem::exists(status) &&
      (!std::filesystem::is_regular_file(status) || std::filesystem::file_size(spec.path) >= bytes)) {
    return uri;
  }
  return uri + (uri.find('?') == std::string::npos ? "?" : "&") + "create=" + std::to_string(bytes);
}

// Writes `source` into the store from byte `offset` on, reading each window back when `verify`.
void copy_in(stager& s, stage_source& source, const std::string& uri, std::uint64_t offset, bool verify) {
  const std::uint64_t size = source.bytes();
  if (offset % s.lba() != 0) {
    throw std::invalid_argument("--offset " + std::to_string(offset) + " is not a multiple of the store's " +
                                std::to_string(s.lba()) + "-byte blocks");
  }
  if (offset > s.capacity() || size > s.capacity() - offset) {
    throw std::invalid_argument("the record is " + std::to_string(size) + " bytes, more than the " +
                                std::to_string(offset > s.capacity() ? 0 : s.capacity() - offset) + " bytes of " + uri +
                                " from --offset " + std::to_string(offset) + " on");
  }
  if (uri.rfind("ram:", 0) == 0)
    std::printf("note: a ram: store lives only as long as this command; use a file: store to keep the data\n");
  std::vector<std::byte> host(window_bytes), back(verify ? window_bytes : 0);
  bench::progress bar((size + window_bytes - 1) / window_bytes);
  for (std::uint64_t done = 0; done < size; done += window_bytes) {
    const std::uint64_t n = std::min(window_bytes, size - done);
    source.read(host.data(), n);
    const std::uint64_t first_lba = (offset + done) / s.lba();
    const std::uint64_t lbas = (n + s.lba() - 1) / s.lba();
    // A last block the data fills only in part keeps the store's bytes beyond the data's end.
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
                                 std::to_string(offset + done + at) + " than was written there");
      }
    }
    bar.step(mib(done + n));
  }
}

// Copies bytes [offset, offset + length) of the store into the local file `path`.
void copy_out(stager& s, std::uint64_t offset, std::uint64_t length, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::invalid_argument("cannot open '" + path + "' for writing");
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
}

// The header of the record at byte `offset` of the store, read through the runtime.
npy_header record_header(stager& s, const std::string& uri, std::uint64_t offset) {
  const std::string where = "byte " + std::to_string(offset) + " of " + uri;
  if (offset % s.lba() != 0 || offset >= s.capacity()) {
    throw std::invalid_argument("--offset " + std::to_string(offset) + " is not the start of a block of " + uri + " (" +
                                std::to_string(s.lba()) + "-byte blocks, " + std::to_string(s.capacity()) + " bytes)");
  }
  std::string bytes;
  const auto read = [&](std::uint64_t wanted) {
    const std::uint64_t lbas = std::min((wanted + s.lba() - 1) / s.lba(), (s.capacity() - offset) / s.lba());
    if (lbas * s.lba() > window_bytes) throw std::invalid_argument(where + ": the .npy header is longer than 64 MiB");
    s.transfer(false, offset / s.lba(), lbas);
    bytes.resize(lbas * s.lba());
    s.rt().copy_to_host(bytes.data(), s.staging(), bytes.size());
  };
  read(npy_record_align);
  const std::uint64_t length = npy_header_length(bytes, where);
  if (length > bytes.size()) read(length);
  return parse_npy_header(bytes, where);
}

// Exactly one of --npy and --file.
std::pair<bool, std::string> npy_or_file(const bench::options& opt) {
  const std::string npy = opt.get("npy", ""), file = opt.get("file", "");
  if (npy.empty() == file.empty()) throw std::invalid_argument("one of --npy FILE.npy and --file PATH is needed");
  return {!npy.empty(), npy.empty() ? file : npy};
}

int stage(const bench::options& opt) {
  const auto [npy, path] = npy_or_file(opt);
  const std::string asked_uri = opt.get("store", "");
  const std::uint64_t offset = opt.bytes("offset", "0");
  const std::string verify = opt.get("verify", "on");
  if (verify != "on" && verify != "off") throw std::invalid_argument("--verify is on or off");
  const backend want = bench::backend_option(opt);
  opt.reject_unknown();
  if (asked_uri.empty()) throw std::invalid_argument("--store URI is needed");
  std::error_code error;
  const std::uint64_t file_size = std::filesystem::file_size(path, error);
  if (error) throw std::invalid_argument((npy ? "--npy" : "--file") + std::string(": cannot read '") + path + "'");

  std::string header;
  std::uint64_t from = 0, size = file_size;
  std::string what = path + " (" + mib(file_size) + ")";
  if (npy) {
    const npy_header h = npy_file_header(path);
    if (h.header_bytes + h.data_bytes() > file_size) {
      throw std::invalid_argument("--npy: " + path + " is " + std::to_string(file_size) + " bytes, short of the " +
                                  std::to_string(h.header_bytes + h.data_bytes()) + " its header promises");
    }
    header = padded_npy_header(h, npy_record_align);
    from = h.header_bytes;
    size = h.data_bytes();
    what = path + " (" + h.descr + " " + h.shape_text() + ", " + mib(size) + ")";
  }
  stage_source source(path, header, from, size);
  const std::string uri =
      sized_store(asked_uri, offset + (source.bytes() + npy_record_align - 1) / npy_record_align * npy_record_align);
  stager s(want, uri);
  std::printf("staging %s into %s at byte %llu%s\n", what.c_str(), uri.c_str(), static_cast<unsigned long long>(offset),
              npy ? (", its data at byte " + std::to_string(offset + header.size())).c_str() : "");
  const auto start = std::chrono::steady_clock::now();
  copy_in(s, source, uri, offset, verify == "on");
  s.rt().stop();  // every write durable before we say so
  report(verify == "on" ? "staged and verified" : "staged", source.bytes(), start, s.rt());
  return 0;
}

int export_(const bench::options& opt) {
  const auto [npy, path] = npy_or_file(opt);
  const std::string uri = opt.get("store", "");
  const std::uint64_t offset = opt.bytes("offset", "0");
  const bool whole = !opt.has("length");
  const std::uint64_t asked = whole ? 0 : opt.bytes("length", "0");
  const backend want = bench::backend_option(opt);
  opt.reject_unknown();
  if (uri.empty()) throw std::invalid_argument("--store URI is needed");
  if (npy && !whole) throw std::invalid_argument("--length goes with --file; a .npy record's header says its length");

  stager s(want, uri);
  if (offset > s.capacity()) {
    throw std::invalid_argument("--offset " + std::to_string(offset) + " lies beyond the end of " + uri + " (" +
                                std::to_string(s.capacity()) + " bytes)");
  }
  std::uint64_t length = whole ? s.capacity() - offset : asked;
  if (npy) {
    const npy_header h = record_header(s, uri, offset);
    length = h.header_bytes + h.data_bytes();
    std::printf("exporting the %s %s array at byte %llu of %s (%s) to %s\n", h.descr.c_str(), h.shape_text().c_str(),
                static_cast<unsigned long long>(offset), uri.c_str(), mib(length).c_str(), path.c_str());
  } else {
    std::printf("copying bytes %llu..%llu of %s (%s) to %s\n", static_cast<unsigned long long>(offset),
                static_cast<unsigned long long>(offset + length), uri.c_str(), mib(length).c_str(), path.c_str());
  }
  if (length > s.capacity() - offset) {
    throw std::invalid_argument((npy ? "the record's " : "--length ") + std::to_string(length) +
                                " bytes from --offset " + std::to_string(offset) + " run past the end of " + uri +
                                " (" + std::to_string(s.capacity()) + " bytes)");
  }
  const auto start = std::chrono::steady_clock::now();
  copy_out(s, offset, length, path);
  s.rt().stop();
  report("copied", length, start, s.rt());
  return 0;
}

}  // namespace

int stage_main(int argc, char** argv, int first) { return stage(bench::options(argc, argv, first)); }
int export_main(int argc, char** argv, int first) { return export_(bench::options(argc, argv, first)); }

}  // namespace agio::tools
