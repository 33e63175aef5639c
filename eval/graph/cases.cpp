// The graph cases (cases.hpp): generating, checking and laying out graphs.
#include "graph/cases.hpp"

#include <algorithm>
#include <cstring>
#include <cstdio>
#include <random>
#include <stdexcept>

#include "baselines/managed_memory.hpp"
#include "graph/generate.hpp"

namespace agio::bench::graph {

kernel kernel_named(const std::string& name) {
  if (name == "bfs") return kernel::bfs;
  if (name == "spmv") return kernel::spmv;
  if (name == "cc") return kernel::cc;
  throw std::invalid_argument("unknown kernel '" + name + "' (bfs, spmv, cc)");
}
const char* name_of(kernel k) { return k == kernel::bfs ? "bfs" : k == kernel::spmv ? "spmv" : "cc"; }

namespace {

std::string describe(const std::string& kind, const csr& g, std::uint64_t max_degree) {
  char text[200];
  std::snprintf(text, sizeof text, "%s, %u vertices, %llu edges (mean degree %.1f, max %llu)", kind.c_str(), g.n,
                static_cast<unsigned long long>(g.edges()), static_cast<double>(g.edges()) / g.n,
                static_cast<unsigned long long>(max_degree));
  return text;
}

}  // namespace

graph_case make_case(std::string name, const std::string& kind, csr g, std::uint64_t seed) {
  if (g.edges() == 0) throw std::invalid_argument("graphs: " + name + " has no edges");
  if (g.val.empty()) random_weights(g, seed);
  graph_case c;
  c.name = std::move(name);
  c.g = std::move(g);
  c.source = pick_source(c.g, seed);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1, 1);
  c.x.resize(c.g.n);
  for (float& v : c.x) v = u(rng);
  c.levels = bfs_reference(c.g, c.source);
  c.labels = cc_reference(c.g);
  c.spmv = spmv_reference(c.g, c.x);
  for (std::uint32_t v = 0; v < c.g.n; ++v) c.max_degree = std::max(c.max_degree, c.g.degree(v));
  c.description = describe(kind, c.g, c.max_degree);
  return c;
}

graph_case generated_case(const std::string& name, std::uint32_t scale, std::uint32_t edge_factor, std::uint64_t seed) {
  std::fprintf(stderr, "generating %s (scale %u, edge factor %u)...\n", name.c_str(), scale, edge_factor);
  if (scale == 0 || scale > 31) throw std::invalid_argument("graphs: --scale must be 1..31");
  const build_options gap{.symmetrize = true, .squish = true};
  const std::string size =
      " scale " + std::to_string(scale) + " edge factor " + std::to_string(edge_factor) + ", undirected";
  if (name == "kron") {
    return make_case(name, "Kronecker (A=0.57 B=C=0.19)" + size,
                     build_csr(kronecker_edges(scale, edge_factor, seed), gap), seed);
  }
  if (name == "uniform") {
    const std::uint32_t n = std::uint32_t{1} << scale;
    return make_case(name, "uniform random" + size,
                     build_csr(uniform_edges(n, std::uint64_t{n} * edge_factor, seed), gap), seed);
  }
  throw std::invalid_argument("unknown graph '" + name + "' (kron, uniform)");
}

std::uint64_t lay_out(std::vector<graph_case>& cases) {
  std::uint64_t next = 0;
  for (graph_case& c : cases) {
    c.col_block = next;
    c.col_blocks = blocks_of(c.g.edges() * sizeof(std::uint32_t));
    c.val_block = c.col_block + c.col_blocks;
    c.val_blocks = blocks_of(c.g.edges() * sizeof(float));
    next = c.val_block + c.val_blocks;
  }
  return next;
}

void write_edges(runtime& rt, const std::vector<graph_case>& cases) {
  for (const graph_case& c : cases) {
    write_array(rt, c.col_block, c.g.col.data(), c.g.edges() * sizeof(std::uint32_t));
    write_array(rt, c.val_block, c.g.val.data(), c.g.edges() * sizeof(float));
  }
}

double lanes_per_access(const cache_counters& n) {
  const std::uint64_t accesses = n.hits + n.misses + n.hits_on_busy;
  return accesses == 0 ? -1 : static_cast<double>(accesses + n.coalesced_in_warp) / static_cast<double>(accesses);
}

step_result native_step(runtime& rt, std::uint32_t threads, int reps, const graph_case& c, const vertex_arrays& v,
                        kernel k) {
  std::uint32_t* col = to_device(rt, c.g.col);
  float* val = k == kernel::spmv ? to_device(rt, c.g.val) : nullptr;
  const step_result s = repeat(reps, true, [&] {
    return run_kernel(rt, threads, c, v, k, native_source<std::uint32_t>{col}, native_source<float>{val});
  });
  rt.free(col);
  if (val != nullptr) rt.free(val);
  rt.check();
  return s;
}

#if defined(__CUDACC__)
const char* name_of(managed_placement where) {
  switch (where) {
    case managed_placement::migrate: return "migrate";
    case managed_placement::host: return "host";
    case managed_placement::host_prefetched: return "host_prefetched";
  }
  return "?";
}

namespace {

// A managed copy of one edge array, advised for `where`, written from the host's copy.
class managed_array {
 public:
  managed_array(const void* data, std::size_t bytes, managed_placement where)
      : data_(data), memory_(bytes, where != managed_placement::migrate) {}

  template <class T>
  const T* data() const {
    return memory_.data<const T>();
  }
  // Written from the host: the pages are (back) in host memory.
  void fill() const {
    if (memory_.bytes() != 0) std::memcpy(memory_.data<void>(), data_, memory_.bytes());
  }
  void move_to_gpu(cudaStream_t stream) const { memory_.move_to_gpu(stream); }
  void move_to_host(cudaStream_t stream) const { memory_.move_to_host(stream); }

 private:
  const void* data_;
  managed_memory memory_;
};

}  // namespace

step_result managed_step(runtime& rt, std::uint32_t threads, int reps, const graph_case& c, const vertex_arrays& v,
                         kernel k, managed_placement where, std::size_t gpu_bytes_cap) {
  const std::size_t col_bytes = c.g.edges() * sizeof(std::uint32_t);
  const std::size_t val_bytes = k == kernel::spmv ? c.g.edges() * sizeof(float) : 0;
  const gpu_memory_cap cap(gpu_bytes_cap);
  if (where != managed_placement::host && gpu_bytes_cap == 0) {
    std::size_t free_bytes = 0, total_bytes = 0;
    throw_on_cuda_error(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo");
    if (col_bytes + val_bytes > free_bytes) {
      std::fprintf(stderr, "\nmanaged memory (%s): %s %s skipped: %zu MiB of edges, %zu MiB free on the GPU\n",
                   name_of(where), c.name.c_str(), name_of(k), (col_bytes + val_bytes) >> 20, free_bytes >> 20);
      return {};
    }
  }
  const managed_array col(c.g.col.data(), col_bytes, where);
  const managed_array val(c.g.val.data(), val_bytes, where);
  if (where != managed_placement::migrate) {
    col.fill();
    val.fill();
  }
  const cuda_stream stream;
  const auto sync = [&] { throw_on_cuda_error(cudaStreamSynchronize(stream.get()), "moving managed memory"); };
  return repeat(reps, false, [&] {
    double moved = 0;
    if (where == managed_placement::migrate) {
      col.fill();
      val.fill();
    } else if (where == managed_placement::host_prefetched) {
      col.move_to_host(stream.get());
      val.move_to_host(stream.get());
      sync();
      moved = wall_seconds([&] {
        col.move_to_gpu(stream.get());
        val.move_to_gpu(stream.get());
        sync();
      });
    }
    one_run r = run_kernel(rt, threads, c, v, k, native_source<std::uint32_t>{col.data<std::uint32_t>()},
                           native_source<float>{val.data<float>()});
    r.seconds += moved;
    return r;
  });
}
#endif

}  // namespace agio::bench::graph
