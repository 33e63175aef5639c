// Throwaway probe: where a hit through the array view spends its time. A whole-vector cache is
// filled by hand (tags, words, data copied in; no agio kernel runs, so ncu can serialize), then
// the vector mean runs natively, through the library's array view, and through minimal hand
// written hit paths that drop parts of the protocol (variants below; *unsafe* ones only price).
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "agio/agio.hpp"
#include "agio/cache/array_view.hpp"
#include "agio/cache/policies/clock.hpp"
#include "agio/runtime/software_cache.hpp"

using namespace agio;
using policy = cache::clock;
using cache_type = software_cache<policy>;
using handle = cache_type::handle;
using view = cache::array_view<float, policy>;
namespace d = agio::detail;

#define CK(x)                                              \
  do {                                                     \
    cudaError_t e_ = (x);                                  \
    if (e_ != cudaSuccess) {                               \
      std::printf("%s: %s\n", #x, cudaGetErrorString(e_)); \
      std::exit(1);                                        \
    }                                                      \
  } while (0)

constexpr std::uint32_t line_bytes = 4096, per_line = 1024;

__global__ void native_mean(const float* x, std::uint64_t n, double* partial) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
  double s = 0;
  for (std::uint64_t i = t; i < n; i += threads) s += x[i];
  partial[t] = s;
}

__global__ void view_mean(view v, std::uint64_t n, double* partial) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
  double s = 0;
  for (std::uint64_t i = t; i < n; i += threads) {
    float x = 0;
    (void)v.get(0, i, x);
    s += x;
  }
  partial[t] = s;
}

// The library's view with a hit-only fast path in front: the group's leader tries
// acquire_present (find, pin, tag check, policy hit, hit counted); on anything but a pinned
// line the group falls back to the view's full access.
__global__ void fast_view_mean(view v, std::uint64_t n, double* partial) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
  double s = 0;
  for (std::uint64_t i = t; i < n; i += threads) {
    float x = 0;
    std::uint64_t block = 0;
    (void)cache::block_of_element<float>(v.cache.state, i, block);
    const std::uint64_t offset = i - block * cache::elements_per_line<float>(v.cache.state);
    const d::warp::lane_group group = d::warp::group_by(cache::block_tag(0, block), v.cache.cache_id());
    std::uint32_t line = cache::no_line;
    if (d::warp::leads(group) && v.cache.acquire_present(0, block, line) != handle::presence::pinned)
      line = cache::no_line;
    line = d::warp::from_leader(group, line);
    if (line != cache::no_line) {
      d::warp::sync(group);
      x = reinterpret_cast<const float*>(v.cache.line_data(line))[offset];
      d::warp::sync(group);
      if (d::warp::leads(group)) {
        v.cache.unpin(line);
        const std::uint32_t lanes = d::warp::count(group.mask);
        if (lanes != 1) cache::count_event(v.cache.state, &cache::cache_counters::coalesced_in_warp, lanes - 1);
      }
    } else {
      (void)v.get(0, i, x);
    }
    s += x;
  }
  partial[t] = s;
}

// Variants of a minimal hit path (every access hits; a miss would trap):
//  0 pin acquire, tag re-check + clock bit, unpin release, hit counter   (the view's protocol)
//  1 as 0 without the counter
//  2 as 1, pin relaxed and unpin relaxed                                  *unsafe*
//  3 as 1, the lanes' data load issued beside the leader's tag re-check
//  4 tag search and data load only, no pin                                *unsafe* (the floor)
//  5 as 1, one 64-bit match instead of two, and no deadline read          (same as 1 here)
//  6 as 3, unpin relaxed after a __syncwarp only                          *unsafe*
template <int V>
__global__ void minimal_mean(handle h, std::uint64_t n, double* partial) {
  const std::uint32_t t = blockIdx.x * blockDim.x + threadIdx.x, threads = gridDim.x * blockDim.x;
  const cache::cache_state& c = h.state;
  double s = 0;
  for (std::uint64_t i = t; i < n; i += threads) {
    const std::uint64_t block = i / per_line, offset = i % per_line;
    const std::uint64_t tag = cache::block_tag(0, block);
    const std::uint32_t active = __activemask();
    const std::uint32_t mask = __match_any_sync(active, tag);
    const int leader = __ffs(mask) - 1;
    const bool leads = (threadIdx.x & 31) == static_cast<unsigned>(leader);
    std::uint32_t line = 0;
    if (leads) {
      const std::uint32_t first = h.policy.set_of(c, tag) * 8;
      std::uint32_t found = cache::no_line;
#pragma unroll
      for (std::uint32_t k = 0; k < 8; ++k)
        if (d::load<d::scope::device>(c.tags[first + k], d::relaxed) == tag) found = first + k;
      if (found == cache::no_line) __trap();
      line = found;
      if constexpr (V != 4) {
        const std::uint32_t w =
            d::fetch_add<d::scope::device>(c.words[found], cache::pin_unit, V == 2 ? d::relaxed : d::acquire);
        if (!cache::holds_data(cache::state_of(w))) __trap();
        if constexpr (V != 3 && V != 6) {
          if (d::load<d::scope::device>(c.tags[found], d::relaxed) != tag) __trap();
          h.policy.on_hit(c, found);
        }
        if constexpr (V == 0) cache::count_event(c, &cache::cache_counters::hits);
      }
    }
    line = __shfl_sync(mask, line, leader);
    __syncwarp(mask);
    const float x = reinterpret_cast<const float*>(c.data + std::uint64_t{line} * line_bytes)[offset];
    if constexpr (V == 3 || V == 6) {
      if (leads) {
        if (d::load<d::scope::device>(c.tags[line], d::relaxed) != tag) __trap();
        h.policy.on_hit(c, line);
      }
    }
    s += x;
    __syncwarp(mask);
    if constexpr (V != 4) {
      if (leads)
        d::fetch_add<d::scope::device>(c.words[line], 0u - cache::pin_unit, V == 2 || V == 6 ? d::relaxed : d::release);
    }
  }
  partial[t] = s;
}

template <class Launch>
double time_ms(cudaStream_t st, Launch&& launch, int reps = 5) {
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    CK(cudaEventRecord(a, st));
    launch();
    CK(cudaEventRecord(b, st));
    CK(cudaEventSynchronize(b));
    float m = 0;
    CK(cudaEventElapsedTime(&m, a, b));
    ms.push_back(m);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::atoi(argv[1]) : 5;
  runtime_options o;
  o.backend = backend::gpu;
  o.completion = completion_mode::on_demand;
  runtime rt(o);
  rt.attach("ram:1024M?lba=4096");
  rt.start();
  const std::uint64_t n = std::uint64_t{128} << 20;  // 512 MiB of floats
  const std::uint64_t blocks = n / per_line;
  cache_type cache(rt, cache_options{blocks * line_bytes, line_bytes, 8});
  const handle& h = cache.device();
  const std::uint32_t lines = cache.line_count();
  std::vector<float> x(n);
  double reference = 0;
  for (std::uint64_t i = 0; i < n; ++i) {
    x[i] = static_cast<float>(i % 13) * 0.25f;
    reference += x[i];
  }
  // Fill by hand: block b into the next free way of its set.
  std::vector<std::uint64_t> tags(lines, cache::no_tag);
  std::vector<std::uint32_t> words(lines, 0), used(lines / 8, 0);
  std::vector<float> data(std::uint64_t{lines} * per_line, 0.f);
  for (std::uint64_t b = 0; b < blocks; ++b) {
    const std::uint64_t tag = cache::block_tag(0, b);
    const std::uint32_t set = h.policy.set_of(h.state, tag);
    if (used[set] == 8) {
      std::printf("set %u full\n", set);
      return 1;
    }
    const std::uint32_t line = set * 8 + used[set]++;
    tags[line] = tag;
    words[line] = cache::line_word(cache::line_ready);
    std::memcpy(&data[std::uint64_t{line} * per_line], &x[b * per_line], line_bytes);
  }
  CK(cudaMemcpy(h.state.tags, tags.data(), lines * 8, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.state.words, words.data(), lines * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(h.state.data, data.data(), std::uint64_t{lines} * line_bytes, cudaMemcpyHostToDevice));
  float* dx = nullptr;
  double* partial = nullptr;
  const std::uint32_t threads = 1024 * 256;
  CK(cudaMalloc(&dx, n * 4));
  CK(cudaMalloc(&partial, threads * 8));
  CK(cudaMemcpy(dx, x.data(), n * 4, cudaMemcpyHostToDevice));
  cudaStream_t st;
  CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
  const view v = cache.array<float>();
  std::vector<double> p(threads);
  auto check = [&](const char* name, double ms, double native) {
    CK(cudaMemcpy(p.data(), partial, threads * 8, cudaMemcpyDeviceToHost));
    double sum = 0;
    for (double q : p) sum += q;
    const bool ok = std::abs(sum - reference) <= 1e-6 * (reference + n);
    std::printf("%-34s %8.3f ms  %6.2fx native  %s\n", name, ms, native > 0 ? ms / native : 1.0,
                ok ? "ok" : "WRONG SUM");
  };
  cudaFuncAttributes fa;
  auto regs = [&](const void* f) {
    CK(cudaFuncGetAttributes(&fa, f));
    return fa.numRegs;
  };
  std::printf("registers: native %d view %d fast_view %d min0 %d min4 %d\n", regs((const void*)native_mean),
              regs((const void*)view_mean), regs((const void*)fast_view_mean), regs((const void*)minimal_mean<0>),
              regs((const void*)minimal_mean<4>));
  for (int round = 0; round < 3; ++round) {
    const double native = time_ms(
        st, [&] { native_mean<<<1024, 256, 0, st>>>(dx, n, partial); }, reps);
    check("native", native, 0);
    check("view (library)",
          time_ms(
              st, [&] { view_mean<<<1024, 256, 0, st>>>(v, n, partial); }, reps),
          native);
    check("view, hit-only fast path first",
          time_ms(
              st, [&] { fast_view_mean<<<1024, 256, 0, st>>>(v, n, partial); }, reps),
          native);
    check("min0 acq pin, rel unpin, counter",
          time_ms(
              st, [&] { minimal_mean<0><<<1024, 256, 0, st>>>(h, n, partial); }, reps),
          native);
    check("min4 no pin (unsafe floor)",
          time_ms(
              st, [&] { minimal_mean<4><<<1024, 256, 0, st>>>(h, n, partial); }, reps),
          native);
  }
  CK(cudaStreamSynchronize(st));
  return 0;
}
