// A GPU kernel reading storage through agio: each thread starts a read of one block of a file
// into GPU memory, can work while it is in flight, waits, then checks the block. Shows the two
// rules every program using agio on a GPU follows (numbered below).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include <cuda_runtime.h>

#include <agio/agio.hpp>

namespace {

constexpr std::uint32_t block_bytes = 4096;  // the store's LBA size (?lba=4096)
constexpr std::uint32_t blocks = 4096;       // a 16 MiB file

void check_cuda(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(e));
}

// A file whose block b holds b in each 8-byte word.
void write_file(const std::string& path) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  std::vector<std::uint64_t> block(block_bytes / 8);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    for (auto& word : block) word = b;
    f.write(reinterpret_cast<const char*>(block.data()), block_bytes);
  }
  if (!f.flush()) throw std::runtime_error("cannot write " + path);
}

// Removes the example's file however main ends.
struct removed_at_exit {
  std::string path;
  ~removed_at_exit() {
    std::error_code e;
    if (!std::filesystem::remove(path, e) && e)
      std::fprintf(stderr, "cannot remove %s: %s\n", path.c_str(), e.message().c_str());
  }
};

}  // namespace

// Thread i reads block rows[i] into out[i] and checks it.
__global__ void gather(agio::io_handle io, std::uint32_t dev, const std::uint64_t* rows, std::byte* out,
                       std::uint32_t n, std::uint32_t* failed, std::uint32_t* wrong) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  std::byte* block = out + std::size_t{i} * block_bytes;
  const agio::transaction t = io.async_read(dev, rows[i], 1, block);  // returns at once
  // ... work that does not need the block goes here, while the read is in flight ...
  const agio::status s = io.wait(t);  // success, NVMe error, deadline passed or runtime stopped
  if (!s.ok()) {
    atomicAdd(failed, 1u);  // s.result and s.nvme_status say why; rt.check() names device and LBA
    return;
  }
  const auto* words = reinterpret_cast<const std::uint64_t*>(block);
  for (std::uint32_t w = 0; w < block_bytes / 8; ++w) {
    if (words[w] != rows[i]) {
      atomicAdd(wrong, 1u);
      return;
    }
  }
}

int main() try {
  // Rule 1: create the runtime before any other CUDA call in the process. Its completion service
  // is a kernel that runs until stop(), and CUDA must load every kernel eagerly for yours to run
  // beside it: the runtime arranges that when it starts CUDA, and refuses to start if CUDA came
  // up earlier in lazy mode (or set CUDA_MODULE_LOADING=EAGER in the environment).
  agio::runtime_options options;
  options.backend = agio::backend::gpu;  // insist on the GPU; the default falls back to CPU threads
  agio::runtime rt(options);

  const std::string path = (std::filesystem::temp_directory_path() / "agio-gpu-kernel-example.bin").string();
  const removed_at_exit cleanup{path};
  write_file(path);
  std::printf("agio on %s, reading %u blocks of %s (removed at the end)\n", rt.describe().c_str(), blocks,
              path.c_str());
  const std::uint32_t dev = rt.attach("file:" + path + "?lba=4096");
  rt.start();

  // The kernel's I/O buffer comes from the runtime, which registers it for I/O.
  auto* out = static_cast<std::byte*>(rt.allocate_device(std::size_t{blocks} * block_bytes));

  // Rule 2: launch on a stream created with cudaStreamNonBlocking, as agio's own launches do. The
  // legacy default stream (0) is ordered against every blocking stream of the process, so a
  // kernel there waiting on storage holds up unrelated launches and copies. Synchronize that
  // stream, never the whole device: cudaDeviceSynchronize waits for every kernel, the completion
  // service included, which runs until rt.stop(); so do cudaFree and cudaFreeHost.
  cudaStream_t stream;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

  std::vector<std::uint64_t> rows(blocks);
  for (std::uint32_t i = 0; i < blocks; ++i) rows[i] = (std::uint64_t{i} * 2654435761u) % blocks;  // scattered
  std::uint64_t* device_rows = nullptr;
  std::uint32_t* counts = nullptr;  // failed, wrong
  check_cuda(cudaMallocAsync(&device_rows, blocks * sizeof(std::uint64_t), stream), "cudaMallocAsync");
  check_cuda(cudaMallocAsync(&counts, 2 * sizeof(std::uint32_t), stream), "cudaMallocAsync");
  check_cuda(cudaMemcpyAsync(device_rows, rows.data(), blocks * sizeof(std::uint64_t), cudaMemcpyHostToDevice, stream),
             "cudaMemcpyAsync");
  check_cuda(cudaMemsetAsync(counts, 0, 2 * sizeof(std::uint32_t), stream), "cudaMemsetAsync");

  gather<<<(blocks + 255) / 256, 256, 0, stream>>>(rt.io(), dev, device_rows, out, blocks, counts, counts + 1);
  check_cuda(cudaGetLastError(), "launching gather");
  std::uint32_t host_counts[2] = {};
  check_cuda(cudaMemcpyAsync(host_counts, counts, sizeof(host_counts), cudaMemcpyDeviceToHost, stream),
             "cudaMemcpyAsync");
  check_cuda(cudaFreeAsync(device_rows, stream), "cudaFreeAsync");  // stream-ordered: does not wait for the service
  check_cuda(cudaFreeAsync(counts, stream), "cudaFreeAsync");
  check_cuda(cudaStreamSynchronize(stream), "gather");  // this stream only

  rt.check();  // throws agio::io_error naming device, LBA and cause if a request failed
  rt.free(out);
  rt.stop();  // lets requests in flight finish; the device may be synchronized again from here
  check_cuda(cudaStreamDestroy(stream), "cudaStreamDestroy");
  std::printf("read %u blocks from GPU threads: %u failed requests, %u wrong blocks\n", blocks, host_counts[0],
              host_counts[1]);
  return host_counts[0] == 0 && host_counts[1] == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "gpu_kernel: %s\n", e.what());
  return 1;
}
