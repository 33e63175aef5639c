#pragma once
// The graph benchmark (AGILE Figure 11): BFS, SpMV and connected components on a Kronecker
// and a uniform graph, native against agio's cache API and I/O path, in agio's I/O model and a
// BaM-style one.
namespace agio::bench {
int graphs_main(int argc, char** argv, int first);
}
