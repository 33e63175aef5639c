"""The C++ agio tool as a comparator: `agio bench io` pinned to the ram experiment's points,
`agio bench gather`, and `agio-eval dlrm` at the dlrm experiment's configuration. Each
invocation is one small function, so that option names can follow the tool; each run has a
deadline."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
from pathlib import Path


def missing_reason(tool: Path | None, command: list[str], option: str = "--cpp-tool", program: str = "agio"
                   ) -> str | None:
    """Why `tool command` cannot run, or None. `option` is where the tool was given, `program`
    its name in the lines that say so."""
    name = " ".join(command)
    if tool is None:
        return f"no {option} given: the comparison with the C++ '{program} {name}' is skipped"
    if not (tool.is_file() and os.access(tool, os.X_OK)):
        return f"{option} {tool} is not an executable file: the comparison with '{program} {name}' is skipped"
    try:
        done = subprocess.run([str(tool), *command, "--help"], check=False, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return f"{tool} {name} --help failed ({e}): the comparison is skipped"
    if done.returncode != 0:
        return f"{tool} has no '{name}' command: the comparison is skipped"
    return None


def _run_json(cmd: list[str], out: Path, timeout_s: float) -> dict:
    try:
        done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"agio.bench: {' '.join(cmd)} did not finish within {timeout_s:.0f} s") from None
    if done.returncode != 0:
        raise RuntimeError(f"agio.bench: {' '.join(cmd)} exited {done.returncode}: {done.stderr.strip()[-2000:]}")
    return json.loads(out.read_text())


def bench_io(tool: Path, args: argparse.Namespace, backend: str, file: Path | None = None
             ) -> tuple[dict[int, float], dict]:
    """One run of `agio bench io` at the experiment's points (4 KiB random reads from a ram:
    store of --ram-gib, or from `file`, every depth, the same queues, controller threads and
    completion as the Python side): agio's reads per second by depth, and the tool's config as
    its JSON gives it, with the store's own ceiling (a CPU io_uring loop) by depth."""
    series = "ram" if file is None else "file"
    with tempfile.TemporaryDirectory(prefix="agio-bench-") as tmp:
        out = Path(tmp) / "io.json"
        store = ["--ram-gib", repr(args.ram_gib)] if file is None else ["--file", str(file)]
        cmd = [str(tool), "bench", "io", "--experiments", series, "--io-bytes", "4096", "--ops", "read",
               "--outstanding", ",".join(map(str, args.depths)), *store,
               "--queue-pairs", str(args.queue_pairs), "--queue-depth", str(args.queue_depth),
               "--controller-threads", str(args.controller_threads), "--completion", args.completion,
               "--backend", backend]
        if args.seconds is not None:
            cmd += ["--seconds", repr(args.seconds)]
        # Each depth runs agio and the store's CPU ceiling, each for --seconds after a calibration.
        doc = _run_json(cmd + ["--out", str(out)], out, 300 + 4 * len(args.depths) * (args.seconds or 1.0))
    iops = {p["outstanding"]: p["iops"] for p in doc["points"]
            if p["system"] == "agio" and p["op"] == "read" and p["io_bytes"] == 4096 and p["series"] == series}
    missing = [d for d in args.depths if d not in iops]
    if missing:
        raise RuntimeError(f"agio.bench: agio bench io gave no point for depths {missing}: {doc['points']}")
    ceiling = {p["outstanding"]: p["iops"] for p in doc["points"] if p["system"] == "cpu-ceiling"}
    return iops, {"device": doc.get("device"), "commit": doc.get("commit"), "config": doc.get("config"),
                  "command": " ".join(cmd), "cpu_ceiling_iops": ceiling}


def bench_gather(tool: Path, args: argparse.Namespace, backend: str, store_uri: str) -> tuple[list[float], dict]:
    """`agio bench gather` with the gather experiment's shape: rows gathered per second, one value
    per repeat, and the tool's document header."""
    with tempfile.TemporaryDirectory(prefix="agio-bench-") as tmp:
        out = Path(tmp) / "gather.json"
        cmd = [str(tool), "bench", "gather", "--rows", str(args.gather_rows), "--row-bytes",
               str(args.gather_row_bytes), "--table-factor", str(args.gather_table_factor), "--cache",
               f"{args.gather_cache_mib}M", "--store", store_uri, "--repeats", str(args.repeats),
               "--queue-pairs", str(args.queue_pairs), "--queue-depth", str(args.queue_depth),
               "--completion", args.completion, "--backend", backend]
        doc = _run_json(cmd + ["--out", str(out)], out, 600)
    return gather_rows_per_second(doc), {"device": doc.get("device"), "commit": doc.get("commit"),
                                         "config": doc.get("config"), "command": " ".join(cmd)}


def gather_rows_per_second(doc: dict) -> list[float]:
    """Rows per second of each gather point: its rows_per_s (or rows_per_second), else rows /
    seconds."""
    values = []
    for p in doc.get("points", []):
        rate = p.get("rows_per_s", p.get("rows_per_second"))
        if rate is None and p.get("seconds"):
            rate = p.get("rows", 0) / p["seconds"]
        if rate:
            values.append(float(rate))
    if not values:
        raise RuntimeError(f"agio.bench: no rows per second in agio bench gather's points: {doc.get('points')}")
    return values


def eval_dlrm(tool: Path, args: argparse.Namespace, backend: str, store_uri: str, vocab_cap: int, cache_mib: int
              ) -> tuple[dict[str, dict], dict]:
    """`agio-eval dlrm` at the dlrm experiment's configuration: configuration 1, modes sync and
    async, the same store, cache, batch, batches, tables (scale, cap, alpha, seed), network
    widths, queues and repeats. Its points by mode (seconds for all batches, the median of the
    repeats; verified against its own HBM run) and its document header."""
    with tempfile.TemporaryDirectory(prefix="agio-bench-") as tmp:
        out = Path(tmp) / "dlrm.json"
        cmd = [str(tool), "dlrm", "--backend", backend, "--experiments", "configs", "--configs", "1",
               "--modes", "async,sync", "--store", store_uri, "--cache-mib", str(cache_mib),
               "--batch", str(args.dlrm_batch), "--batches", str(args.dlrm_batches), "--reps", str(args.repeats),
               "--vocab-scale", repr(args.dlrm_vocab_scale), "--vocab-cap", str(vocab_cap),
               "--alpha", repr(args.dlrm_alpha), "--seed", str(args.seed), "--dim", str(args.dlrm_dim),
               "--bottom-width", str(args.dlrm_bottom_width), "--top-width", str(args.dlrm_top_width),
               "--queue-pairs", str(args.queue_pairs), "--queue-depth", str(args.queue_depth)]
        doc = _run_json(cmd + ["--out", str(out)], out, 1800)
    modes = {p["mode"]: p for p in doc.get("points", []) if p.get("point") == "config1"}
    missing = [m for m in ("sync", "async") if m not in modes]
    if missing:
        raise RuntimeError(f"agio.bench: agio-eval dlrm gave no config1 point for modes {missing}: {doc.get('points')}")
    return modes, {"device": doc.get("device"), "commit": doc.get("commit"), "config": doc.get("config"),
                   "command": " ".join(cmd)}
