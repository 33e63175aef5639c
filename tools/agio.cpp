// The agio command-line tool: store inspection and staging, the I/O benchmark, the soak test
// and the demo job. The paper's evaluation is a program of its own (agio-eval, eval/).
#include <stdexcept>
#include <string>
#include <vector>

#include "demo.hpp"
#include "gather_bench/gather_bench.hpp"
#include "harness/command.hpp"
#include "info.hpp"
#include "io_bench/io_bench.hpp"
#include "soak.hpp"
#include "stage.hpp"

namespace {

// The evaluation's workloads were `agio bench ...` once; say where they went.
int moved_to_eval(int argc, char** argv, int) {
  const std::string name = argc > 2 ? argv[2] : "?";
  throw std::invalid_argument("the paper's evaluation moved to its own program: agio-eval " + name +
                              " (built with cmake -DAGIO_BUILD_EVAL=ON)");
}

const std::string backend_synopsis = "[--backend cpu|gpu|auto]";

}  // namespace

int main(int argc, char** argv) {
  using agio::bench::command;
  std::vector<command> commands{
      {"info", "URI",
       "print a store's size and block size\n"
       "Opens the store as it is (file:PATH or ram:SIZE) and never creates or resizes one.",
       agio::tools::info_main},
      {"stage in", "--file PATH --store URI [--offset BYTES] [--verify on|off] " + backend_synopsis,
       "copy a local file into a store\n"
       "The file goes in from byte --offset on (a multiple of the store's block size) through agio's\n"
       "device-side I/O, is read back and compared (--verify off skips that); a partly filled last\n"
       "block keeps the store's bytes after the file's end. Sizes take K, M, G suffixes.",
       agio::tools::stage_in_main},
      {"stage out", "--store URI --file PATH [--offset BYTES] [--length BYTES] " + backend_synopsis,
       "copy a store's bytes out to a local file\n"
       "Copies bytes [--offset, --offset + --length) of the store (default: to its end). Sizes take K,\n"
       "M, G suffixes.",
       agio::tools::stage_out_main},
      {"bench io",
       "[--quick | --full] [--out FILE] [--experiments ram,file,devices,movers] [--completion service|waiters]\n"
       "       [--seconds S] [--file PATH] [--file-gib G] [--ram-gib G] " +
           backend_synopsis +
           "\n"
           "       [--queue-pairs N] [--queue-depth N] [--controller-threads N] [--lanes-per-warp N]",
       "random-I/O benchmark (fio-like), agio beside the store's own ceiling\n"
       "Random reads and writes (4 and 64 KiB) through agio, swept over requests in flight and devices,\n"
       "each point beside the store's own ceiling (a CPU loop driving it directly). --quick (the\n"
       "default) takes about a minute, --full more points. JSON to --out (default results/randrw.json).\n"
       "The file experiment writes a 1 GiB file (--file-gib) in the temp directory and removes it at\n"
       "the end; --file PATH uses and keeps a file of yours.",
       agio::bench::io_bench_main},
      {"bench gather",
       "[--rows N] [--row-bytes R] [--offset BYTES] [--cache SIZE] [--table-factor F] [--store URI]\n"
       "       [--policy clock|lfu_da|s3_fifo|direct_mapped] [--line-bytes B] [--ways W] [--repeats N] [--seed S]\n"
       "       [--completion service|waiters] [--queue-pairs N] [--queue-depth N] [--out FILE] " +
           backend_synopsis,
       "random rows gathered through the cache, from C++ (the comparator for agio.Array)\n"
       "Gathers --rows random rows (default 2^20) of --row-bytes (512) from a table --table-factor (4) times\n"
       "the cache (--cache, 64M) through the cache's row access code, after one untimed warm-up gather of\n"
       "the same rows; reports rows/s, GB/s and hits/misses of each of --repeats (5) and their median, and\n"
       "checks every gathered byte. The store (--store) defaults to a ram: store (emulation); file: is real\n"
       "I/O. JSON to --out (default results/gather.json).",
       agio::bench::gather_bench_main},
      {"bench randrw", "(the same as bench io)", "the former name of bench io", agio::bench::io_bench_main, false},
      agio::tools::soak_command(agio::tools::run_soak_program),
      {"demo", "[--quick] " + backend_synopsis + " [--mib N] [--dir DIR]",
       "write, read back and verify data in a ram: and a file: store\n"
       "Writes random data to a ram: and a file: store through agio, reads it back in another order,\n"
       "verifies checksums and prints throughput. --backend gpu fails when there is no usable GPU, auto\n"
       "falls back to CPU threads. The file store goes in DIR (default: the temp directory) and is\n"
       "removed at the end.",
       agio::tools::demo_main},
  };
  for (const char* moved : {"overlap", "dlrm", "graphs", "evaluation", "cache_policies", "cache_overhead"}) {
    commands.push_back({std::string("bench ") + moved, "", "moved to agio-eval", moved_to_eval, false});
  }
  return agio::bench::run_command_line("agio", "agio: GPU-initiated storage I/O through a software NVMe controller",
                                       commands, argc, argv);
}
