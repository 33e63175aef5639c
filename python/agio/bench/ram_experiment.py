"""ram: 4 KiB random reads into GPU memory from a ram: store (pinned host RAM without an SSD
profile: an emulation), through agio's Python batch reads and through the C++ `agio bench io`
at the same points: the same store size, queues, controller threads, completion and backend,
and the same requests in flight (the C++ job keeps `depth` GPU threads each waiting on one
request; a Python call reads workload.batch_rows(depth) rows with in_flight=depth, one job of
`depth` threads). The ratio Python / C++ is what the binding costs: checking the arrays, the
job's launch per call, the batch's slowest request."""

from __future__ import annotations

import argparse
from functools import partial

import numpy as np

from . import cpp_tool, workload
from .measure import Budget, reads_per_second
from .memory import Memory
from .progress import Progress
from .report import Results

STORE = "ram: store, pinned host RAM without an SSD profile (emulation)"


def uri(gib: float) -> str:
    """The ram: store the C++ tool makes for --ram-gib, to the byte."""
    return f"ram:{int(gib * (1 << 30)) >> 20}M?lba=4096"


def _check_round_trip(dev, memory: Memory, capacity: int, rows: int, seed: int) -> None:
    """Rows written at distinct random offsets read back unchanged."""
    rng = np.random.default_rng(seed)
    offsets = rng.permutation(capacity // workload.ROW_BYTES)[:rows].astype(np.int64) * workload.ROW_BYTES
    data = rng.integers(0, 256, size=(len(offsets), workload.ROW_BYTES), dtype=np.uint8)
    dev.write(offsets, memory.put(data))
    back = dev.read(offsets, memory.rows(len(offsets), workload.ROW_BYTES))
    workload.check_rows("agio", memory.get(back), data, offsets)


def run(args: argparse.Namespace, results: Results, progress: Progress, budget: Budget) -> None:
    store = uri(args.ram_gib)
    runtime = workload.runtime(args, store)
    backend = runtime.backend
    memory = Memory(backend)
    capacity = runtime.devices[0].capacity_bytes
    batches = {d: workload.offset_batches(capacity, d, args.seed) for d in args.depths}
    outs = {d: memory.rows(workload.batch_rows(d), workload.ROW_BYTES) for d in args.depths}

    reason = cpp_tool.missing_reason(args.cpp_tool, ["bench", "io"])
    if reason:
        results.note(reason)
    if backend == "cpu":
        note = ("ram: on the CPU backend a Python batch runs on at most 16 threads waiting on one request "
                "each, while the C++ job keeps all its requests in flight: the ratio means something on "
                "the GPU backend only")
        results.note(note)
    progress.add(args.repeats * (len(args.depths) + (0 if reason else 1)))

    python_runs = {d: [] for d in args.depths}
    cpp_runs = {d: [] for d in args.depths}
    for r in range(args.repeats):
        rt = runtime if r == 0 else workload.runtime(args, store)
        with rt:
            results.info.setdefault("agio", workload.describe(rt))
            dev = rt.devices[0]
            if r == 0:
                _check_round_trip(dev, memory, capacity, max(args.depths), args.seed)
            for d in args.depths:
                read = partial(dev.read, out=outs[d], in_flight=d)
                python_runs[d].append(reads_per_second(read, batches[d], budget))
                progress.step(f"ram agio depth {d} run {r + 1}")
        # The C++ tool runs while no runtime of this process does: two completion services
        # would share the GPU.
        if not reason:
            iops, info = cpp_tool.bench_io(args.cpp_tool, args, backend)
            results.info["cpp_bench_io"] = info
            for d in args.depths:
                cpp_runs[d].append(iops[d])
            progress.step(f"ram C++ bench io run {r + 1}")

    for d in args.depths:
        ours = results.point("ram", "agio-python", STORE, d, python_runs[d], uri=store)
        if not reason:
            theirs = results.point("ram", "agio-cpp", STORE, d, cpp_runs[d], uri=store)
            results.compare("ram", d, ours, theirs)
