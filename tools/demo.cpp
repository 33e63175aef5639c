// The embedded default job: a small ram: store and a small file: store, random data written
// through agio by device threads (GPU threads when a GPU is present, CPU threads otherwise),
// read back in a different order, checksums compared, throughput printed.
#include "demo.hpp"

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <vector>

#include <unistd.h>

#include "agio/runtime/launch.hpp"
#include "agio/runtime/runtime.hpp"
#include "harness/backend_option.hpp"
#include "harness/chunk_job.hpp"
#include "harness/options.hpp"
#include "harness/scoped_file.hpp"

namespace agio::tools {
namespace {

std::uint64_t checksum(const std::byte* p, std::size_t n) {
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a
  for (std::size_t i = 0; i < n; ++i) h = (h ^ static_cast<std::uint64_t>(p[i])) * 1099511628211ull;
  return h;
}

}  // namespace

int demo_main(int argc, char** argv, int first) {
  bench::options opt(argc, argv, first);
  runtime_options ro;
  ro.backend = bench::backend_option(opt);
  const bool quick = opt.flag("quick");
  const double mib_wanted = opt.number("mib", quick ? 4 : 32);
  const std::string dir = opt.get("dir", std::filesystem::temp_directory_path().string());
  opt.reject_unknown();
  if (mib_wanted < 1 || mib_wanted > 2048 || mib_wanted != static_cast<std::uint32_t>(mib_wanted)) {
    throw std::invalid_argument("--mib is a whole number of MiB from 1 to 2048");
  }
  const auto mib = static_cast<std::uint32_t>(mib_wanted);
  const std::uint32_t bytes = mib << 20;
  const std::string file = (std::filesystem::path(dir) / ("agio-demo-" + std::to_string(::getpid()) + ".bin")).string();
  // The file store goes at the end, whether the demo passes, fails or throws.
  const bench::scoped_file cleanup{file};

  runtime rt(ro);
  const std::uint32_t ram_dev = rt.attach(device_options{"ram:" + std::to_string(mib) + "M?lba=4096", 4, 64});
  const std::uint32_t file_dev =
      rt.attach(device_options{"file:" + file + "?create=" + std::to_string(mib) + "M&lba=4096", 4, 64});
  rt.start();
  const bool gpu = rt.backend() == backend::gpu;
  std::printf("agio demo on %s (file: store %s, removed at the end)\n", rt.describe().c_str(), file.c_str());

  std::vector<std::byte> data(bytes);
  std::mt19937_64 rng(2026);
  for (std::size_t i = 0; i < data.size(); i += 8) {
    const std::uint64_t x = rng();
    std::memcpy(data.data() + i, &x, 8);
  }
  const std::uint64_t want = checksum(data.data(), data.size());
  auto* source = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* back = static_cast<std::byte*>(rt.allocate_device(bytes));
  auto* failures = static_cast<std::uint32_t*>(rt.allocate_device(sizeof(std::uint32_t)));
  rt.copy_to_device(source, data.data(), bytes);

  const std::uint32_t chunk = 64 * 1024;
  const std::uint32_t threads = gpu ? 512 : 8;
  int bad = 0;
  for (const auto& [dev, label] :
       {std::pair{ram_dev, "ram: (pinned host RAM)"}, std::pair{file_dev, "file: (real I/O)"}}) {
    const double w = run_job(rt, threads, bench::chunk_job{rt.io(), dev, 1, source, chunk, bytes / chunk, failures});
    const double r = run_job(rt, threads, bench::chunk_job{rt.io(), dev, 0, back, chunk, bytes / chunk, failures});
    std::vector<std::byte> got(bytes);
    rt.copy_to_host(got.data(), back, bytes);
    std::uint32_t failed = 0;
    rt.copy_to_host(&failed, failures, sizeof failed);
    rt.check();
    const std::uint64_t have = checksum(got.data(), got.size());
    const bool ok = have == want && failed == 0;
    bad += ok ? 0 : 1;
    std::printf("  %-24s write %7.2f GB/s  read %7.2f GB/s  checksum %016llx %s\n", label, bytes / w / 1e9,
                bytes / r / 1e9, static_cast<unsigned long long>(have), ok ? "OK" : "MISMATCH");
    const std::uint32_t zero = 0;
    rt.copy_to_device(failures, &zero, sizeof zero);
    std::vector<std::byte> poison(bytes, std::byte{0xa5});
    rt.copy_to_device(back, poison.data(), bytes);
  }
  rt.stop();
  std::printf("%s: %u MiB per store in %u KiB requests from %u %s threads\n", bad ? "FAILED" : "verified", mib,
              chunk / 1024, threads, gpu ? "GPU" : "CPU");
  return bad ? 1 : 0;
}

}  // namespace agio::tools
