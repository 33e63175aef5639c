"""What the read experiments share: the runtime they read through, configured from the command
line, and the random 4 KiB-aligned offsets every reader of a depth gets in the same order."""

from __future__ import annotations

import argparse

import numpy as np

import agio

ROW_BYTES = 4096
# Offsets drawn per depth; a run longer than this many reads cycles through them again.
POOL_READS = 1 << 18


def batch_rows(depth: int) -> int:
    """Rows in one agio call at `depth` requests in flight (dev.read(..., in_flight=depth)): many
    per thread, so that the call's cost (its launch, and its end, when fewer than `depth` rows
    are left) is shared by many reads, as a user reading a large batch would have it."""
    return max(depth, min(256 * depth, 131072))


def runtime(args: argparse.Namespace, uri: str) -> agio.Runtime:
    """A runtime (not started) with one store, set up as the C++ tool sets up its own for the
    same point: 4 KiB transfers, the command line's queues, controller threads and completion."""
    rt = agio.Runtime(
        backend=args.backend,
        completion=args.completion,
        controller_threads=args.controller_threads,
        max_transfer_bytes=ROW_BYTES,
    )
    rt.attach(uri, queue_pairs=args.queue_pairs, queue_depth=args.queue_depth)
    return rt


def offset_batches(capacity_bytes: int, depth: int, seed: int) -> np.ndarray:
    """A (batches, batch_rows(depth)) int64 array of random ROW_BYTES-aligned byte offsets below
    capacity. A reader that keeps only `depth` in flight by itself (KvikIO's futures) takes the
    first `depth` of each batch."""
    blocks = capacity_bytes // ROW_BYTES
    rng = np.random.default_rng([seed, depth])
    rows = batch_rows(depth)
    batches = max(2, POOL_READS // rows)
    return rng.integers(0, blocks, size=(batches, rows), dtype=np.int64) * ROW_BYTES


def describe(rt: agio.Runtime) -> dict:
    """agio's build and the started runtime, for the JSON document."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        package = version("agio")
    except PackageNotFoundError:
        package = "unknown"
    return {"version": package, "cuda_backend": agio.cuda_backend, "backend": rt.backend, "describe": rt.describe()}


def check_rows(what: str, got: np.ndarray, expected: np.ndarray, offsets: np.ndarray) -> None:
    """Raises if a reader returned other bytes than the store holds: a benchmark of wrong reads
    measures nothing."""
    bad = np.flatnonzero((got != expected).any(axis=1))
    if bad.size:
        raise RuntimeError(
            f"agio.bench: {what} returned wrong data for {bad.size} of {len(offsets)} rows, the first "
            f"at byte offset {int(offsets[bad[0]])}"
        )
