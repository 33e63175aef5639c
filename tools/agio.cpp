// The agio command-line tool: the demo job, benchmarks, and store inspection.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "agio/runtime/runtime.hpp"
#include "demo.hpp"
#include "soak.hpp"
#include "cache/cache_bench.hpp"
#include "dlrm/dlrm.hpp"
#include "evaluation.hpp"
#include "graph/graphs.hpp"
#include "overlap/overlap.hpp"
#include "randrw/randrw.hpp"

namespace {

void usage() {
  std::puts(
      "usage: agio <command> [options]\n"
      "  demo [--backend cpu|auto] [--mib N]   write random data to a ram: and a file: store through agio,\n"
      "                                        read it back in another order, verify, print throughput\n"
      "  bench randrw [--full] [--out FILE] [--experiments ram,file,devices,movers] [--completion service|waiters]\n"
      "               [--seconds S] [--file PATH] [--file-gib G] [--ram-gib G] [--backend cpu|auto]\n"
      "               [--queue-pairs N] [--queue-depth N] [--controller-threads N] [--lanes-per-warp N]\n"
      "                                        random reads/writes beside the store's own ceiling (JSON out)\n"
      "  bench cache_policies [--quick] [--backend cpu|auto] [--blocks N] [--accesses N] [--zipf-alpha A]\n"
      "               [--percent 1,5,20] [--traces zipf,kronecker] [--policies clock,lfu_da,s3_fifo,direct_mapped]\n"
      "               [--threads N] [--out FILE]\n"
      "                                        cache miss ratio and time per replacement policy on skewed traces\n"
      "  bench cache_overhead [--quick] [--backend cpu|auto] [--vector-mib M] [--vertices N] [--degree D]\n"
      "               [--reps R] [--store URI] [--kernels vector_mean,bfs,spmv] [--out FILE]\n"
      "                                        native vs cache-API vs cold-cache time of mean, BFS, SpMV\n"
      "  bench overlap [--quick] [--backend cpu|auto] [--store URI] [--ctc 0,0.5,1,2] [--reps R] [--rounds N]\n"
      "               [--completion service|waiters] [--out FILE]\n"
      "                                        async vs sync in one block as computation grows (AGILE Figure 4)\n"
      "  bench graphs [--quick] [--backend cpu|auto] [--graphs kron,uniform] [--kernels bfs,spmv,cc]\n"
      "               [--models async,bam_style] [--scale S] [--edge-factor E] [--graph-file PATH] [--reps R]\n"
      "               [--store URI] [--seed N] [--unified-memory on|off] [--cpu-pipeline on|off] [--out FILE]\n"
      "                                        BFS, SpMV, CC: native vs cache-API vs I/O-API time, agio vs\n"
      "                                        BaM-style I/O (AGILE Figure 11); GPU baselines: unified memory,\n"
      "                                        CPU-driven pipeline (BFS)\n"
      "  bench dlrm [--quick] [--backend cpu|auto] [--configs 1,2,3] [--batch N] [--batches N] [--reps R]\n"
      "               [--modes async,sync,bam_style,cpu_pipeline[,cufile]] [--experiments configs,batch,queues,cache]\n"
      "               [--batch-sizes ...] [--queue-pair-sweep ...] [--cache-mib-sweep ...] [--cache-mib M]\n"
      "               [--store URI] [--queue-pairs N] [--queue-depth N] [--dim D] [--vocab-scale S] [--vocab-cap N]\n"
      "               [--alpha A] [--criteo FILE] [--out FILE]\n"
      "                                        DLRM inference with embedding tables on storage (AGILE Figures 7-10)\n"
      "  bench evaluation [--quick | --full] [--backend cpu|auto] [--figures 4,7-10,7-file,11,12] [--out-dir DIR]\n"
      "                                        the AGILE paper's Figures 4, 7-12 in one run: JSON and PNG plots\n"
      "  soak [--backend cpu|gpu|auto] [--ops N] [--seconds S] [--threads N] [--faults on|off] [--cycles N]\n"
      "               [--dir DIR] [--json FILE]\n"
      "                                        mixed cache operations from many threads against a shadow model,\n"
      "                                        small and large caches, store faults, stop/restart cycles; fails on\n"
      "                                        a wrong value, a lost acknowledged write or a fault not surfaced;\n"
      "                                        its store files go in DIR (default: the temp directory)\n"
      "  info URI                              open a store and print its size and block size");
}

int info_main(int argc, char** argv) {
  if (argc < 3) {
    usage();
    return 2;
  }
  agio::runtime_options opt;
  opt.backend = agio::backend::cpu;
  agio::runtime rt(opt);
  rt.attach(argv[2]);
  for (const auto& d : rt.devices()) {
    std::printf("%s: %llu blocks of %u bytes (%.1f MiB)\n", d.uri.c_str(),
                static_cast<unsigned long long>(d.capacity_blocks), d.lba_bytes,
                static_cast<double>(d.capacity_blocks) * d.lba_bytes / (1 << 20));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    const std::string cmd = argc > 1 ? argv[1] : "";
    if (cmd == "demo") return agio::tools::demo_main(argc, argv, 2);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "randrw") == 0) return agio::bench::randrw_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "cache_policies") == 0) return agio::bench::cache_policies_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "cache_overhead") == 0) return agio::bench::cache_overhead_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "overlap") == 0) return agio::bench::overlap_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "graphs") == 0) return agio::bench::graphs_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "dlrm") == 0) return agio::bench::dlrm_main(argc, argv, 3);
    if (cmd == "bench" && argc > 2 && std::strcmp(argv[2], "evaluation") == 0) return agio::bench::evaluation_main(argc, argv, 3);
    if (cmd == "soak") return agio::tools::soak_main(argc, argv, 2);
    if (cmd == "info") return info_main(argc, argv);
    usage();
    return cmd.empty() || cmd == "help" || cmd == "--help" ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agio: %s\n", e.what());
    return 1;
  }
}
