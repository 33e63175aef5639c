"""Timing a batch-read call at one depth, and the statistics of several runs."""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Budget:
    """How long one run of a point lasts: `seconds` of wall time, or `reads` reads."""

    seconds: float | None
    reads: int | None

    def batches(self, rows: int) -> int | None:
        return None if self.reads is None else max(1, math.ceil(self.reads / rows))


def reads_per_second(read_batch: Callable[[Any], Any], batches: Sequence[Any], budget: Budget) -> float:
    """Calls read_batch(batches[i]) for i = 1, 2, ... (cycling) until the budget is spent and
    returns reads per second. batches[0] is read once before the clock starts, so that first-call
    costs (allocations, lazy initialisation) stay out of the figure."""
    read_batch(batches[0])
    rows = len(batches[0])
    calls = budget.batches(rows)
    done = 0
    i = 1
    start = time.perf_counter()
    while True:
        read_batch(batches[i % len(batches)])
        i += 1
        done += 1
        elapsed = time.perf_counter() - start
        if (done >= calls) if calls is not None else (elapsed >= budget.seconds):
            return done * rows / elapsed


def summary(values: Sequence[float]) -> dict:
    """The median of the runs, their range and the spread ((max - min) / median)."""
    median = statistics.median(values)
    return {
        "median": median,
        "min": min(values),
        "max": max(values),
        "spread": (max(values) - min(values)) / median if median else 0.0,
    }
