"""file: 4 KiB random reads into GPU memory from a file on this machine's disk, through agio's
Python batch reads and through KvikIO, the same offsets in the same order for both.

Per depth d, agio reads each batch of workload.batch_rows(d) offsets with one
dev.read(offsets, out, in_flight=d) call (one agio job of d threads: d requests in flight);
KvikIO issues d pread futures into the rows of the same tensor and waits for all. The two never run at once: each run of agio has a runtime of its own, stopped
before KvikIO reads (a started runtime's completion service must not share the GPU with another
library's synchronisation). The file's pages are dropped from the page cache before every run."""

from __future__ import annotations

import argparse
from functools import partial

from . import cpp_tool, kvikio_reader, workload
from .data_file import data_file, drop_cached_pages, expected_rows
from .measure import Budget, reads_per_second
from .memory import Memory
from .progress import Progress
from .report import Results

STORE = "file: store on this machine's disk (real I/O)"


def run(args: argparse.Namespace, results: Results, progress: Progress, budget: Budget) -> None:
    with data_file(args.file, args.file_gib, args.seed, progress.say) as path:
        uri = f"file:{path}?lba=4096"
        runtime = workload.runtime(args, uri)
        memory = Memory(runtime.backend)
        capacity = runtime.devices[0].capacity_bytes
        batches = {d: workload.offset_batches(capacity, d, args.seed) for d in args.depths}
        outs = {d: memory.rows(workload.batch_rows(d), workload.ROW_BYTES) for d in args.depths}

        kvikio = None
        reason = kvikio_reader.missing_reason(runtime.backend)
        if reason:
            results.note(reason)
        else:
            results.info["kvikio"] = kvikio_reader.configure(args.kvikio_threads, args.kvikio_direct_io == "on")
            kvikio = kvikio_reader.KvikioReader(path)
        progress.add(args.repeats * len(args.depths) * (2 if kvikio else 1))

        agio_runs = {d: [] for d in args.depths}
        kvikio_runs = {d: [] for d in args.depths}
        try:
            for r in range(args.repeats):
                rt = runtime if r == 0 else workload.runtime(args, uri)
                with rt:
                    results.info.setdefault("agio", workload.describe(rt))
                    dev = rt.devices[0]
                    for d in args.depths:
                        if r == 0:
                            dev.read(batches[d][0], outs[d])
                            workload.check_rows("agio", memory.get(outs[d]), expected_rows(path, batches[d][0], 4096),
                                                batches[d][0])
                        drop_cached_pages(path)
                        read = partial(dev.read, out=outs[d], in_flight=d)
                        agio_runs[d].append(reads_per_second(read, batches[d], budget))
                        progress.step(f"file agio depth {d} run {r + 1}")
                if kvikio is not None:
                    for d in args.depths:
                        rows = [outs[d][i] for i in range(d)]
                        offsets = batches[d][:, :d].tolist()
                        if r == 0:
                            memory.zero(outs[d])
                            kvikio.read(rows, offsets[0], workload.ROW_BYTES)
                            workload.check_rows("KvikIO", memory.get(outs[d])[:d],
                                                expected_rows(path, batches[d][0][:d], 4096), batches[d][0][:d])
                        drop_cached_pages(path)
                        read = partial(kvikio.read, rows, row_bytes=workload.ROW_BYTES)
                        kvikio_runs[d].append(reads_per_second(read, offsets, budget))
                        progress.step(f"file KvikIO depth {d} run {r + 1}")
        finally:
            if kvikio is not None:
                kvikio.close()

        for d in args.depths:
            ours = results.point("file", "agio-python", STORE, d, agio_runs[d], verified=True)
            if kvikio is not None:
                theirs = results.point("file", "kvikio", STORE, d, kvikio_runs[d], verified=True)
                results.compare("file", d, ours, theirs)
        results.info["file"] = {"uri": uri, "bytes": capacity, "kept": args.file is not None}
        _disk_ceiling(args, results, runtime.backend, path)


def _disk_ceiling(args: argparse.Namespace, results: Results, backend: str, path) -> None:
    """The disk's own ceiling at each depth (the C++ tool's CPU io_uring loop on the same file)
    beside agio's C++ reads: what no reader of this file can exceed, for reading the ratios."""
    reason = cpp_tool.missing_reason(args.cpp_tool, ["bench", "io"])
    if reason:
        results.note(reason)
        return
    drop_cached_pages(path)
    iops, info = cpp_tool.bench_io(args.cpp_tool, args, backend, file=path)
    results.info["cpp_bench_io_file"] = info
    for d in args.depths:
        results.point("file", "agio-cpp", STORE, d, [iops[d]])
        if d in info["cpu_ceiling_iops"]:
            results.point("file", "cpu-ceiling", STORE, d, [info["cpu_ceiling_iops"][d]])
