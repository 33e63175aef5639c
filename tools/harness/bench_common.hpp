#pragma once
// Pieces shared by the benchmarks: the data pattern, runtime setup, writing data into a
// store, copies between host vectors and device memory, and finishing a run (timing is in
// harness/timing.hpp). Compiled by nvcc or the host compiler like the benchmarks that use it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "agio/portable.hpp"
#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "agio/store/store_uri.hpp"
#include "harness/backend_option.hpp"
#include "harness/json.hpp"
#include "harness/mix.hpp"
#include "harness/options.hpp"
#include "harness/registers.hpp"
#include "harness/transfer_job.hpp"
#include "harness/timing.hpp"

namespace agio::bench {

// Word i of the pattern a store is filled with: any access can be checked against it.
AGIO_HD inline std::uint32_t pattern_word(std::uint64_t i) { return static_cast<std::uint32_t>(mix64(i + 1)); }

// Threads that act like the lanes of one warp: 32 on the GPU, 1 on CPU threads.
AGIO_HD constexpr std::uint32_t warp_lanes() { return portable::on_device() ? 32 : 1; }

inline constexpr std::uint32_t block_bytes = 4096;  // store LBA = cache line = 4 KiB

// Blocks that `bytes` take, the last one perhaps partly.
constexpr std::uint64_t blocks_of(std::uint64_t bytes) { return (bytes + block_bytes - 1) / block_bytes; }

// A ram: store of at least `bytes` (whole MiB), with 4 KiB blocks.
inline std::string ram_uri(std::uint64_t bytes) {
  return "ram:" + std::to_string(std::max<std::uint64_t>(1, (bytes + (1u << 20) - 1) >> 20)) + "M?lba=4096";
}

// The benchmarks' runtime settings: two-minute deadlines, so that a slow store fails loudly
// rather than hangs, and no limit hit by a large cold run.
inline runtime_options bench_runtime_options(backend want) {
  runtime_options opt;
  opt.backend = want;
  opt.wait_timeout_ms = 120'000;
  opt.submit_timeout_ms = 120'000;
  return opt;
}

inline std::unique_ptr<runtime> start_runtime(const runtime_options& opt, const std::string& uri) {
  auto rt = std::make_unique<runtime>(opt);
  const bool gpu = opt.backend != backend::cpu;  // a GPU runtime wants many queues for its many threads
  rt->attach(device_options{uri, gpu ? 32u : 4u, gpu ? 256u : 64u});
  rt->start();
  return rt;
}
inline std::unique_ptr<runtime> start_runtime(backend want, const std::string& uri) {
  return start_runtime(bench_runtime_options(want), uri);
}

// What figures measured on the store at `uri` are, for results to say beside them: a `ram:`
// store is emulation (of an SSD when it has a profile), a `file:` store real I/O.
inline std::string store_kind(const std::string& uri) {
  const store_spec spec = parse_store_uri(uri);
  if (spec.what == store_spec::kind::file) return "file: store: real I/O on this machine's storage";
  return spec.options.profile.any() ? "ram: store with an SSD profile: emulated SSD"
                                    : "ram: store: emulated storage in host RAM";
}

inline bool on_gpu(const runtime& rt) { return rt.backend() == backend::gpu; }

// Commands the runtime's devices have been sent so far, all devices together.
inline std::uint64_t store_commands(const runtime& rt) {
  std::uint64_t n = 0;
  for (const device_counters& d : rt.counters()) n += d.submitted;
  return n;
}

// Writes `bytes` (rounded up to whole blocks, zero padded) to device `dev` from block
// `first_block` on; gen(offset, dst, n) produces the bytes [offset, offset + n).
template <class Gen>
void write_store(runtime& rt, std::uint64_t first_block, std::uint64_t bytes, Gen&& gen, std::uint32_t dev = 0) {
  const std::uint32_t lba = rt.devices()[dev].lba_bytes;
  const std::uint64_t total = blocks_of(bytes) * block_bytes;
  const std::size_t staging_bytes = std::min<std::uint64_t>(total, std::uint64_t{64} << 20);
  auto* staging = static_cast<std::byte*>(rt.allocate_device(staging_bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t)));
  const std::uint32_t zero = 0;
  rt.copy_to_device(failures, &zero, sizeof zero);
  std::vector<std::byte> host(staging_bytes);
  const std::uint32_t chunk = std::max<std::uint32_t>(1, (64u << 10) / lba);  // 64 KiB requests
  for (std::uint64_t done = 0; done < total; done += staging_bytes) {
    const std::size_t n = std::min<std::uint64_t>(staging_bytes, total - done);
    std::fill(host.begin(), host.end(), std::byte{0});
    if (done < bytes) gen(done, host.data(), std::min<std::uint64_t>(n, bytes - done));
    rt.copy_to_device(staging, host.data(), n);
    const std::uint64_t lbas = n / lba;
    const std::uint32_t threads =
        static_cast<std::uint32_t>(std::min<std::uint64_t>((lbas + chunk - 1) / chunk, on_gpu(rt) ? 1024 : 8));
    const std::uint64_t first_lba = (first_block * block_bytes + done) / lba;
    with_io(rt, [&](const auto& io) {
      run_job(rt, threads, range_transfer_job{io, dev, 1u, staging, first_lba, lbas, chunk, failures});
    });
  }
  std::uint32_t failed = 0;
  rt.copy_to_host(&failed, failures, sizeof failed);
  rt.free(staging);
  rt.free(failures);
  rt.check();
  if (failed != 0) throw std::runtime_error("writing the benchmark data to the store failed");
}

// Writes `bytes` of host memory to device 0 from block `first_block` on.
inline void write_array(runtime& rt, std::uint64_t first_block, const void* data, std::uint64_t bytes) {
  write_store(rt, first_block, bytes, [data](std::uint64_t offset, std::byte* dst, std::size_t n) {
    std::memcpy(dst, static_cast<const std::byte*>(data) + offset, n);
  });
}

// Fills the first `bytes` of device 0 with the check pattern (word i is pattern_word(i)).
inline void write_pattern(runtime& rt, std::uint64_t bytes) {
  std::fprintf(stderr, "filling %s with the check pattern...\n", rt.devices()[0].uri.c_str());
  write_store(rt, 0, bytes, [](std::uint64_t offset, std::byte* dst, std::size_t n) {
    const std::uint64_t first_word = offset / sizeof(std::uint32_t);
    for (std::size_t w = 0; w < n / sizeof(std::uint32_t); ++w) {
      const std::uint32_t v = pattern_word(first_word + w);
      std::memcpy(dst + w * sizeof v, &v, sizeof v);
    }
  });
}

// Copies a host vector into new device memory (rt.free it).
template <class T>
T* to_device(runtime& rt, const std::vector<T>& v) {
  auto* p = static_cast<T*>(rt.allocate_device(std::max<std::size_t>(1, v.size()) * sizeof(T)));
  if (!v.empty()) rt.copy_to_device(p, v.data(), v.size() * sizeof(T));
  return p;
}
template <class T>
std::vector<T> to_host(runtime& rt, const T* p, std::size_t n) {
  std::vector<T> v(n);
  if (n != 0) rt.copy_to_host(v.data(), p, n * sizeof(T));
  return v;
}

// Stops the runtime, writes the results and says where; the exit status says whether every
// result matched its host reference.
inline int finish(const result_document& doc, runtime& rt, const std::string& out_path, bool verified,
                  const char* complaint) {
  rt.stop();
  doc.save(out_path);
  std::printf("device: %s\nresults: %s\n", rt.describe().c_str(), out_path.c_str());
  if (!verified) std::fprintf(stderr, "%s\n", complaint);
  return verified ? 0 : 1;
}

}  // namespace agio::bench
