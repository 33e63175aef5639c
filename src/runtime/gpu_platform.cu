// The GPU platform: device memory from cudaMalloc, transport memory from mapped pinned host
// memory, the completion service as a persistent kernel on a stream of its own, and the copy
// engine driven by cudaMemcpyAsync.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <cstring>
#include <deque>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "agio/io/io_handle.hpp"
#include "agio/runtime/cuda_error.hpp"
#include "agio/runtime/gpu_memory.hpp"
#include "agio/service/service.hpp"
#include "runtime/numa_memory.hpp"
#include "runtime/platform.hpp"

namespace agio {
namespace {

constexpr unsigned service_block_warps = 4;
constexpr unsigned service_block_threads = service_block_warps * detail::warp::size;

// Where the service's workers sit in its blocks. While the service has submitting workers (as
// many as retiring ones), each block's first half retires and its second half submits: only a
// retiring warp has a staging area, and every block of a kernel gets the same shared memory, so
// a block holds as few of them as it can. Without, every warp retires. The worker of warp
// `warp` (of the block) of block `block`, or `workers` for none.
struct service_layout {
  std::uint32_t retiring = 0;
  std::uint32_t submitting = 0;     // 0 or `retiring`
  std::uint32_t staging_slots = 0;  // of each retiring warp's staging area (0: none)

  __host__ __device__ std::uint32_t retiring_per_block() const {
    return submitting == 0 ? service_block_warps : service_block_warps / 2;
  }
  __host__ __device__ std::uint32_t blocks() const {
    return (retiring + retiring_per_block() - 1) / retiring_per_block();
  }
  __device__ std::uint32_t worker_at(std::uint32_t block, std::uint32_t warp) const {
    const std::uint32_t per_block = retiring_per_block();
    const std::uint32_t k = block * per_block + warp % per_block;
    if (k >= retiring) return retiring + submitting;
    return warp < per_block ? k : retiring + k;
  }
};

// Each retiring warp's staging area follows the one before it in the block's shared memory.
__global__ void service_kernel(io::io_state io, service_layout layout, std::uint32_t generation) {
  extern __shared__ __align__(128) unsigned char staging_areas[];
  const std::uint32_t warp = threadIdx.x / detail::warp::size;
  const std::uint32_t workers = layout.retiring + layout.submitting;
  const std::uint32_t worker = layout.worker_at(blockIdx.x, warp);
  if (worker >= workers) return;
  detail::warp::bulk_staging staging;
#if __CUDA_ARCH__ >= 900
  if (layout.staging_slots != 0 && worker < layout.retiring) {
    staging = detail::warp::bulk_staging(
        staging_areas + warp * detail::warp::bulk_staging::bytes_for(layout.staging_slots), layout.staging_slots);
  }
#endif
  const io_handle handle{io};
  service::run(io, worker, workers, generation, &staging,
               [&](std::uint32_t ring) { return handle.serve_posted(ring); });
}

// Launched once per GPU before a completion service first starts there, with `never` 0: no
// thread takes its branch, but its launch is what has CUDA set up printf and the heap for the
// GPU, which later kernels then find done (measured on an H200 VM: a kernel that merely contains
// a printf, an assert or a malloc never started beside a running kernel otherwise, and priming
// one of printf or malloc did not set up the other).
__global__ void printf_and_heap_kernel(std::uint32_t never) {
  if (never != 0) {
    printf("agio: %u\n", never);
    free(malloc(never));
  }
}

// Copies are issued on the controller thread's own stream as they come; each push() closes a
// batch with an event, and reap() hands back the tags of batches whose event has fired.
class cuda_copy_engine final : public proxy::copy_engine {
 public:
  explicit cuda_copy_engine(int device) : device_(device) {
    throw_on_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
    throw_on_cuda_error(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate (copy engine)");
  }
  ~cuda_copy_engine() override {
    cudaStreamSynchronize(stream_);
    for (auto& b : batches_) cudaEventDestroy(b.done);
    for (auto e : spare_) cudaEventDestroy(e);
    cudaStreamDestroy(stream_);
  }

  void copy(void* dst, const void* src, std::size_t bytes, std::uint64_t tag) override {
    if (!device_set_) {
      // The engine is made on one thread and used on a controller thread.
      throw_on_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
      device_set_ = true;
    }
    throw_on_cuda_error(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, stream_), "cudaMemcpyAsync");
    open_.push_back(tag);
  }

  void push() override {
    if (open_.empty()) return;
    cudaEvent_t e;
    if (spare_.empty()) {
      throw_on_cuda_error(cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreate");
    } else {
      e = spare_.back();
      spare_.pop_back();
    }
    throw_on_cuda_error(cudaEventRecord(e, stream_), "cudaEventRecord");
    batches_.push_back({e, std::move(open_)});
    open_.clear();
  }

  std::size_t reap(std::span<std::uint64_t> out) override {
    std::size_t n = 0;
    while (!batches_.empty() && n < out.size()) {
      batch& b = batches_.front();
      if (b.next == 0) {
        const cudaError_t state = cudaEventQuery(b.done);
        if (state == cudaErrorNotReady) break;
        throw_on_cuda_error(state, "copy engine batch");
      }
      while (b.next < b.tags.size() && n < out.size()) out[n++] = b.tags[b.next++];
      if (b.next == b.tags.size()) {
        spare_.push_back(b.done);
        batches_.pop_front();
      }
    }
    return n;
  }

  std::size_t in_flight() const override {
    std::size_t n = open_.size();
    for (const auto& b : batches_) n += b.tags.size() - b.next;
    return n;
  }

 private:
  struct batch {
    cudaEvent_t done;
    std::vector<std::uint64_t> tags;
    std::size_t next = 0;
  };
  int device_;
  bool device_set_ = false;
  cudaStream_t stream_{};
  std::vector<std::uint64_t> open_;
  std::deque<batch> batches_;
  std::vector<cudaEvent_t> spare_;
};

class gpu_platform final : public runtime::platform {
 public:
  explicit gpu_platform(int device) : device_(device) {
    throw_on_cuda_error(cudaSetDevice(device_), "cudaSetDevice");
    throw_on_cuda_error(cudaGetDeviceProperties(&props_, device_), "cudaGetDeviceProperties");
    throw_on_cuda_error(cudaStreamCreateWithFlags(&service_stream_, cudaStreamNonBlocking),
                        "cudaStreamCreate (service)");
    throw_on_cuda_error(cudaStreamCreateWithFlags(&control_stream_, cudaStreamNonBlocking),
                        "cudaStreamCreate (control)");
  }
  ~gpu_platform() override {
    if (service_running_) join_service(60'000);
    release_deferred();
    cudaStreamDestroy(service_stream_);
    cudaStreamDestroy(control_stream_);
  }

  agio::backend kind() const override { return backend::gpu; }
  std::string describe() const override {
    return "GPU " + std::to_string(device_) + ": " + props_.name + " (sm_" + std::to_string(props_.major) +
           std::to_string(props_.minor) + ", " + std::to_string(props_.multiProcessorCount) + " SMs)";
  }

  void* allocate_pinned(std::size_t bytes) override {
    void* p = nullptr;
    throw_on_cuda_error(cudaHostAlloc(&p, bytes, cudaHostAllocMapped | cudaHostAllocPortable), "cudaHostAlloc");
    std::memset(p, 0, bytes);
    return p;
  }
  // Pinned and mapped by registering it.
  void* adopt_mapping(void* p, std::size_t bytes) override {
    const cudaError_t registered = cudaHostRegister(p, bytes, cudaHostRegisterMapped | cudaHostRegisterPortable);
    if (registered != cudaSuccess) {
      unmap_host(p, bytes);
      throw_on_cuda_error(registered, "cudaHostRegister");
    }
    std::lock_guard lock(deferred_mutex_);
    mapped_blocks_.emplace_back(p, bytes);
    return p;
  }
  // cudaFreeHost (and cudaHostUnregister) wait for every kernel on the device, the completion
  // service included, so pinned memory given back while the service runs is freed once it has
  // stopped.
  void free_pinned(void* p) override {
    if (service_running_) {
      std::lock_guard lock(deferred_mutex_);
      deferred_pinned_.push_back(p);
    } else {
      std::lock_guard lock(deferred_mutex_);
      release_pinned(p);
    }
  }
  // Stream-ordered allocation: cudaMalloc/cudaFree would wait for the running service.
  void* allocate_device(std::size_t bytes) override {
    void* p = nullptr;
    throw_on_cuda_error(cudaMallocAsync(&p, bytes, control_stream_), "cudaMallocAsync");
    throw_on_cuda_error(cudaMemsetAsync(p, 0, bytes, control_stream_), "cudaMemset");
    throw_on_cuda_error(cudaStreamSynchronize(control_stream_), "cudaMemset");
    return p;
  }
  void free_device(void* p) override {
    cudaFreeAsync(p, control_stream_);
    cudaStreamSynchronize(control_stream_);
  }
  void copy_to_device(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override { copy(dst, src, bytes); }

  proxy::region_kind classify(const void* p) override {
    cudaPointerAttributes attr{};
    if (cudaPointerGetAttributes(&attr, p) != cudaSuccess) {
      cudaGetLastError();  // unregistered host memory reports an error on some drivers
      return proxy::region_kind::host;
    }
    return attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged ? proxy::region_kind::device
                                                                                   : proxy::region_kind::host;
  }

  std::uint32_t default_service_workers(std::uint32_t queue_pairs) const override {
    return std::min<std::uint32_t>(queue_pairs, 64);
  }

  void reserve_thread_stack(std::size_t bytes) override {
    std::size_t current = 0;
    throw_on_cuda_error(cudaDeviceGetLimit(&current, cudaLimitStackSize), "cudaDeviceGetLimit (stack)");
    if (bytes > current)
      throw_on_cuda_error(cudaDeviceSetLimit(cudaLimitStackSize, bytes), "cudaDeviceSetLimit (stack)");
  }

  void set_up_device_printf_and_heap() override {
    // Once per GPU and process: a second runtime's launch would wait for the first one's service.
    static std::mutex mutex;
    static std::vector<int> set_up;
    const std::lock_guard lock(mutex);
    if (std::find(set_up.begin(), set_up.end(), device_) != set_up.end()) return;
    printf_and_heap_kernel<<<1, 1, 0, control_stream_>>>(0);
    throw_on_cuda_error(cudaGetLastError(), "launching the printf and heap set-up kernel");
    throw_on_cuda_error(cudaStreamSynchronize(control_stream_), "the printf and heap set-up kernel");
    set_up.push_back(device_);
  }

  // Generations queue on the service stream, so a later one begins once the one before ended.
  void start_service(const io::io_state& io, std::uint32_t workers, std::uint32_t generation) override {
    // Staging areas need bulk copies (sm_90) and are only worth their shared memory to a
    // service that retires all along (with waiters retiring, it only drains at stop).
    const bool staged = props_.major >= 9 && io.retired_by == io::retirement::by_service;
    const service_layout layout{service::retiring_workers(io, workers), io.posted.count,
                                staged ? io.service_staging_slots : 0};
    const std::size_t staging =
        std::size_t{layout.retiring_per_block()} * detail::warp::bulk_staging::bytes_for(layout.staging_slots);
    if (staging > 48 * 1024) {
      const std::string what = "asking for " + std::to_string(staging) +
                               " bytes of shared memory a completion service block (runtime_options::"
                               "service_staging_bytes for each of its " +
                               std::to_string(layout.retiring_per_block()) + " retiring warps)";
      throw_on_cuda_error(
          cudaFuncSetAttribute(service_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(staging)),
          what.c_str());
    }
    service_kernel<<<layout.blocks(), service_block_threads, staging, service_stream_>>>(io, layout, generation);
    throw_on_cuda_error(cudaGetLastError(), "launching the completion service");
    service_running_ = true;
  }

  bool join_service(std::uint32_t timeout_ms) override {
    const auto limit = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    for (;;) {
      const cudaError_t state = cudaStreamQuery(service_stream_);
      if (state == cudaSuccess) {
        service_running_ = false;
        release_deferred();
        return true;
      }
      if (state != cudaErrorNotReady) {
        service_running_ = false;
        throw_on_cuda_error(state, "completion service kernel");
      }
      if (std::chrono::steady_clock::now() >= limit) return false;
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }

  void call_after_stream(void* stream, void (*fn)(void*), void* arg) override {
    throw_on_cuda_error(cudaLaunchHostFunc(static_cast<cudaStream_t>(stream), fn, arg), "cudaLaunchHostFunc");
  }

  std::unique_ptr<proxy::copy_engine> make_copy_engine() override {
    return std::make_unique<cuda_copy_engine>(device_);
  }

 private:
  void release_deferred() {
    std::lock_guard lock(deferred_mutex_);
    for (void* p : deferred_pinned_) release_pinned(p);
    deferred_pinned_.clear();
  }
  // With deferred_mutex_ held.
  void release_pinned(void* p) {
    const auto it =
        std::find_if(mapped_blocks_.begin(), mapped_blocks_.end(), [p](const auto& b) { return b.first == p; });
    if (it == mapped_blocks_.end()) {
      cudaFreeHost(p);
      return;
    }
    cudaHostUnregister(p);
    unmap_host(p, it->second);
    mapped_blocks_.erase(it);
  }

  void copy(void* dst, const void* src, std::size_t bytes) {
    // A stream of our own that never waits for user kernels or the service.
    throw_on_cuda_error(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, control_stream_), "cudaMemcpyAsync");
    throw_on_cuda_error(cudaStreamSynchronize(control_stream_), "cudaMemcpyAsync");
  }

  int device_;
  cudaDeviceProp props_{};
  cudaStream_t service_stream_{};
  cudaStream_t control_stream_{};
  bool service_running_ = false;
  std::mutex deferred_mutex_;
  std::vector<void*> deferred_pinned_;
  std::vector<std::pair<void*, std::size_t>> mapped_blocks_;  // from adopt_mapping
};

// The completion service is a kernel that runs as long as the runtime. With CUDA's lazy module
// loading (the default since CUDA 12) the first launch of any other kernel loads its module,
// and that load waits for running kernels: it would wait for the service forever (seen on an
// H100: a kernel launched on another stream never started until the service ended). Eager
// loading loads every kernel when CUDA starts. The on-demand service runs only while a job
// does, yet with CUDA up lazy an on-demand gather through a small cache still hung on the H200
// VM (where is not known), so lazy loading is refused in every mode.
void require_eager_module_loading() {
  if (std::getenv("CUDA_MODULE_LOADING") == nullptr) setenv("CUDA_MODULE_LOADING", "EAGER", 0);
}

void check_module_loading_mode() {
  using get_mode_fn = CUresult (*)(CUmoduleLoadingMode*);
  void* entry = nullptr;
  cudaDriverEntryPointQueryResult found{};
  if (cudaGetDriverEntryPointByVersion("cuModuleGetLoadingMode", &entry, 11070, cudaEnableDefault, &found) !=
          cudaSuccess ||
      found != cudaDriverEntryPointSuccess) {
    cudaGetLastError();
    return;  // drivers before CUDA 11.7 have no lazy loading
  }
  CUmoduleLoadingMode mode{};
  if (reinterpret_cast<get_mode_fn>(entry)(&mode) == CUDA_SUCCESS && mode == CU_MODULE_LAZY_LOADING) {
    throw std::runtime_error(
        "agio: CUDA lazy module loading is on, so kernels launched while agio's completion service runs "
        "would wait for it forever. Set CUDA_MODULE_LOADING=EAGER in the environment, or create the "
        "agio runtime before any other CUDA call in the process.");
  }
}

// Why cudaGetDeviceCount found no GPU, in the user's terms: without a driver the runtime says
// "CUDA driver version is insufficient for CUDA runtime version", which reads like an upgrade hint.
std::string no_gpu_reason(cudaError_t e) {
  const auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
  if (e == cudaErrorInsufficientDriver) {
    int driver = 0;
    if (cudaDriverGetVersion(&driver) != cudaSuccess || driver == 0) return "no GPU: no NVIDIA driver is installed";
    return "no usable GPU: the NVIDIA driver supports CUDA " + version(driver) + ", this build needs CUDA " +
           version(CUDART_VERSION) + " or newer";
  }
  if (e == cudaErrorNoDevice || e == cudaSuccess) return "no GPU found";
  return std::string("no usable GPU: ") + cudaGetErrorString(e);
}

}  // namespace

std::vector<gpu_memory> gpu_memories() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    return {};
  }
  int current = 0;
  throw_on_cuda_error(cudaGetDevice(&current), "cudaGetDevice");
  std::vector<gpu_memory> gpus;
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp props{};
    throw_on_cuda_error(cudaGetDeviceProperties(&props, d), "cudaGetDeviceProperties");
    std::size_t free_bytes = 0;
    std::size_t total_bytes = 0;
    throw_on_cuda_error(cudaSetDevice(d), "cudaSetDevice");
    const cudaError_t read = cudaMemGetInfo(&free_bytes, &total_bytes);
    cudaSetDevice(current);
    throw_on_cuda_error(read, "cudaMemGetInfo");
    gpus.push_back({d, props.name, total_bytes, free_bytes});
  }
  return gpus;
}

std::unique_ptr<runtime::platform> make_gpu_platform(std::string& why_not) {
  require_eager_module_loading();
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess || count == 0) {
    cudaGetLastError();
    why_not = no_gpu_reason(e);
    return nullptr;
  }
  check_module_loading_mode();
  int device = 0;
  throw_on_cuda_error(cudaGetDevice(&device), "cudaGetDevice");
  return std::make_unique<gpu_platform>(device);
}

}  // namespace agio
