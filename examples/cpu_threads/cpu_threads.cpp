// agio on CPU threads: a store in RAM, blocks written by std::threads through the I/O handle,
// read back in another order by other threads, verified. The same handle calls work in a GPU
// kernel (examples/gpu_kernel).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <thread>
#include <vector>

#include <agio/agio.hpp>

namespace {

constexpr std::uint32_t block_bytes = 4096;  // the store's LBA size (?lba=4096)
constexpr std::uint32_t blocks = 1024;       // 4 MiB
constexpr std::uint32_t threads = 8;

// Every block holds its own index in each 8-byte word, so a block read from the wrong place shows.
void fill(std::byte* block, std::uint64_t index) {
  for (std::uint32_t i = 0; i < block_bytes; i += 8) std::memcpy(block + i, &index, 8);
}

bool holds(const std::byte* block, std::uint64_t index) {
  for (std::uint32_t i = 0; i < block_bytes; i += 8) {
    std::uint64_t word = 0;
    std::memcpy(&word, block + i, 8);
    if (word != index) return false;
  }
  return true;
}

// Runs body(t) on `threads` std::threads and waits for them.
template <class Body>
void on_threads(Body body) {
  std::vector<std::thread> pool;
  for (std::uint32_t t = 0; t < threads; ++t) pool.emplace_back(body, t);
  for (auto& thread : pool) thread.join();
}

}  // namespace

int main() try {
  agio::runtime_options options;
  options.backend = agio::backend::cpu;  // CPU threads even where a GPU is present
  agio::runtime rt(options);
  // A store in RAM with 4 KiB blocks; "file:/path/to/file?lba=4096" would use a file instead.
  const std::uint32_t dev = rt.attach("ram:4M?lba=4096");
  rt.start();
  std::printf("agio on %s\n", rt.describe().c_str());

  // I/O buffers come from the runtime, which registers them with the controller.
  auto* source = static_cast<std::byte*>(rt.allocate_device(blocks * block_bytes));
  auto* back = static_cast<std::byte*>(rt.allocate_device(blocks * block_bytes));
  for (std::uint32_t b = 0; b < blocks; ++b) fill(source + std::size_t{b} * block_bytes, b);

  const agio::io_handle& io = rt.io();  // the I/O handle; the same calls work in a GPU kernel
  std::vector<int> failures(threads, 0);

  // Writes: thread t takes blocks t, t + threads, ...; it submits all of them, then waits on
  // each (async_write returns at once; every transaction is waited on).
  on_threads([&](std::uint32_t t) {
    std::vector<agio::transaction> pending;
    for (std::uint32_t b = t; b < blocks; b += threads) {
      pending.push_back(io.async_write(dev, b, 1, source + std::size_t{b} * block_bytes));
    }
    for (const agio::transaction& tx : pending) {
      const agio::status s = io.wait(tx);  // success, NVMe error, deadline passed or stopped
      if (!s.ok()) {
        std::fprintf(stderr, "write failed: %s (NVMe status 0x%x)\n", agio::describe(s.result), s.nvme_status);
        ++failures[t];
      }
    }
  });

  // Reads, in another order: thread t reads a contiguous run of blocks, 8 blocks per request.
  on_threads([&](std::uint32_t t) {
    const std::uint32_t per_thread = blocks / threads;
    for (std::uint32_t b = t * per_thread; b < (t + 1) * per_thread; b += 8) {
      const agio::status s = io.read(dev, b, 8, back + std::size_t{b} * block_bytes);  // async_read + wait
      if (!s.ok()) {
        std::fprintf(stderr, "read failed: %s (NVMe status 0x%x)\n", agio::describe(s.result), s.nvme_status);
        ++failures[t];
      }
    }
  });

  int wrong = 0;
  for (std::uint32_t b = 0; b < blocks; ++b) wrong += holds(back + std::size_t{b} * block_bytes, b) ? 0 : 1;
  int failed = 0;
  for (int f : failures) failed += f;

  rt.check();  // throws agio::io_error naming device, LBA and cause if a request failed
  rt.free(source);
  rt.free(back);
  rt.stop();  // lets requests in flight finish, makes acknowledged writes durable
  std::printf("wrote and read back %u blocks of %u bytes from %u threads: %d failed requests, %d wrong blocks\n",
              blocks, block_bytes, threads, failed, wrong);
  return failed == 0 && wrong == 0 ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "cpu_threads: %s\n", e.what());
  return 1;
}
