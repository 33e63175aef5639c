// Device.read/write and pread/pwrite: every argument is checked before anything is issued (offsets
// in GPU memory on the GPU, by check_job, ahead of the I/O in stream order), then the batch runs
// as one agio job: GPU threads queued on the caller's stream, or CPU threads.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "agio/runtime/launch.hpp"
#include "arrays.hpp"
#include "batch.hpp"
#include "batch_job.hpp"
#include "core.hpp"

#if defined(__CUDACC__)
#include <cuda_runtime.h>

#include "agio/runtime/cuda_error.hpp"
#endif

namespace nb = nanobind;

namespace agio::python {
namespace {

bool in_cuda_memory(const nb::ndarray<>& a) { return a.device_type() == nb::device::cuda::value; }

// Whether the backend's threads reach `a`'s memory: CUDA memory on the GPU backend, host memory
// on the CPU backend, and on either a region of a memory buffer (pinned host memory the runtime
// registered and mapped into the GPU at the same address).
bool reachable(const runtime& rt, const nb::ndarray<>& a) {
  const bool on_gpu = rt.backend() == agio::backend::gpu;
  if (in_cuda_memory(a)) return on_gpu;
  return !on_gpu || rt.registered(a.data(), a.nbytes());
}
std::string where_to_be(const char* name, const nb::ndarray<>& a, bool on_gpu) {
  return "agio: " + what_array(name, a) + " must be in " +
         (on_gpu ? "CUDA memory (or a region of an agio.MemoryBuffer) on the GPU backend"
                 : "host memory on the CPU backend");
}

std::string describe_refusal(row_refusal why, std::uint64_t row, std::int64_t offset, const row_bounds& bounds,
                             const std::string& uri) {
  const std::string at = "offsets[" + std::to_string(row) + "] = " + std::to_string(offset);
  switch (why) {
    case row_refusal::negative: return "agio: " + at + " is negative";
    case row_refusal::misaligned:
      return "agio: " + at + " is not a multiple of " + uri + "'s " + std::to_string(bounds.lba_bytes) + "-byte LBA";
    default:
      return "agio: " + at + " plus a row of " + std::to_string(bounds.bytes_of(row)) + " bytes runs past the end of " +
             uri + " (" + std::to_string(bounds.capacity) + " bytes)";
  }
}

// How long a batch may run once started: each pass of its threads waits at most for a queue
// entry and for its request.
std::chrono::nanoseconds batch_limit(const runtime_options& o, std::uint64_t rows, std::uint64_t threads) {
  const std::uint64_t passes = (rows + threads - 1) / threads;
  return std::chrono::milliseconds(passes * (std::uint64_t{o.submit_timeout_ms} + o.wait_timeout_ms) + 5'000);
}

}  // namespace

core::~core() {
  try {
    stop();
  } catch (const std::exception&) {
    // A destructor cannot report; the runtime keeps the first failure for check().
  }
#if defined(__CUDACC__)
  for (const auto& s : spare_scratch_) {
    if (s->started) cudaEventDestroy(static_cast<cudaEvent_t>(s->started));
    if (s->finished) cudaEventDestroy(static_cast<cudaEvent_t>(s->finished));
  }
#endif
}

void core::stop() {
  nb::gil_scoped_release unlocked;
  std::vector<std::shared_ptr<batch>> in_flight;
  {
    std::lock_guard lock(mutex_);
    for (const auto& weak : pending_) {
      if (auto b = weak.lock()) in_flight.push_back(std::move(b));
    }
    pending_.clear();
  }
  for (const auto& b : in_flight) {
    try {
      b->wait();
    } catch (const std::exception&) {
      // Its own wait() reports it.
    }
  }
  rt_.stop();
}

device_description core::checked_device(std::uint32_t dev) const {
  if (!rt_.running())
    throw std::logic_error("agio: the runtime is not running; start it (with agio.Runtime(...) as rt:) first");
  const std::vector<device_description> devices = rt_.devices();
  if (dev >= devices.size()) throw std::invalid_argument("agio: no device " + std::to_string(dev));
  return devices[dev];
}

// The arrays come in read-only (a write's source may be), and are viewed writable here: a read's
// `out` was checked to be writable by the package.
std::shared_ptr<batch> core::transfer(std::uint32_t dev, bool write, const nb::ndarray<nb::ro>& offsets_in,
                                      const nb::ndarray<nb::ro>& data_in, std::uint64_t in_flight,
                                      std::uintptr_t stream) {
  const nb::ndarray<> offsets(offsets_in);
  const nb::ndarray<> data(data_in);
  const char* name = write ? "src" : "out";
  const device_description d = checked_device(dev);
  if (data.ndim() == 0) throw std::invalid_argument(std::string("agio: ") + name + " needs a first dimension of rows");
  if (offsets.ndim() != 1) {
    throw std::invalid_argument("agio: offsets must be one-dimensional, got " + what_array("offsets", offsets));
  }
  const std::uint64_t rows = data.shape(0);
  if (rows != offsets.shape(0)) {
    throw std::invalid_argument("agio: " + std::to_string(offsets.shape(0)) + " offsets for " + std::to_string(rows) +
                                " rows of " + what_array(name, data));
  }
  if (!c_contiguous(data)) {
    throw std::invalid_argument(std::string("agio: ") + name +
                                " must be C-contiguous (call .contiguous() or numpy.ascontiguousarray)");
  }
  const bool on_gpu = rt_.backend() == agio::backend::gpu;
  if (!reachable(rt_, data)) throw std::invalid_argument(where_to_be(name, data, on_gpu));
  const bool offsets_on_gpu = in_cuda_memory(offsets);
  if (offsets_on_gpu && !on_gpu) throw std::invalid_argument("agio: offsets must be in host memory on the CPU backend");
  const std::uint64_t row_bytes = rows == 0 ? 0 : data.nbytes() / rows;
  if (rows != 0 && row_bytes % d.lba_bytes != 0) {
    throw std::invalid_argument("agio: rows of " + std::to_string(row_bytes) + " bytes are not a multiple of " + d.uri +
                                "'s " + std::to_string(d.lba_bytes) + "-byte LBA");
  }
  const row_bounds bounds{rows, row_bytes, row_bytes, d.lba_bytes, d.capacity_blocks * d.lba_bytes};
  std::vector<std::uint64_t> at;
  row_offsets source;
  if (offsets_on_gpu) {
    source.given = integer_array("offsets", offsets);
  } else {
    at = host_indices("offsets", offsets);
    for (std::size_t i = 0; i < at.size(); ++i) {
      const row_refusal why = bounds.check(static_cast<std::int64_t>(at[i]), i);
      if (why != row_refusal::none)
        throw std::invalid_argument(describe_refusal(why, i, static_cast<std::int64_t>(at[i]), bounds, d.uri));
    }
  }
  // One request in flight per thread: up to 8192 GPU threads, or a few CPU threads (each a
  // std::thread of its own).
  const std::uint64_t threads = std::clamp<std::uint64_t>(
      in_flight == 0 ? (on_gpu ? 8192 : 16) : std::min<std::uint64_t>(in_flight, on_gpu ? 1u << 20 : 64), 1,
      std::max<std::uint64_t>(rows, 1));
  return launch({dev, write, source, bounds, offsets_on_gpu, static_cast<std::byte*>(data.data()), threads, stream},
                at);
}

std::shared_ptr<batch> core::transfer_range(std::uint32_t dev, bool write, const nb::ndarray<nb::ro>& data_in,
                                            std::uint64_t size, std::uint64_t file_offset, std::uint64_t data_offset,
                                            std::uintptr_t stream) {
  const nb::ndarray<> data(data_in);
  const char* name = write ? "src" : "buf";
  const device_description d = checked_device(dev);
  if (!c_contiguous(data)) throw std::invalid_argument(std::string("agio: ") + name + " must be C-contiguous");
  const bool on_gpu = rt_.backend() == agio::backend::gpu;
  if (!reachable(rt_, data)) throw std::invalid_argument(where_to_be(name, data, on_gpu));
  if (data_offset > data.nbytes() || data.nbytes() - data_offset < size) {
    throw std::invalid_argument("agio: " + std::to_string(size) + " bytes from byte " + std::to_string(data_offset) +
                                " do not fit in " + what_array(name, data) + " of " + std::to_string(data.nbytes()) +
                                " bytes");
  }
  if (file_offset % d.lba_bytes != 0 || size % d.lba_bytes != 0) {
    throw std::invalid_argument("agio: file_offset " + std::to_string(file_offset) + " and size " +
                                std::to_string(size) + " must be multiples of " + d.uri + "'s " +
                                std::to_string(d.lba_bytes) + "-byte LBA");
  }
  const std::uint64_t capacity = d.capacity_blocks * d.lba_bytes;
  if (file_offset > capacity || capacity - file_offset < size) {
    throw std::invalid_argument("agio: " + std::to_string(size) + " bytes from byte " + std::to_string(file_offset) +
                                " run past the end of " + d.uri + " (" + std::to_string(capacity) + " bytes)");
  }
  const std::uint64_t chunk = options_.max_transfer_bytes;
  const std::uint64_t rows = (size + chunk - 1) / chunk;
  const row_bounds bounds{rows, chunk, rows == 0 ? 0 : size - (rows - 1) * chunk, d.lba_bytes, capacity};
  row_offsets source;
  source.first = file_offset;
  source.stride = chunk;
  const std::uint64_t threads = std::clamp<std::uint64_t>(rows, 1, on_gpu ? 8192 : 16);
  return launch(
      {dev, write, source, bounds, false, static_cast<std::byte*>(data.data()) + data_offset, threads, stream}, {});
}

std::shared_ptr<scratch> core::take_scratch(std::size_t offsets) {
  {
    std::lock_guard lock(mutex_);
    for (auto it = spare_scratch_.begin(); it != spare_scratch_.end(); ++it) {
      if ((*it)->offsets_capacity >= offsets) {
        std::shared_ptr<scratch> s = std::move(*it);
        spare_scratch_.erase(it);
        return s;
      }
    }
  }
  auto s = std::make_shared<scratch>();
  // Room for more offsets than asked, so that a pool serves batches of similar sizes.
  s->offsets_capacity = std::max<std::size_t>(offsets + offsets / 2, 1024);
  const std::size_t bytes = (scratch::words + s->offsets_capacity) * sizeof(std::uint64_t);
  s->device = static_cast<std::uint64_t*>(rt_.allocate_device(bytes));
  s->mirror = static_cast<std::uint64_t*>(rt_.allocate_host(bytes));
  return s;
}

void core::give_back(std::shared_ptr<scratch> s) {
  std::lock_guard lock(mutex_);
  spare_scratch_.push_back(std::move(s));
}

std::shared_ptr<batch> core::launch(const launch_plan& plan, const std::vector<std::uint64_t>& host_offsets) {
  std::shared_ptr<batch> b(new batch(*this));
  b->offsets_ = plan.offsets;
  b->bounds_ = plan.bounds;
  b->uri_ = rt_.devices()[plan.dev].uri;
  b->limit_ = batch_limit(options_, plan.bounds.rows, plan.threads);
  if (plan.bounds.rows == 0) {
    b->finished_up_ = true;
    b->owner_ = nullptr;
    return b;
  }
  b->data_ = plan.data;
  b->data_bytes_ = (plan.bounds.rows - 1) * plan.bounds.row_bytes + plan.bounds.last_row_bytes;
  {
    nb::gil_scoped_release unlocked;
    b->scratch_ = take_scratch(host_offsets.size());
    scratch& s = *b->scratch_;
    s.mirror[0] = no_refusal;
    s.mirror[1] = 0;
    s.mirror[2] = plan.bounds.rows;
    s.mirror[3] = 0;
    std::memcpy(s.mirror + scratch::words, host_offsets.data(), host_offsets.size() * sizeof(std::uint64_t));
    registrations_.use(b->data_, b->data_bytes_);
    try {
      if (rt_.backend() == agio::backend::gpu) {
        launch_on_gpu(*b, plan, host_offsets);
      } else {
        launch_on_cpu(*b, plan, host_offsets);
      }
    } catch (...) {
      registrations_.release(b->data_, b->data_bytes_);
      give_back(std::move(b->scratch_));
      b->owner_ = nullptr;
      b->finished_up_ = true;
      throw;
    }
  }
  std::lock_guard lock(mutex_);
  std::erase_if(pending_, [](const std::weak_ptr<batch>& w) { return w.expired(); });
  pending_.push_back(b);
  return b;
}

void core::launch_on_cpu(batch& b, const launch_plan& plan, const std::vector<std::uint64_t>& host_offsets) {
  scratch& s = *b.scratch_;
  const std::size_t words = scratch::words + host_offsets.size();
  rt_.copy_to_device(s.device, s.mirror, words * sizeof(std::uint64_t));
  row_offsets offsets = plan.offsets;
  if (!host_offsets.empty()) offsets = {{s.device + scratch::words, 8, false}, 0, 0};
  b.worker_ = std::thread([this, &b, plan, offsets, words = s.device] {
    try {
      with_io(rt_, [&](const auto& io) {
        run_job(rt_, static_cast<std::uint32_t>(plan.threads),
                batch_job<std::decay_t<decltype(io)>>{io, plan.dev, plan.write, offsets, plan.bounds, plan.data,
                                                      nullptr, words + 1, words + 3});
      });
    } catch (...) {
      b.worker_error_ = std::current_exception();
    }
    b.worker_done_.store(true, std::memory_order_release);
  });
}

void core::launch_on_gpu([[maybe_unused]] batch& b, [[maybe_unused]] const launch_plan& plan,
                         [[maybe_unused]] const std::vector<std::uint64_t>& host_offsets) {
#if defined(__CUDACC__)
  const auto stream = reinterpret_cast<cudaStream_t>(plan.stream);
  cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
  throw_on_cuda_error(cudaStreamIsCapturing(stream, &capturing), "cudaStreamIsCapturing");
  if (capturing != cudaStreamCaptureStatusNone) {
    throw std::logic_error(
        "agio: reads and writes cannot be captured into a CUDA graph: the completion service they need is "
        "started by the host at each call, which a graph replay would not do. Issue them outside the capture "
        "(before it, or between replays)");
  }
  scratch& s = *b.scratch_;
  for (void** event : {&s.started, &s.finished}) {
    if (*event != nullptr) continue;
    cudaEvent_t made = nullptr;
    throw_on_cuda_error(cudaEventCreateWithFlags(&made, cudaEventDisableTiming), "cudaEventCreate");
    *event = made;
  }
  const auto started = static_cast<cudaEvent_t>(s.started);
  const auto finished = static_cast<cudaEvent_t>(s.finished);
  b.started_ = s.started;
  b.finished_ = s.finished;
  bool queued = false;  // whether work of this batch is queued on the stream
  try {
    throw_on_cuda_error(cudaEventRecord(started, stream), "cudaEventRecord");
    const std::size_t words = scratch::words + host_offsets.size();
    queued = true;
    throw_on_cuda_error(
        cudaMemcpyAsync(s.device, s.mirror, words * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream),
        "copying offsets to the GPU");
    row_offsets offsets = plan.offsets;
    if (!host_offsets.empty()) offsets = {{s.device + scratch::words, 8, false}, 0, 0};
    const std::uint64_t* refused = nullptr;
    if (plan.offsets_in_gpu_memory) {
      const auto threads = static_cast<std::uint32_t>(std::min<std::uint64_t>(plan.bounds.rows, 8192));
      launch_job(rt_, threads, check_job{offsets, plan.bounds, s.device}, stream);
      refused = s.device;
    }
    rt_.acquire_service();
    try {
      with_io(rt_, [&](const auto& io) {
        launch_job(rt_, static_cast<std::uint32_t>(plan.threads),
                   batch_job<std::decay_t<decltype(io)>>{io, plan.dev, plan.write, offsets, plan.bounds, plan.data,
                                                         refused, s.device + 1, s.device + 3},
                   stream);
      });
    } catch (...) {
      rt_.release_service();
      throw;
    }
    rt_.release_service_after(stream);
    throw_on_cuda_error(
        cudaMemcpyAsync(s.mirror, s.device, scratch::words * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream),
        "copying a batch's outcome to the host");
    throw_on_cuda_error(cudaEventRecord(finished, stream), "cudaEventRecord");
  } catch (...) {
    if (queued) cudaStreamSynchronize(stream);  // the queued work still uses the scratch memory
    b.started_ = b.finished_ = nullptr;
    throw;
  }
#else
  throw std::logic_error("agio: this agio was built without CUDA");
#endif
}

batch::~batch() {
  try {
    wait();
  } catch (const std::exception&) {
    // Nobody asked for the outcome; a failed request stays in the runtime's check().
  }
}

bool batch::done() {
  std::lock_guard lock(mutex_);
  if (finished_up_) return true;
#if defined(__CUDACC__)
  if (finished_ != nullptr) {
    const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(finished_));
    return state != cudaErrorNotReady;
  }
#endif
  return worker_done_.load(std::memory_order_acquire);
}

void batch::wait() {
  std::lock_guard lock(mutex_);
  if (!finished_up_) {
#if defined(__CUDACC__)
    if (finished_ != nullptr) {
      // Spin briefly (a batch often ends within microseconds), then poll more gently. The deadline
      // counts from the batch's start, not from work queued before it on the caller's stream.
      const auto begun = std::chrono::steady_clock::now();
      for (std::uint64_t polls = 0;; ++polls) {
        const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(finished_));
        if (state != cudaErrorNotReady) {
          throw_on_cuda_error(state, "agio batch");
          break;
        }
        const auto now = std::chrono::steady_clock::now();
        if (started_at_ == std::chrono::steady_clock::time_point{} &&
            cudaEventQuery(static_cast<cudaEvent_t>(started_)) == cudaSuccess) {
          started_at_ = now;
        }
        if (started_at_ != std::chrono::steady_clock::time_point{} && now - started_at_ > limit_) {
          throw std::runtime_error("agio: a batch of " + std::to_string(bounds_.rows) + " rows on " + uri_ +
                                   " has not finished " +
                                   std::to_string(std::chrono::duration_cast<std::chrono::seconds>(limit_).count()) +
                                   " s after it started; it is still in flight");
        }
        if (now - begun > std::chrono::microseconds(200)) {
          std::this_thread::sleep_for(std::chrono::microseconds(polls % 64 == 0 ? 200 : 20));
        } else {
          std::this_thread::yield();
        }
      }
    }
#endif
    if (worker_.joinable()) worker_.join();
    finish();
  }
  if (error_) std::rethrow_exception(error_);
}

void batch::finish() {
  core& c = *owner_;
  error_ = worker_error_ ? worker_error_ : outcome_of_words();
  c.registrations_.release(data_, data_bytes_);
  c.give_back(std::move(scratch_));
  started_ = finished_ = nullptr;
  owner_ = nullptr;
  finished_up_ = true;
}

std::exception_ptr batch::outcome_of_words() {
  core& c = *owner_;
  scratch& s = *scratch_;
  std::uint64_t words[scratch::words];
  if (c.rt_.backend() == agio::backend::gpu) {
    std::memcpy(words, s.mirror, sizeof words);  // copied there behind the job, on the stream
  } else {
    c.rt_.copy_to_host(words, s.device, sizeof words);
  }
  try {
    if (words[0] != no_refusal) {
      const std::uint64_t row = words[0] >> 2;
      const integers& given = offsets_.given;
      std::byte raw[8] = {};
      c.rt_.copy_to_host(raw, static_cast<const std::byte*>(given.values) + row * given.width, given.width);
      const std::int64_t value = integers{raw, given.width, given.is_signed}[0];
      throw std::invalid_argument(describe_refusal(static_cast<row_refusal>(words[0] & 3), row, value, bounds_, uri_));
    }
    if (words[1] != 0) {
      c.rt_.check();  // throws io_error with the first failed request's fields
      throw io_error("agio: " + std::to_string(words[1]) + " of " + std::to_string(bounds_.rows) +
                     " rows failed, the first being row " + std::to_string(words[2]));
    }
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace agio::python
