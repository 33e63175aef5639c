// cuFile's batch API (baselines/cufile_reader.hpp), compiled where CMake found libcufile.
#include "baselines/cufile_reader.hpp"

#include <cuda_runtime_api.h>
#include <cufile.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <stdexcept>
#include <utility>

#include "agio/store/store_uri.hpp"
#include "baselines/block_reader.hpp"

namespace agio::bench {
namespace {

// A batch not done within this fails the read, as agio's benchmark runtimes fail a slow store.
constexpr std::chrono::seconds batch_deadline{120};
// The batch size where cuFile does not say its limit (cufile.json's default io_batchsize).
constexpr std::size_t default_batch_size = 128;

std::string cufile_error(const CUfileError_t& e) {
  std::string text = std::string(CUFILE_ERRSTR(e.err)) + " (" + std::to_string(static_cast<int>(e.err)) + ")";
  if (IS_CUDA_ERR(e)) text += ", CUDA driver error " + std::to_string(static_cast<int>(e.cu_err));
  return text;
}

// cuFile's outcome of a read: the -errno or -cuFile error it carries, or the bytes read.
std::string io_result(const CUfileIOEvents_t& ev) {
  const auto ret = static_cast<long long>(ev.ret);
  if (ret >= 0) return std::to_string(ret) + " bytes";
  if (-ret > CUFILEOP_BASE_ERR) return CUFILE_ERRSTR(static_cast<int>(ret));
  return std::strerror(static_cast<int>(-ret));
}

const char* status_name(CUfileStatus_t status) {
  switch (status) {
    case CUFILE_WAITING: return "WAITING";
    case CUFILE_PENDING: return "PENDING";
    case CUFILE_INVALID: return "INVALID";
    case CUFILE_CANCELED: return "CANCELED";
    case CUFILE_COMPLETE: return "COMPLETE";
    case CUFILE_TIMEOUT: return "TIMEOUT";
    case CUFILE_FAILED: return "FAILED";
  }
  return "unknown";
}

// The driver, opened once per process on first use ("" or why it failed). libcufile closes
// it when the process exits.
const std::string& driver_error() {
  static const std::string error = [] {
    // This check may be the process's first CUDA call, made before agio's runtime exists. The
    // runtime needs eager module loading (src/runtime/gpu_platform.cu says why) and can only
    // ask for it before CUDA starts, so ask for it here as the runtime would.
    if (std::getenv("CUDA_MODULE_LOADING") == nullptr) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
    // cuFile works in the calling thread's CUDA context: make it the runtime's, which agio and
    // the benchmark use, before the driver looks for one.
    if (const cudaError_t c = cudaFree(nullptr); c != cudaSuccess) {
      return std::string("no CUDA device for cuFile: ") + cudaGetErrorString(c);
    }
    const CUfileError_t e = cuFileDriverOpen();
    return e.err == CU_FILE_SUCCESS ? std::string() : "cuFileDriverOpen failed: " + cufile_error(e);
  }();
  return error;
}

// What cuFile's file registration needs on a machine without nvidia-fs, said where it fails.
std::string compat_mode_hint(int fd) {
  struct stat st {};
  std::string udev = "/run/udev/data/b<major>:<minor>";
  if (::fstat(fd, &st) == 0) {
    const dev_t dev = S_ISBLK(st.st_mode) ? st.st_rdev : st.st_dev;
    udev = "/run/udev/data/b" + std::to_string(major(dev)) + ":" + std::to_string(minor(dev));
  }
  return ". Without the nvidia-fs driver cuFile runs in compatibility mode, which still identifies the "
         "file's filesystem through udev: on a VM whose disk lacks udev properties, create " +
         udev + " with lines E:ID_FS_USAGE=filesystem and E:ID_FS_TYPE=<fs type, e.g. ext4>";
}

}  // namespace

struct cufile_reader::state {
  struct file {
    std::string path;
    int fd = -1;
    CUfileHandle_t handle = nullptr;
  };
  // One cuFile batch: set up once, submitted again once all its reads are reaped.
  struct batch {
    CUfileBatchHandle_t id = nullptr;
    std::vector<CUfileIOParams_t> params;
    std::vector<CUfileIOEvents_t> events;
    std::size_t first = 0;  // index in the read's blocks of params[0]
    unsigned submitted = 0, reaped = 0;
    std::chrono::steady_clock::time_point deadline;
  };

  striping stripes;
  std::vector<file> files;
  std::vector<batch> batches;
  std::deque<batch*> busy;  // submission order
  std::vector<std::byte*> registered;
  bool said_unregistered = false;

  ~state() {
    for (batch* b : busy) cuFileBatchIOCancel(b->id);  // nothing may land after this returns
    for (batch& b : batches) {
      if (b.id != nullptr) cuFileBatchIODestroy(b.id);
    }
    for (std::byte* p : registered) cuFileBufDeregister(p);
    for (file& f : files) {
      if (f.handle != nullptr) cuFileHandleDeregister(f.handle);
      if (f.fd >= 0) ::close(f.fd);
    }
  }

  // Which block and file read i of `blocks` was, for messages.
  std::string where(const std::vector<std::uint64_t>& blocks, std::size_t i) const {
    const std::uint64_t g = blocks[i];
    return "block " + std::to_string(g) + " (byte " + std::to_string(stripes.block_on_device(g) * block_bytes) +
           " of " + files[stripes.device_of(g)].path + ")";
  }

  void submit(batch& b, const std::vector<std::uint64_t>& blocks, std::size_t first, std::byte* device_dst) {
    b.first = first;
    b.submitted = static_cast<unsigned>(std::min(b.params.size(), blocks.size() - first));
    b.reaped = 0;
    for (unsigned k = 0; k < b.submitted; ++k) {
      const std::size_t i = first + k;
      CUfileIOParams_t& p = b.params[k];
      p = {};
      p.mode = CUFILE_BATCH;
      p.u.batch.devPtr_base = device_dst;
      p.u.batch.file_offset = static_cast<off_t>(stripes.block_on_device(blocks[i]) * block_bytes);
      p.u.batch.devPtr_offset = static_cast<off_t>(i * block_bytes);
      p.u.batch.size = block_bytes;
      p.fh = files[stripes.device_of(blocks[i])].handle;
      p.opcode = CUFILE_READ;
      p.cookie = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i));
    }
    const CUfileError_t e = cuFileBatchIOSubmit(b.id, b.submitted, b.params.data(), 0);
    if (e.err != CU_FILE_SUCCESS) {
      throw std::runtime_error("cufile: cuFileBatchIOSubmit of " + std::to_string(b.submitted) + " reads (the first " +
                               where(blocks, first) + ") failed: " + cufile_error(e));
    }
    b.deadline = std::chrono::steady_clock::now() + batch_deadline;
  }

  // Reaps all of `b`'s reads, checking each, in waits short enough to check the deadline.
  void reap(batch& b, const std::vector<std::uint64_t>& blocks) {
    while (b.reaped < b.submitted) {
      if (std::chrono::steady_clock::now() > b.deadline) {
        throw std::runtime_error("cufile: " + std::to_string(b.submitted - b.reaped) + " of a batch of " +
                                 std::to_string(b.submitted) + " reads (the first " + where(blocks, b.first) +
                                 ") not done within " + std::to_string(batch_deadline.count()) + " s");
      }
      timespec slice{0, 100'000'000};
      unsigned n = b.submitted - b.reaped;
      const CUfileError_t e = cuFileBatchIOGetStatus(b.id, n, &n, b.events.data(), &slice);
      if (e.err != CU_FILE_SUCCESS)
        throw std::runtime_error("cufile: cuFileBatchIOGetStatus failed: " + cufile_error(e));
      for (unsigned k = 0; k < n; ++k) {
        const CUfileIOEvents_t& ev = b.events[k];
        if (ev.status != CUFILE_COMPLETE || ev.ret != block_bytes) {
          const auto i = static_cast<std::size_t>(reinterpret_cast<std::uintptr_t>(ev.cookie));
          throw std::runtime_error("cufile: reading " + where(blocks, i) + " failed: status " + status_name(ev.status) +
                                   ", result " + io_result(ev));
        }
      }
      b.reaped += n;
    }
  }
};

std::string cufile_reader::why_unavailable() { return driver_error(); }

cufile_reader::cufile_reader(const std::vector<std::string>& uris, std::uint64_t blocks, unsigned batches_in_flight)
    : state_(std::make_unique<state>()) {
  state& s = *state_;
  s.stripes = striping{static_cast<std::uint32_t>(uris.size())};
  std::vector<std::string> paths;
  for (const std::string& uri : uris) {
    store_spec spec = parse_store_uri(uri);
    if (spec.what != store_spec::kind::file) {
      throw std::invalid_argument("cufile: " + uri + " is not a file: store; cuFile reads files only");
    }
    paths.push_back(std::move(spec.path));
  }
  if (const std::string& why = driver_error(); !why.empty()) throw std::runtime_error("cufile: " + why);

  for (std::uint32_t d = 0; d < paths.size(); ++d) {
    state::file& f = s.files.emplace_back();
    f.path = paths[d];
    // cuFile reads with direct I/O; a file without it would be refused at registration.
    f.fd = ::open(f.path.c_str(), O_RDONLY | O_DIRECT);
    if (f.fd < 0) {
      throw std::runtime_error("cufile: cannot open " + f.path +
                               " with O_DIRECT, which cuFile needs: " + std::strerror(errno));
    }
    const off_t bytes = ::lseek(f.fd, 0, SEEK_END);
    const std::uint64_t need = s.stripes.blocks_on(d, blocks) * block_bytes;
    if (bytes < 0 || static_cast<std::uint64_t>(bytes) < need) {
      throw std::invalid_argument("cufile: " + f.path + " is smaller than its share of the data (" +
                                  std::to_string(need) + " bytes)");
    }
    CUfileDescr_t descr{};
    descr.type = CU_FILE_HANDLE_TYPE_OPAQUE_FD;
    descr.handle.fd = f.fd;
    if (const CUfileError_t e = cuFileHandleRegister(&f.handle, &descr); e.err != CU_FILE_SUCCESS) {
      f.handle = nullptr;
      throw std::runtime_error("cufile: cuFileHandleRegister on " + f.path + " failed: " + cufile_error(e) +
                               compat_mode_hint(f.fd));
    }
  }

  std::size_t batch_size = 0;
  if (cuFileGetParameterSizeT(CUFILE_PARAM_PROPERTIES_IO_BATCHSIZE, &batch_size).err != CU_FILE_SUCCESS ||
      batch_size == 0) {
    batch_size = default_batch_size;
  }
  s.batches.resize(std::max(1u, batches_in_flight));
  for (state::batch& b : s.batches) {
    b.params.resize(batch_size);
    b.events.resize(batch_size);
    if (const CUfileError_t e = cuFileBatchIOSetUp(&b.id, static_cast<unsigned>(batch_size));
        e.err != CU_FILE_SUCCESS) {
      b.id = nullptr;
      throw std::runtime_error("cufile: cuFileBatchIOSetUp(" + std::to_string(batch_size) +
                               ") failed: " + cufile_error(e));
    }
  }
  CUfileDrvProps_t props{};
  const bool nvfs = cuFileDriverGetProperties(&props).err == CU_FILE_SUCCESS && props.nvfs.major_version != 0;
  const std::string driver =
      nvfs ? "nvidia-fs " + std::to_string(props.nvfs.major_version) + "." + std::to_string(props.nvfs.minor_version)
           : std::string("no nvidia-fs driver reported: compatibility mode");
  std::fprintf(stderr, "cufile: %zu file(s), batches of %zu reads, %zu in flight, %s\n", s.files.size(), batch_size,
               s.batches.size(), driver.c_str());
}

cufile_reader::~cufile_reader() = default;

void cufile_reader::register_buffer(std::byte* device, std::size_t bytes) {
  state& s = *state_;
  if (const CUfileError_t e = cuFileBufRegister(device, bytes, 0); e.err != CU_FILE_SUCCESS) {
    if (!s.said_unregistered) {
      std::fprintf(stderr, "cufile: cuFileBufRegister failed (%s); reading into unregistered device memory\n",
                   cufile_error(e).c_str());
      s.said_unregistered = true;
    }
    return;
  }
  s.registered.push_back(device);
}

void cufile_reader::deregister_buffer(std::byte* device) {
  state& s = *state_;
  const auto it = std::find(s.registered.begin(), s.registered.end(), device);
  if (it == s.registered.end()) return;
  cuFileBufDeregister(device);
  s.registered.erase(it);
}

void cufile_reader::read(const std::vector<std::uint64_t>& blocks, std::byte* device_dst) {
  state& s = *state_;
  std::vector<state::batch*> idle;
  for (state::batch& b : s.batches) idle.push_back(&b);
  std::size_t next = 0;
  while (next < blocks.size() || !s.busy.empty()) {
    while (next < blocks.size() && !idle.empty()) {
      state::batch& b = *idle.back();
      s.submit(b, blocks, next, device_dst);
      next += b.submitted;
      idle.pop_back();
      s.busy.push_back(&b);
    }
    s.reap(*s.busy.front(), blocks);
    idle.push_back(s.busy.front());
    s.busy.pop_front();
  }
}

}  // namespace agio::bench
