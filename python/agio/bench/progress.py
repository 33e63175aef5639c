"""Progress on stderr: a tqdm bar when tqdm is installed, plain lines otherwise."""

from __future__ import annotations

import importlib.util
import sys


class Progress:
    def __init__(self) -> None:
        self._done = 0
        self._total = 0
        self._bar = None
        self._tqdm = importlib.util.find_spec("tqdm") is not None

    def add(self, runs: int) -> None:
        """Announces `runs` more measurements (the bar appears with the first)."""
        self._total += runs
        if self._tqdm and self._bar is None:
            from tqdm import tqdm

            self._bar = tqdm(total=self._total, unit="run", file=sys.stderr, dynamic_ncols=True)
        elif self._bar is not None:
            self._bar.total = self._total
            self._bar.refresh()

    def step(self, label: str) -> None:
        """One measurement done."""
        self._done += 1
        if self._bar is not None:
            self._bar.set_description_str(label)
            self._bar.update(1)
        else:
            print(f"[{self._done}/{self._total}] {label}", file=sys.stderr, flush=True)

    def say(self, line: str) -> None:
        """A line of its own, kept clear of the bar."""
        if self._bar is not None:
            self._bar.write(line, file=sys.stderr)
        else:
            print(line, file=sys.stderr, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
