"""The results of a run: points (every repeat and their median), agio-to-comparator ratios, the
targets they are held to, lines saying what was skipped; the JSON document (the C++ harness's
header: benchmark, device, date, command, commit, driver, then config and points) and the
summary table."""

from __future__ import annotations

import argparse
import datetime
import json
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .measure import summary


@dataclass(frozen=True)
class Target:
    experiment: str
    text: str
    ratio: float  # each ratio of the experiment must be at least this
    from_depth: int = 1  # ... at this many requests in flight and more
    against: str = ""  # ... where the comparator's system starts with this (either side: speedup puts it on top)


TARGETS = (
    Target("file", "file: agio >= 3x KvikIO from 64 in flight", 3.0, 64),
    Target("file", "file: agio never slower than KvikIO", 1.0),
    Target("ram", "ram: Python >= 0.9x C++ bench io (emulation)", 0.9),
    Target("gather", "gather: Python Array >= 0.8x C++ bench gather", 0.8),
    Target("graphsage-fetch", "graphsage: agio feature fetch >= 2x faster than numpy.memmap, same cache budget", 2.0,
           against="numpy-memmap-budget"),
    Target("dlrm", "dlrm: agio >= 2x tables in pinned host memory (CPU lookup + copy)", 2.0, against="host-cpu-lookup"),
    Target("dlrm", "dlrm: Python agio within 1.25x of C++ agio-eval (>= 0.8x its rate)", 0.8, against="agio-cpp"),
)


@dataclass
class Results:
    points: list[dict] = field(default_factory=list)
    comparisons: list[dict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)  # agio, kvikio, the C++ tool's settings

    def point(self, experiment: str, system: str, store: str, depth: int | None, values: Sequence[float],
              unit: str = "reads/s", **extra: Any) -> dict:
        p = {"experiment": experiment, "system": system, "store": store, "depth": depth, "unit": unit,
             "repeats": list(values), **summary(values), **extra}
        self.points.append(p)
        return p

    def note(self, line: str) -> None:
        """A line saying what was not measured and why, or how to read a figure (printed once, at
        the end, and kept in the JSON); a line already noted is not repeated."""
        if line not in self.notes:
            self.notes.append(line)

    def compare(self, experiment: str, depth: int | None, agio_point: dict, other: dict, **extra: Any) -> None:
        """The ratio of the medians, agio's (Python) over the comparator's."""
        self.comparisons.append({
            "experiment": experiment, "depth": depth, "numerator": agio_point["system"],
            "denominator": other["system"], "ratio": agio_point["median"] / other["median"], **extra,
        })

    def speedup(self, experiment: str, depth: int | None, agio_point: dict, other: dict) -> None:
        """For times (lower is better): the ratio of the medians, the comparator's over agio's."""
        self.comparisons.append({
            "experiment": experiment, "depth": depth, "numerator": other["system"],
            "denominator": agio_point["system"], "ratio": other["median"] / agio_point["median"],
        })


def judge(results: Results) -> list[dict]:
    """Each target: met (true, false, or null when not measured) and the ratios behind it."""
    verdicts = []
    for t in TARGETS:
        held = [c for c in results.comparisons
                if c["experiment"] == t.experiment and (c["depth"] is None or c["depth"] >= t.from_depth)
                and (c["denominator"].startswith(t.against) or c["numerator"].startswith(t.against))]
        v = {"target": t.text, "experiment": t.experiment, "ratio": t.ratio, "from_depth": t.from_depth,
             "met": None, "result": "not measured"}
        if held:
            worst = min(held, key=lambda c: c["ratio"])
            v["met"] = all(c["ratio"] >= t.ratio for c in held)
            where = f" at depth {worst['depth']}" if worst["depth"] is not None else ""
            v["result"] = f"lowest {worst['ratio']:.2f}x{where}" if len(held) > 1 else f"{worst['ratio']:.2f}x"
        verdicts.append(v)
    return verdicts


def _command_output(cmd: list[str]) -> str | None:
    if shutil.which(cmd[0]) is None:
        return None
    try:
        done = subprocess.run(cmd, check=False, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def document(args: argparse.Namespace, argv: Sequence[str], device: str, results: Results) -> dict:
    config = {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}
    driver = _command_output(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
    return {
        "benchmark": "python",
        "device": device,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": " ".join(["python -m agio.bench", *argv]),
        "commit": _command_output(["git", "rev-parse", "--short", "HEAD"]) or "unknown",
        "driver": f"NVIDIA driver {driver.splitlines()[0]}" if driver else "none",
        "host": socket.gethostname(),
        "python": sys.version.split()[0],
        **results.info,
        "config": config,
        "points": results.points,
        "comparisons": results.comparisons,
        "targets": judge(results),
        "notes": results.notes,
    }


def save(doc: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    # default=str: counters a newer agio reports as objects of its own are kept in words.
    path.write_text(json.dumps(doc, indent=1, default=str) + "\n")


def summary_table(doc: dict) -> str:
    """The ratios per depth, then each target and whether it is met."""
    lines = []
    for c in doc["comparisons"]:
        where = f"depth {c['depth']:>5}" if c["depth"] is not None else f"{c.get('series', ''):<11}"
        lines.append(f"  {c['experiment']:<7}{where}  {c['numerator']} / {c['denominator']}: {c['ratio']:.2f}x")
    width = max(len(t["target"]) for t in doc["targets"])
    lines.append(f"  {'target':<{width}}  {'result':<24} met")
    for t in doc["targets"]:
        met = {True: "yes", False: "NO", None: "-"}[t["met"]]
        lines.append(f"  {t['target']:<{width}}  {t['result']:<24} {met}")
    return "\n".join(lines)
