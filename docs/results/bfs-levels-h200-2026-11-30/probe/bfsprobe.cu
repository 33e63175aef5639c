// Throwaway probe: where a BFS step through array readers spends its time on a preloaded cache.
// The column array of a uniform graph (4 M vertices, degree 16) is put in a cache filled by
// hand (no kernel of agio's runs, so ncu can serialize); every vertex is in the frontier and
// already visited, so the step reads all edges and writes nothing. The evaluation's bfs_job,
// natively and through cached_source.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

#include <cuda_runtime.h>

#include "agio/agio.hpp"
#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"
#include "graph/kernels.hpp"

using namespace agio;
using policy = cache::clock;
using cache_type = software_cache<policy>;
namespace g = agio::bench::graph;

void ck(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::printf("%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

template <class Job>
__global__ void run(Job job, std::uint32_t threads) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t < threads) job(t, threads);
}

constexpr std::uint32_t line_bytes = 4096, per_line = 1024;

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  runtime_options o;
  o.backend = backend::gpu;
  o.completion = completion_mode::on_demand;
  runtime rt(o);
  rt.attach("ram:1024M?lba=4096");
  rt.start();
  const std::uint32_t n = 4u << 20, degree = 16;
  const std::uint64_t edges = std::uint64_t{n} * degree, blocks = edges / per_line;
  std::vector<std::uint32_t> col(edges);
  std::uint64_t x = 88172645463325252ull;
  for (auto& c : col) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    c = static_cast<std::uint32_t>(x % n);
  }
  std::vector<std::uint64_t> row(n + 1);
  for (std::uint32_t v = 0; v <= n; ++v) row[v] = std::uint64_t{v} * degree;
  cache_type cache(rt, cache_options{blocks * line_bytes, line_bytes, 8});
  const auto& h = cache.device();
  const std::uint32_t lines = cache.line_count();
  std::vector<std::uint64_t> tags(lines, cache::no_tag);
  std::vector<std::uint32_t> words(lines, 0), used(lines / 8, 0), data(std::uint64_t{lines} * per_line, 0);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t tag = cache::block_tag(0, b);
    const std::uint32_t set = h.policy.set_of(h.state, tag);
    if (used[set] == 8) return std::printf("set %u full\n", set), 1;
    const std::uint32_t line = set * 8 + used[set]++;
    tags[line] = tag;
    words[line] = cache::line_word(cache::line_ready);
    std::memcpy(&data[std::uint64_t{line} * per_line], &col[b * per_line], line_bytes);
  }
  ck(cudaMemcpy(h.state.tags, tags.data(), lines * 8ull, cudaMemcpyHostToDevice), "tags");
  ck(cudaMemcpy(h.state.words, words.data(), lines * 4ull, cudaMemcpyHostToDevice), "words");
  ck(cudaMemcpy(h.state.data, data.data(), std::uint64_t{lines} * line_bytes, cudaMemcpyHostToDevice), "data");
  std::uint32_t *dcol, *levels, *changed;
  std::uint64_t* drow;
  ck(cudaMalloc(&dcol, edges * 4), "malloc");
  ck(cudaMalloc(&drow, (n + 1) * 8ull), "malloc");
  ck(cudaMalloc(&levels, n * 4ull), "malloc");
  ck(cudaMalloc(&changed, 4), "malloc");
  ck(cudaMemcpy(dcol, col.data(), edges * 4, cudaMemcpyHostToDevice), "col");
  ck(cudaMemcpy(drow, row.data(), (n + 1) * 8ull, cudaMemcpyHostToDevice), "row");
  ck(cudaMemset(levels, 0, n * 4ull), "levels");  // all at level 0: every vertex walked, none marked
  ck(cudaMemset(changed, 0, 4), "changed");
  cudaStream_t st;
  ck(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "stream");
  const std::uint32_t threads = 1024 * 256;
  using native_job = g::bfs_job<g::native_source<std::uint32_t>, false>;
  using cached_job = g::bfs_job<g::cached_source<std::uint32_t, policy>, false>;
  const native_job native{{dcol}, drow, levels, changed, n, 0};
  const cached_job cached{{cache.array<std::uint32_t>(), 0}, drow, levels, changed, n, 0};
  auto time_ms = [&](auto launch) {
    cudaEvent_t a, b;
    ck(cudaEventCreate(&a), "event");
    ck(cudaEventCreate(&b), "event");
    std::vector<float> ms;
    for (int r = 0; r < reps; ++r) {
      ck(cudaEventRecord(a, st), "record");
      launch();
      ck(cudaEventRecord(b, st), "record");
      ck(cudaEventSynchronize(b), "sync");
      float m = 0;
      ck(cudaEventElapsedTime(&m, a, b), "elapsed");
      ms.push_back(m);
    }
    std::sort(ms.begin(), ms.end());
    return static_cast<double>(ms[ms.size() / 2]);
  };
  cudaFuncAttributes fa;
  ck(cudaFuncGetAttributes(&fa, run<native_job>), "attr");
  const int native_regs = fa.numRegs;
  ck(cudaFuncGetAttributes(&fa, run<cached_job>), "attr");
  std::printf("registers: native %d cached %d\n", native_regs, fa.numRegs);
  // Frontiers of every vertex, and of one vertex in 8 and in 64 (picked by a hash; the others
  // at level 1, visited and not walked): in a sparse frontier a walking lane reads alone.
  const int every = argc > 2 ? std::atoi(argv[2]) : 0;
  for (const std::uint32_t share : {1u, 8u, 64u}) {
    if (every != 0 && share != static_cast<std::uint32_t>(every)) continue;
    std::vector<std::uint32_t> lv(n);
    for (std::uint32_t v = 0; v < n; ++v) lv[v] = (v * 2654435761u >> 7) % share == 0 ? 0 : 1;
    ck(cudaMemcpy(levels, lv.data(), n * 4ull, cudaMemcpyHostToDevice), "levels");
    for (int round = 0; round < 3; ++round) {
      const double a = time_ms([&] { run<<<1024, 256, 0, st>>>(native, threads); });
      const double b = time_ms([&] { run<<<1024, 256, 0, st>>>(cached, threads); });
      std::uint32_t c = 1;
      ck(cudaMemcpy(&c, changed, 4, cudaMemcpyDeviceToHost), "changed");
      std::printf("bfs step, 1 vertex in %u walked: native %.3f ms, through the cache %.3f ms (%.2fx)%s\n", share, a, b,
                  b / a, c == 0 ? "" : " MARKED SOMETHING");
    }
  }
  return 0;
}
