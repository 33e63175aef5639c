#pragma once
// The host tier's graph experiment: BFS, SpMV and CC with their edges four times the GPU cache,
// read through three tiers, two tiers, a plain `ram:` store, CUDA managed memory and from GPU
// memory.

namespace agio::bench {
int graph_tiers_main(int argc, char** argv, int first);
}  // namespace agio::bench
