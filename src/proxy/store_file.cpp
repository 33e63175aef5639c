// The file store: a regular file or block device driven through one io_uring per channel,
// with O_DIRECT so that the page cache neither hides the device's speed nor doubles memory.
#include <fcntl.h>
#include <linux/fs.h>
#include <liburing.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

#include "agio/detail/clock.hpp"
#include "proxy/store_impl.hpp"

namespace agio::proxy {

namespace {

// 4096 satisfies O_DIRECT on devices with 512-byte and 4 KiB logical sectors alike.
constexpr std::uint32_t direct_buffer_alignment = 4096;
// The kernel answers EAGAIN/EINTR for transient conditions; a device that keeps answering
// them after this many resubmissions gets its error reported instead of spinning forever.
constexpr unsigned max_resubmissions = 100;
// Destroying a ring with I/Os in flight lets the kernel write into buffers the caller is
// about to free, so a channel waits them out, but no longer than this for a hung device.
constexpr std::uint64_t drain_limit_ms = 5000;

std::string context(const store_options& options) { return "open_store(" + in_quotes(options.uri) + "): "; }

[[noreturn]] void throw_errno(int error, const std::string& what) {
  throw std::system_error(error, std::generic_category(), what);
}

class unique_fd {
 public:
  explicit unique_fd(int fd) : fd_(fd) {}
  unique_fd(unique_fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  unique_fd& operator=(unique_fd&&) = delete;
  ~unique_fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

struct opened_file {
  unique_fd fd;
  bool direct;
};

// Filesystems without direct I/O (tmpfs before Linux 6.6, some FUSE ones) refuse O_DIRECT
// at open with EINVAL; buffered I/O is slower but still correct there.
opened_file open_file(const std::string& path, const store_options& options) {
  const int flags = O_RDWR | O_CLOEXEC | (options.create_bytes ? O_CREAT : 0);
  int fd = ::open(path.c_str(), flags | O_DIRECT, 0644);
  bool direct = true;
  if (fd < 0 && errno == EINVAL) {
    fd = ::open(path.c_str(), flags, 0644);
    direct = false;
  }
  if (fd < 0) throw_errno(errno, context(options) + "cannot open " + in_quotes(path));
  return {unique_fd(fd), direct};
}

std::uint64_t block_device_bytes(int fd, const std::string& path, const store_options& options) {
  if (options.create_bytes) {
    throw std::invalid_argument(context(options) + "create= needs a regular file, and " + in_quotes(path) +
                                " is a block device");
  }
  std::uint64_t bytes = 0;
  if (::ioctl(fd, BLKGETSIZE64, &bytes) != 0)
    throw_errno(errno, context(options) + "BLKGETSIZE64 on " + in_quotes(path));
  return bytes;
}

// A regular file made by create= grows to the asked size; an existing larger one is kept.
std::uint64_t regular_file_bytes(int fd, const struct stat& st, const std::string& path, const store_options& options) {
  const auto current = static_cast<std::uint64_t>(st.st_size);
  if (!options.create_bytes || *options.create_bytes <= current) return current;
  if (::ftruncate(fd, static_cast<off_t>(*options.create_bytes)) != 0) {
    throw_errno(errno, context(options) + "cannot extend " + in_quotes(path) + " to " +
                           std::to_string(*options.create_bytes) + " bytes");
  }
  return *options.create_bytes;
}

std::uint64_t store_bytes(int fd, const std::string& path, const store_options& options) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw_errno(errno, context(options) + "cannot stat " + in_quotes(path));
  if (S_ISBLK(st.st_mode)) return block_device_bytes(fd, path, options);
  if (S_ISREG(st.st_mode)) return regular_file_bytes(fd, st, path, options);
  throw std::invalid_argument(context(options) + in_quotes(path) + " is neither a regular file nor a block device");
}

struct direct_io_alignment {
  std::uint32_t offset = 0;  // 0: the kernel did not say
  std::uint32_t memory = 0;
};

direct_io_alignment query_alignment(int fd) {
  struct statx sx {};
  if (::statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN | STATX_TYPE, &sx) == 0 && (sx.stx_mask & STATX_DIOALIGN) != 0) {
    return {sx.stx_dio_offset_align, sx.stx_dio_mem_align};
  }
  int logical_block = 0;
  if (S_ISBLK(sx.stx_mode) && ::ioctl(fd, BLKSSZGET, &logical_block) == 0 && logical_block > 0) {
    const auto bytes = static_cast<std::uint32_t>(logical_block);
    return {bytes, bytes};
  }
  return {};
}

// O_DIRECT offsets must be multiples of the device's logical block, so an LBA finer than
// that would fail every other command with EINVAL; better to refuse the URI up front.
std::uint32_t checked_buffer_alignment(int fd, const std::string& path, const store_options& options) {
  const direct_io_alignment alignment = query_alignment(fd);
  if (alignment.offset > options.lba_bytes) {
    throw std::invalid_argument(context(options) + "lba=" + std::to_string(options.lba_bytes) + " is finer than the " +
                                std::to_string(alignment.offset) + "-byte direct-I/O alignment of " + in_quotes(path) +
                                "; use lba=" + std::to_string(alignment.offset));
  }
  return std::max(direct_buffer_alignment, alignment.memory);
}

class file_store final : public store {
 public:
  file_store(const std::string& path, store_options options, opened_file file)
      : options_(std::move(options)), path_(path), fd_(std::move(file.fd)) {
    const std::uint64_t bytes = store_bytes(fd_.get(), path_, options_);
    capacity_ = bytes - bytes % options_.lba_bytes;
    if (capacity_ == 0) {
      throw std::invalid_argument(context(options_) + in_quotes(path_) + " holds no whole " +
                                  std::to_string(options_.lba_bytes) + "-byte block (add create=SIZE)");
    }
    check_fault_in_range(options_, capacity_);
    alignment_ = file.direct ? checked_buffer_alignment(fd_.get(), path_, options_) : 1;
  }

  const std::string& uri() const override { return options_.uri; }
  std::uint64_t capacity_bytes() const override { return capacity_; }
  std::uint32_t lba_bytes() const override { return options_.lba_bytes; }
  std::uint32_t buffer_alignment() const override { return alignment_; }
  std::byte* host_view() override { return nullptr; }
  std::unique_ptr<store_channel> open_channel(unsigned depth) override;

  void sync() override {
    if (::fdatasync(fd_.get()) != 0) throw_errno(errno, "sync of " + in_quotes(options_.uri) + " (" + path_ + ")");
  }

  int fd() const { return fd_.get(); }

  const fault_plan& faults() const { return faults_; }

  // -errno, or the bytes a read or write may move once bounds and the injected faults are
  // applied; 0 means there is nothing for the kernel to do.
  std::int64_t transfer_bytes(const store_io& io) {
    if (const std::int64_t error = check_io_bounds(io, capacity_, options_.lba_bytes); error != 0) return error;
    const std::int64_t bytes = faults_.bytes_to_move(io);
    if (bytes > 0 && io.buffer == nullptr) return -EFAULT;  // no host view to read from instead
    return bytes;
  }

 private:
  store_options options_;
  std::string path_;
  unique_fd fd_;
  std::uint64_t capacity_ = 0;
  std::uint32_t alignment_ = 1;
  fault_plan faults_{options_};
};

class file_channel final : public store_channel {
 public:
  file_channel(file_store& owner, unsigned depth) : store_(owner), depth_(depth) {
    // Entries >= depth, and a slot holds at most one unsubmitted SQE, so the SQ never fills;
    // the CQ is twice the SQ, so it never overflows either.
    if (const int rc = io_uring_queue_init(depth, &ring_, 0); rc < 0) {
      const bool unavailable = rc == -EPERM || rc == -ENOSYS;
      throw_errno(-rc, std::string(unavailable ? "io_uring unavailable: " : "") + "io_uring_queue_init(" +
                           std::to_string(depth) + ") for " + in_quotes(owner.uri()));
    }
    slots_.resize(depth);
    free_slots_.reserve(depth);
    for (std::uint32_t i = depth; i > 0; --i) free_slots_.push_back(i - 1);
    finished_.reserve(depth);
  }
  file_channel(const file_channel&) = delete;
  file_channel& operator=(const file_channel&) = delete;
  ~file_channel() override {
    drain();
    io_uring_queue_exit(&ring_);
  }

  bool submit(const store_io& io) override {
    if (in_flight_ >= depth_) return false;
    // Decided first, so an injected crash leaves the channel's count of I/Os as it was.
    const std::int64_t bytes = io.op == store_op::flush ? 0 : store_.transfer_bytes(io);
    ++in_flight_;
    if (io.op == store_op::flush) {
      start(io);
      return true;
    }
    // A hung I/O never reaches the kernel: it only stays counted in flight.
    if (store_.faults().hangs(io)) return true;
    if (bytes <= 0) {
      finished_.push_back({io.tag, bytes});
      return true;
    }
    store_io shortened = io;
    shortened.length = static_cast<std::uint32_t>(bytes);
    start(shortened);
    return true;
  }

  // An EAGAIN/EBUSY from the kernel leaves the SQEs in the ring for the next push.
  void push() override {
    if (io_uring_sq_ready(&ring_) == 0) return;
    const int rc = io_uring_submit(&ring_);
    if (rc >= 0 || rc == -EAGAIN || rc == -EBUSY || rc == -EINTR) return;
    throw_errno(-rc, "io_uring_submit for " + in_quotes(store_.uri()));
  }

  std::size_t reap(std::span<store_result> out) override {
    const std::size_t taken = take_finished(out);
    return taken + reap_kernel(out.subspan(taken));
  }

  std::size_t in_flight() const override { return in_flight_; }

 private:
  struct slot {
    store_io io;
    unsigned resubmissions = 0;
  };

  void start(const store_io& io) {
    const std::uint32_t index = free_slots_.back();
    free_slots_.pop_back();
    slots_[index] = {io, 0};
    queue(index);
  }

  void queue(std::uint32_t index) {
    io_uring_sqe* const sqe = io_uring_get_sqe(&ring_);
    if (sqe == nullptr) throw std::logic_error("file_channel: io_uring SQ full despite depth accounting");
    const store_io& io = slots_[index].io;
    switch (io.op) {
      case store_op::read: io_uring_prep_read(sqe, store_.fd(), io.buffer, io.length, io.offset); break;
      case store_op::write: io_uring_prep_write(sqe, store_.fd(), io.buffer, io.length, io.offset); break;
      case store_op::flush: io_uring_prep_fsync(sqe, store_.fd(), IORING_FSYNC_DATASYNC); break;
    }
    io_uring_sqe_set_data64(sqe, index);
  }

  std::size_t take_finished(std::span<store_result> out) {
    const std::size_t count = std::min(out.size(), finished_.size());
    std::copy_n(finished_.begin(), count, out.begin());
    finished_.erase(finished_.begin(), finished_.begin() + static_cast<std::ptrdiff_t>(count));
    in_flight_ -= count;
    return count;
  }

  bool resubmit_if_transient(std::uint32_t index, int result) {
    if ((result != -EAGAIN && result != -EINTR) || ++slots_[index].resubmissions > max_resubmissions) return false;
    queue(index);
    return true;
  }

  // A short count from the kernel (a file shorter than the store believed) is passed on as
  // is: retrying the rest would hide the truncation from the NVMe command's status.
  std::size_t reap_kernel(std::span<store_result> out) {
    std::array<io_uring_cqe*, 32> batch{};
    std::size_t reaped = 0;
    bool resubmitted = false;
    // Each round consumes at least one CQE and no more than depth can be waiting.
    for (unsigned round = 0; reaped < out.size() && round <= depth_; ++round) {
      const auto want = static_cast<unsigned>(std::min(batch.size(), out.size() - reaped));
      const unsigned got = io_uring_peek_batch_cqe(&ring_, batch.data(), want);
      if (got == 0) break;
      for (unsigned i = 0; i < got; ++i) {
        const auto index = static_cast<std::uint32_t>(io_uring_cqe_get_data64(batch[i]));
        if (resubmit_if_transient(index, batch[i]->res)) {
          resubmitted = true;
          continue;
        }
        out[reaped++] = {slots_[index].io.tag, batch[i]->res};
        free_slots_.push_back(index);
        --in_flight_;
      }
      io_uring_cq_advance(&ring_, got);
    }
    if (resubmitted) push();
    return reaped;
  }

  void drain() noexcept {
    io_uring_submit(&ring_);
    const deadline limit = deadline::after_ms(drain_limit_ms);
    while (free_slots_.size() < depth_ && !limit.passed()) {
      __kernel_timespec wait{.tv_sec = 0, .tv_nsec = 10'000'000};
      io_uring_cqe* cqe = nullptr;
      const int rc = io_uring_wait_cqe_timeout(&ring_, &cqe, &wait);
      if (rc == 0) {
        free_slots_.push_back(static_cast<std::uint32_t>(io_uring_cqe_get_data64(cqe)));
        io_uring_cqe_seen(&ring_, cqe);
      } else if (rc != -ETIME && rc != -EINTR) {
        return;
      }
    }
  }

  file_store& store_;
  unsigned depth_;
  io_uring ring_{};
  std::vector<slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::vector<store_result> finished_;  // results decided without the kernel (errors, faults)
  std::size_t in_flight_ = 0;
};

std::unique_ptr<store_channel> file_store::open_channel(unsigned depth) {
  if (depth == 0)
    throw std::invalid_argument("open_channel on " + in_quotes(options_.uri) + ": depth must be at least 1");
  return std::make_unique<file_channel>(*this, depth);
}

}  // namespace

std::unique_ptr<store> make_file_store(const std::string& path, store_options options) {
  opened_file file = open_file(path, options);
  return std::make_unique<file_store>(path, std::move(options), std::move(file));
}

}  // namespace agio::proxy
