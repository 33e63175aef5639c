#pragma once
// agio bench gather: random rows gathered through the cache by the row access code
// (cache/row_access.hpp) from C++, the comparator for agio.Array's gathers from Python.
namespace agio::bench {
int gather_bench_main(int argc, char** argv, int first);
}
