// agio-eval: the AGILE paper's evaluation on agio, one command per workload and `evaluation`
// for all of the figures in one run. Built with cmake -DAGIO_BUILD_EVAL=ON.
#include <string>
#include <vector>

#include "cache/cache_bench.hpp"
#include "dlrm/dlrm.hpp"
#include "evaluation.hpp"
#include "graph/graphs.hpp"
#include "graph/tiers.hpp"
#include "harness/command.hpp"
#include "overlap/overlap.hpp"

int main(int argc, char** argv) {
  using agio::bench::command;
  const std::string common = "[--quick] [--backend cpu|gpu|auto]";
  const std::vector<command> commands{
      {"evaluation", "[--quick | --full] [--backend cpu|gpu|auto] [--figures 4,7-10,7-file,11,12] [--out-dir DIR]",
       "the AGILE paper's Figures 4, 7-12 in one run\n"
       "JSON and PNG plots in DIR (default results/evaluation); --quick (the default) takes minutes, --full hours on "
       "the GPU",
       agio::bench::evaluation_main},
      {"overlap",
       common + " [--store URI] [--ctc 0,0.5,1,2] [--reps R] [--rounds N] [--completion service|waiters]\n"
                "       [--lanes-per-queue N] [--wait-together-ns NS] [--out FILE]",
       "async vs sync I/O in one block as computation grows (AGILE Figure 4)", agio::bench::overlap_main},
      {"dlrm",
       common + " [--configs 1,2,3] [--batch N] [--batches N] [--reps R]\n"
                "       [--modes async,sync,bam_style,cpu_pipeline[,cufile,async_host_tier,sync_host_tier,\n"
                "                async_host_tier_direct,sync_host_tier_direct,managed,managed_prefetched,\n"
                "                managed_prefetched_capped]]\n"
                "       [--experiments configs,batch,queues,cache] [--batch-sizes ...] [--queue-pair-sweep ...]\n"
                "       [--cache-mib-sweep ...] [--cache-mib M] [--host-tier-mib M] [--host-tier-latency-ns N]\n"
                "       [--host-tier-admission always|on_reuse|on_eviction] [--warm]\n"
                "       [--store URI] [--queue-pairs N] [--queue-depth N] [--dim D] [--vocab-scale S] [--vocab-cap N]\n"
                "       [--alpha A] [--criteo FILE] [--out FILE]",
       "DLRM inference with embedding tables on storage (AGILE Figures 7-10)", agio::bench::dlrm_main},
      {"graphs",
       common + " [--graphs kron,uniform] [--kernels bfs,spmv,cc] [--models async,bam_style]\n"
                "       [--scale S] [--edge-factor E] [--graph-file PATH] [--reps R] [--store URI] [--seed N]\n"
                "       [--unified-memory on|off] [--cpu-pipeline on|off] [--out FILE]",
       "graph kernels BFS, SpMV, CC (AGILE Figure 11)\n"
       "Native vs cache-API vs I/O-API time, agio vs BaM-style I/O; GPU baselines: unified memory, the CPU-driven "
       "pipeline (BFS)",
       agio::bench::graphs_main},
      {"cache-policies",
       common + " [--blocks N] [--accesses N] [--zipf-alpha A] [--percent 1,5,20]\n"
                "       [--traces zipf,kronecker] [--policies clock,lfu_da,s3_fifo,direct_mapped] [--threads N]\n"
                "       [--out FILE]",
       "cache miss ratio and time per replacement policy on skewed traces", agio::bench::cache_policies_main},
      {"cache-overhead",
       common + " [--vector-mib M] [--vertices N] [--degree D] [--reps R] [--store URI]\n"
                "       [--kernels vector_mean,warp_runs,bfs,spmv] [--out FILE]",
       "native vs cache-API vs cold-cache time of mean, BaM's warp runs (hot-cache bandwidth), BFS, SpMV",
       agio::bench::cache_overhead_main},
      {"host-tier",
       common + " [--data-mib M] [--cache-mib M] [--cxl-ns N] [--zipf-alpha A] [--reps R]\n"
                "       [--experiments tiers,admission] [--store URI] [--out FILE]",
       "the host-memory tier: its hits against pinned reads, three tiers against two, admission policies",
       agio::bench::host_tier_main},
      {"graph-tiers",
       common + " [--graphs uniform,kron] [--kernels bfs,spmv,cc] [--scale S] [--edge-factor E]\n"
                "       [--cache-share F] [--bfs-lanes in-step|free] [--reps R] [--seed N] [--store URI]\n"
                "       [--out FILE]",
       "the graph kernels with their edges 4x the GPU cache: three tiers (a host tier), two tiers, a ram: store,\n"
       "CUDA managed memory (host-preferred; prefetched, with all GPU memory and with the GPU cache's) and GPU memory",
       agio::bench::graph_tiers_main},
      {"cache_policies", "(the same as cache-policies)", "", agio::bench::cache_policies_main, false},
      {"cache_overhead", "(the same as cache-overhead)", "", agio::bench::cache_overhead_main, false},
  };
  return agio::bench::run_command_line("agio-eval", "agio-eval: the AGILE paper's evaluation on agio", commands, argc,
                                       argv);
}
