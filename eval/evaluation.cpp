// evaluation: the AGILE paper's evaluation in one command. Runs the overlap benchmark
// (Figure 4), DLRM inference (Figures 7-10, and configuration 1 once more on a file: store, where
// the baselines that read files run too: "7-file"), the graph kernels (Figure 11) and the
// register report (Figure 12) in a quick or a full profile, leaves each one's JSON in one folder
// and draws the plots there (eval/plot_evaluation.py, when python3 with matplotlib is at hand).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "agio/runtime/runtime.hpp"
#include "dlrm/dlrm.hpp"
#include "evaluation.hpp"
#include "graph/graphs.hpp"
#include "harness/json.hpp"
#include "harness/options.hpp"
#include "harness/registers.hpp"
#include "overlap/overlap.hpp"

namespace agio::bench {
namespace {

// Runs a benchmark's main on an argument list of our making; returns its exit status, with an
// exception reported and counted as a failure (the other figures still run).
int run_main(const std::string& name, int (*main_fn)(int, char**, int), std::vector<std::string> args) {
  args.insert(args.begin(), {"agio-eval", name});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  std::string line;
  for (const auto& a : args) line += a + " ";
  std::fprintf(stderr, "\n== %s\n", line.c_str());
  try {
    return main_fn(static_cast<int>(argv.size()), argv.data(), 2);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "agio-eval %s: %s\n", name.c_str(), e.what());
    return 1;
  }
}

void write_registers(const std::string& path, const std::string& device, int argc, char** argv) {
  result_document doc;
  doc.set_header("registers", device, argc, argv);
  doc.config.set("source", std::string("cudaFuncGetAttributes(numRegs): the compiler's allocation per thread"));
  std::printf("\n%-10s %-10s %-10s %9s\n", "workload", "kernel", "model", "registers");
  for (const register_row& r : register_report()) {
    const std::string regs = r.registers >= 0 ? std::to_string(r.registers) : "- (no GPU)";
    std::printf("%-10s %-10s %-10s %9s\n", r.workload.c_str(), r.kernel.c_str(), r.model.c_str(), regs.c_str());
    json_object o;
    o.set("workload", r.workload)
        .set("kernel", r.kernel)
        .set("model", r.model)
        .set("registers", std::int64_t{r.registers});
    doc.points.push_back(o);
  }
  doc.save(path);
}

}  // namespace

std::vector<register_row> register_report() {
  std::vector<register_row> rows = dlrm_registers();
  for (register_row& r : graphs_registers()) rows.push_back(std::move(r));
  return rows;
}

int evaluation_main(int argc, char** argv, int first) {
  options opt(argc, argv, first);
  const bool full = opt.flag("full");
  const bool quick = opt.flag("quick") || !full;
  const std::string backend = opt.get("backend", "auto");
  const std::string dir = opt.get("out-dir", "results/evaluation");
  const auto figures = opt.list("figures", "4,7-10,7-file,11,12");
  opt.reject_unknown();
  const auto wants = [&](const char* f) { return std::find(figures.begin(), figures.end(), f) != figures.end(); };
  const std::vector<std::string> profile = quick ? std::vector<std::string>{"--quick"} : std::vector<std::string>{};
  const auto with = [&](std::vector<std::string> extra, const std::string& json) {
    extra.insert(extra.begin(), profile.begin(), profile.end());
    extra.insert(extra.end(), {"--backend", backend, "--out", dir + "/" + json});
    return extra;
  };

  std::filesystem::create_directories(dir);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::pair<std::string, int>> status;
  if (wants("4"))
    status.emplace_back("Figure 4 (overlap)", run_main("overlap", overlap_main, with({}, "overlap.json")));
  if (wants("7-10")) status.emplace_back("Figures 7-10 (dlrm)", run_main("dlrm", dlrm_main, with({}, "dlrm.json")));
  if (wants("7-file")) {
    // Real I/O on this machine's disk, so the tables are scaled down (225 MiB, four batches) to
    // what a disk reads in seconds; cuFile and the CPU pipeline read the same file.
    const std::string store_file = dir + "/dlrm-store.bin";
    const std::vector<std::string> args{"--experiments", "configs",
                                        "--configs",     "1",
                                        "--batches",     "4",
                                        "--vocab-cap",   "100000",
                                        "--cache-mib",   "64",
                                        "--modes",       "async,sync,cpu_pipeline,cufile",
                                        "--store",       "file:" + store_file + "?create=1G&lba=4096"};
    status.emplace_back("DLRM on a file: store", run_main("dlrm", dlrm_main, with(args, "dlrm-file.json")));
    std::filesystem::remove(store_file);
  }
  if (wants("11")) status.emplace_back("Figure 11 (graphs)", run_main("graphs", graphs_main, with({}, "graphs.json")));
  if (wants("12")) {
    write_registers(dir + "/registers.json", runtime(runtime_options{}).describe(), argc, argv);
    status.emplace_back("Figure 12 (registers)", 0);
  }
  const double minutes = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / 60;

  // Plots need matplotlib; without it the JSON files are the results and the command says so.
  const std::string plot = "python3 eval/plot_evaluation.py " + dir;
  if (std::filesystem::exists("eval/plot_evaluation.py") && std::system((plot + " > /dev/null 2>&1").c_str()) == 0) {
    std::printf("\nplots: %s/*.png\n", dir.c_str());
  } else {
    std::printf("\nno plots drawn (run from the source tree with python3 and matplotlib): %s\n", plot.c_str());
  }
  int failed = 0;
  std::printf("evaluation (%s profile, %.1f min), results in %s:\n", quick ? "quick" : "full", minutes, dir.c_str());
  for (const auto& [what, rc] : status) {
    std::printf("  %-24s %s\n", what.c_str(), rc == 0 ? "ok" : "FAILED (see above)");
    failed += rc != 0;
  }
  return failed == 0 ? 0 : 1;
}

}  // namespace agio::bench
