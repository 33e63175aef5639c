#!/usr/bin/env python3
"""Fails when a kernel of the AGILE paper's Figure 12 needs more registers than its budget.

A kernel that reads through agio's cache has its miss path (a fill claimed and posted to the service)
compiled in, so every register that path gains is paid by the hit path too, as occupancy: the
evaluation's BFS once went from 80 to 82 registers by a change to the submission, fitted two
blocks of 256 threads per SM instead of three, and ran 1.2x slower through a preloaded cache.
So each kernel here has the blocks of 256 threads per SM it must keep, and its budget is the
most registers that fit them (what ptxas reports, rounded up to 8 per thread as sm_90
allocates them, times the block's threads and blocks, within the SM's 65,536).

Compiles the evaluation's DLRM and graph sources for sm_90 with `-Xptxas=-v` (no GPU needed:
nvcc only), in a CMake build of its own (default build-registers), and prints every budgeted
kernel's registers. Without a CUDA compiler (nvcc on PATH, or CUDACXX) it says so and passes.
Exit status 1 if a kernel is over its budget or a budgeted kernel was not found.
"""
import argparse
import concurrent.futures
import json
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SOURCES = ["eval/dlrm/dlrm.cpp", "eval/graph/graphs.cpp"]
REGISTER_FILE = 65536  # per SM, sm_90
BLOCK_THREADS = 256  # launch_job's default block
SERVICE_IO = "basic_io_handle<(retirement)0>"  # io_handle: the completion service retires
CACHE = f"cache_handle<clock, no_lock_chain, no_share_table, {SERVICE_IO}>"
COLS = f"graph::cached_source<unsigned int, clock, {SERVICE_IO}>"
VALS = f"graph::cached_source<float, clock, {SERVICE_IO}>"
# (the kernel as Figure 12 names it, its job type without namespaces, blocks per SM it keeps)
BUDGETS = [
    ("DLRM gather", f"dlrm::gather_job<dlrm::cached_rows<{CACHE}>>", 4),
    ("DLRM prefetch", f"dlrm::prefetch_job<{CACHE}, false>", 4),
    ("BFS", f"graph::bfs_job<{COLS}, false>", 4),
    ("SpMV", f"graph::spmv_job<{COLS}, {VALS}>", 3),
    ("CC", f"graph::cc_job<{COLS}>", 3),
]
KERNEL = re.compile(r"^void agio::launch_job_kernel<(.*)>\(.*\)$")


def register_limit(blocks: int) -> int:
    per_thread = REGISTER_FILE // (blocks * BLOCK_THREADS)
    return per_thread - per_thread % 8


def job_key(job: str) -> str:
    """A job type compared without namespaces or spaces (c++filt writes `> >`)."""
    for namespace in ("agio::bench::", "agio::cache::", "agio::io::", "agio::"):
        job = job.replace(namespace, "")
    return re.sub(r"\s+", "", job)


def compile_commands(build: pathlib.Path) -> dict:
    cuda = os.environ.get("CUDACXX", "nvcc")
    subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                    "-DAGIO_ENABLE_CUDA=ON", f"-DCMAKE_CUDA_COMPILER={shutil.which(cuda)}",
                    "-DCMAKE_CUDA_ARCHITECTURES=90", "-DAGIO_BUILD_TOOLS=ON", "-DAGIO_BUILD_EVAL=ON",
                    "-DAGIO_BUILD_TESTS=OFF", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"],
                   check=True, stdout=subprocess.DEVNULL)
    entries = json.loads((build / "compile_commands.json").read_text())
    wanted = {str(ROOT / s): s for s in SOURCES}
    return {wanted[e["file"]]: e for e in entries if e["file"] in wanted}


def ptxas_report(entry: dict, build: pathlib.Path) -> str:
    args = shlex.split(entry["command"]) if "command" in entry else entry["arguments"]
    out = args.index("-o")
    args[out + 1] = str(build / (pathlib.Path(entry["file"]).stem + ".registers.o"))
    done = subprocess.run(args + ["-Xptxas=-v"], cwd=entry["directory"], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"compiling {entry['file']} failed:\n{done.stderr[-4000:]}")
    return done.stderr


def registers_by_kernel(report: str) -> list:
    found, kernel = [], None
    for line in report.splitlines():
        named = re.search(r"Compiling entry function '([^']+)'", line)
        if named:
            kernel = named.group(1)
        used = re.search(r"Used (\d+) registers", line)
        if used and kernel:
            found.append((kernel, int(used.group(1))))
            kernel = None
    names = subprocess.run(["c++filt"], input="\n".join(k for k, _ in found), capture_output=True, text=True,
                           check=True).stdout.splitlines()
    return [(name, registers) for name, (_, registers) in zip(names, found)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build-dir", default=str(ROOT / "build-registers"))
    build = pathlib.Path(parser.parse_args().build_dir).resolve()
    if shutil.which(os.environ.get("CUDACXX", "nvcc")) is None:
        print("no CUDA compiler (nvcc on PATH, or CUDACXX): register budgets not checked")
        return 0
    entries = compile_commands(build)
    with concurrent.futures.ThreadPoolExecutor(len(SOURCES)) as pool:
        reports = list(pool.map(lambda s: ptxas_report(entries[s], build), SOURCES))
    by_job = {}
    for name, registers in registers_by_kernel("\n".join(reports)):
        kernel = KERNEL.match(name)
        if kernel:  # a job type compiled in both sources has one count: keep the larger
            key = job_key(kernel.group(1))
            by_job[key] = max(registers, by_job.get(key, 0))
    failures = 0
    print(f"{'kernel':<14} {'registers':>9} {'budget':>6}  blocks of {BLOCK_THREADS} per SM kept")
    for label, job, blocks in BUDGETS:
        limit = register_limit(blocks)
        registers = by_job.get(job_key(job))
        if registers is None:
            print(f"{label:<14} {'-':>9} {limit:>6}  not found: no kernel of job type {job}")
            failures += 1
            continue
        over = f"  OVER: fits fewer than {blocks}" if registers > limit else ""
        print(f"{label:<14} {registers:>9} {limit:>6}  {blocks}{over}")
        failures += registers > limit
    if failures:
        print("register budgets: FAILED (a kernel over its budget runs fewer warps per SM; see "
              "docs/TESTING.md, \"Register budgets\")")
        return 1
    print("register budgets: every kernel within its budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
