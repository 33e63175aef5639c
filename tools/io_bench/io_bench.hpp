#pragma once
// agio bench io (AGILE Figures 5 and 6): random reads and writes through agio beside the
// store's own ceiling, measured in the same run.
namespace agio::bench {
int io_bench_main(int argc, char** argv, int first);
}
