// What the block table's operations compile to (RESULTS.md, "Warps of a block sharing the
// view's pins"): with block-lines.patch applied, on a machine with nvcc and nvdisasm,
//   nvcc -std=c++20 -arch=sm_90 -Iinclude -cubin sass-probe.cu -o probe.cubin
//   nvdisasm -c probe.cubin | grep -oE "(ATOMS?|MEMBAR)[A-Z0-9._]*" | sort | uniq -c
#include "agio/cache/block_lines.hpp"

__global__ void probe(unsigned* out, unsigned long long tag) {
  agio::cache::set_up_block_lines();
  __syncthreads();
  auto* t = agio::cache::block_lines_of_this_block();
  std::uint32_t entry = 0, line = 0, to_unpin = 0;
  auto j = t->join_or_open(1, tag, agio::deadline::after_ns(1000), entry, line, to_unpin, [] {});
  if (j == agio::cache::block_lines::joined::opened) t->publish(entry, 5);
  out[threadIdx.x] = t->leave(entry) + line;
}
