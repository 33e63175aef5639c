// The agio command-line tool: store inspection, staging and export, the I/O benchmark, the soak test
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

// `agio stage in` and `agio stage out` became `agio stage --file` and `agio export --file`.
int renamed_stage(int argc, char** argv, int) {
  const bool in = argc > 2 && std::string(argv[2]) == "in";
  throw std::invalid_argument(std::string("agio stage ") + (in ? "in" : "out") + " is now agio " +
                              (in ? "stage --file PATH --store URI" : "export --store URI --file PATH") +
                              " (with the same options)");
}

const std::string backend_synopsis = "[--backend cpu|gpu|auto]";

}  // namespace

int main(int argc, char** argv) {
  using agio::bench::command;
  std::vector<command> commands{
      {"info", "[URI]",
       "print a store's size and block size, or without URI the memory tiers a cache can use\n"
       "Opens the store as it is (file:PATH or ram:SIZE) and never creates or resizes one. Without URI it\n"
       "lists each GPU with its memory (where a cache's lines live), then the host's NUMA nodes with\n"
       "their memory and CPUs (a host tier below the cache): a host tier binds to one with\n"
       "cache_options::numa_node (Python: host_tier_numa_node); a node without CPUs is memory only, as a\n"
       "CXL memory expander appears.",
       agio::tools::info_main},
      {"stage", "(--npy FILE.npy | --file PATH) --store URI [--offset BYTES] [--verify on|off] " + backend_synopsis,
       "copy a .npy file or any file into a store\n"
       "--npy writes the array as a record that Python's agio.Array.open opens without repeating its dtype\n"
       "and shape: the .npy header padded to 4096 bytes, then the data (a staged file: store is a .npy\n"
       "file). --file writes the file's bytes. Both go in from byte --offset on (a multiple of the store's\n"
       "block size) through agio's device-side I/O and are read back and compared (--verify off skips\n"
       "that); a partly filled last block keeps the store's bytes after the end. A file: store without\n"
       "create= is created, or extended, to the size needed. Sizes take K, M, G suffixes.",
       agio::tools::stage_main},
      {"export", "--store URI (--npy FILE.npy | --file PATH [--length BYTES]) [--offset BYTES] " + backend_synopsis,
       "copy a staged array or a store's bytes out to a local file\n"
       "--npy reads the record at byte --offset (what agio stage --npy or agio.stage wrote) and writes it\n"
       "as a .npy file NumPy loads. --file copies bytes [--offset, --offset + --length) of the store\n"
       "(default: to its end). Sizes take K, M, G suffixes.",
       agio::tools::export_main},
      {"bench io",
       "[--quick | --full] [--out FILE] [--experiments ram,file,devices,movers,trip] [--completion "
       "service|waiters|on_demand]\n"
       "       [--seconds S] [--file PATH] [--file-gib G] [--ram-gib G] " +
           backend_synopsis +
           "\n"
           "       [--queue-pairs N] [--queue-depth N] [--controller-threads N] [--lanes-per-warp N]\n"
           "       [--lanes-per-queue N] [--wait-together-ns NS] [--controller-copy-depth N]\n"
           "       [--service-staging-bytes N] [--outstanding N,...] [--io-bytes N,...] [--ops read,write]",
       "random-I/O benchmark (fio-like), agio beside the store's own ceiling\n"
       "Random reads and writes (4 and 64 KiB) through agio, swept over requests in flight and devices,\n"
       "each point beside the store's own ceiling (a CPU loop driving it directly). --quick (the\n"
       "default) takes about a minute, --full more points. JSON to --out (default results/randrw.json).\n"
       "The file experiment writes a 1 GiB file (4 GiB with --full; --file-gib) in the temp directory\n"
       "and removes it at the end; --file PATH uses and keeps a file of yours. --outstanding,\n"
       "--io-bytes and --ops pin the points measured (requests in flight; I/O sizes of the ram and\n"
       "movers experiments; directions).\n"
       "At one request in flight a point also gives the trip's time against a flag round trip the\n"
       "benchmark measures; the trip experiment (not in the default list) splits it leg by leg.",
       agio::bench::io_bench_main},
      {"bench gather",
       "[--rows N] [--row-bytes R] [--offset BYTES] [--cache SIZE] [--table-factor F] [--store URI]\n"
       "       [--policy clock|lfu_da|s3_fifo|direct_mapped] [--line-bytes B] [--ways W] [--repeats N] [--seed S]\n"
       "       [--completion service|waiters|on_demand] [--queue-pairs N] [--queue-depth N] [--out FILE] " +
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
  commands.push_back({"stage in", "", "renamed agio stage --file", renamed_stage, false});
  commands.push_back({"stage out", "", "renamed agio export --file", renamed_stage, false});
  for (const char* moved : {"overlap", "dlrm", "graphs", "evaluation", "cache_policies", "cache_overhead"}) {
    commands.push_back({std::string("bench ") + moved, "", "moved to agio-eval", moved_to_eval, false});
  }
  return agio::bench::run_command_line("agio", "agio: GPU-initiated storage I/O through a software NVMe controller",
                                       commands, argc, argv);
}
