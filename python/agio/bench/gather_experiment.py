"""gather: `agio.Array` gathers of --gather-rows random rows of --gather-row-bytes from a table
--gather-table-factor times the HBM cache, on a ram: store (an emulation), beside the C++
`agio bench gather` doing the same gather through the cache. The table is written first with
each row's index in its first 8 bytes, so that every gathered row is checked. One gather warms
the cache; each timed gather is one repeat."""

from __future__ import annotations

import argparse
import time

import numpy as np

import agio

from . import cpp_tool, workload
from .memory import Memory
from .progress import Progress
from .report import Results

STORE = "ram: store (emulation), rows read through agio's HBM cache"
_FILL_BYTES = 16 << 20


def missing_reason() -> str | None:
    if not hasattr(agio, "Array"):
        return "agio.Array is not in this build: the gather experiment is skipped"
    return None


def _shape(args: argparse.Namespace) -> tuple[int, int, int]:
    """Cache bytes, table rows and table bytes."""
    row = args.gather_row_bytes
    if row % 8 or not (4096 % row == 0 or row % 4096 == 0):
        raise ValueError(f"agio.bench: --gather-row-bytes {row} must divide 4096 or be a multiple of it, "
                         "and be a multiple of 8")
    cache = args.gather_cache_mib << 20
    table = cache * args.gather_table_factor
    return cache, table // row, table


def _fill(dev, memory: Memory, table_bytes: int, row_bytes: int) -> None:
    """Writes the table: zeros, each row's index (int64) in its first 8 bytes."""
    chunk = max(_FILL_BYTES // row_bytes * row_bytes // 4096 * 4096, 4096 * row_bytes)
    for start in range(0, table_bytes, chunk):
        size = min(chunk, table_bytes - start)
        first = start // row_bytes
        rows = np.zeros((size // row_bytes, row_bytes), np.uint8)
        rows[:, :8] = np.arange(first, first + len(rows), dtype="<i8").view(np.uint8).reshape(-1, 8)
        blocks = rows.reshape(-1, 4096)
        dev.write(start + np.arange(len(blocks), dtype=np.int64) * 4096, memory.put(blocks))


def run(args: argparse.Namespace, results: Results, progress: Progress) -> None:
    reason = missing_reason()
    if reason:
        results.note(reason)
        return
    cache_bytes, table_rows, table_bytes = _shape(args)
    store = f"ram:{-(-table_bytes // (1 << 20))}M?lba=4096"
    # Controller threads as the C++ tool has them (its default: one per two queue pairs).
    rt = agio.Runtime(backend=args.backend, completion=args.completion)
    dev = rt.attach(store, queue_pairs=args.queue_pairs, queue_depth=args.queue_depth)
    memory = Memory(rt.backend)
    index = np.random.default_rng([args.seed, 2]).integers(0, table_rows, size=args.gather_rows, dtype=np.int64)
    indices = memory.put(index)
    out = memory.rows(args.gather_rows, args.gather_row_bytes)
    cpp_reason = cpp_tool.missing_reason(args.cpp_tool, ["bench", "gather"])
    if cpp_reason:
        results.note(cpp_reason)
    progress.add(args.repeats + (0 if cpp_reason else 1))

    runs = []
    with rt:
        results.info.setdefault("agio", workload.describe(rt))
        progress.say(f"gather: writing the {table_bytes >> 20} MiB table")
        _fill(dev, memory, table_bytes, args.gather_row_bytes)
        arr = agio.Array(dev, np.uint8, (table_rows, args.gather_row_bytes), cache_bytes=cache_bytes)
        arr.gather(indices, out=out)
        memory.synchronize()
        got = np.ascontiguousarray(memory.get(out[:, :8])).view("<i8").ravel()
        if not np.array_equal(got, index):
            wrong = int(np.flatnonzero(got != index)[0])
            raise RuntimeError(f"agio.bench: Array.gather returned row {got[wrong]} for index {index[wrong]} "
                               f"(position {wrong})")
        for r in range(args.repeats):
            arr.reset_counters()
            start = time.perf_counter()
            arr.gather(indices, out=out)
            memory.synchronize()
            runs.append(args.gather_rows / (time.perf_counter() - start))
            progress.step(f"gather agio run {r + 1}")
        counters = arr.counters()

    shape = {"rows": args.gather_rows, "row_bytes": args.gather_row_bytes, "table_rows": table_rows,
             "cache_bytes": cache_bytes, "uri": store}
    ours = results.point("gather", "agio-python", STORE, None, runs, unit="rows/s", verified=True,
                         counters_last_run=counters, **shape)
    if not cpp_reason:
        theirs_runs, info = cpp_tool.bench_gather(args.cpp_tool, args, rt.backend, store)
        progress.step("gather C++ bench gather")
        results.info["cpp_bench_gather"] = info
        theirs = results.point("gather", "agio-cpp", STORE, None, theirs_runs, unit="rows/s", **shape)
        results.compare("gather", None, ours, theirs)
