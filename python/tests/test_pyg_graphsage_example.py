"""examples/python/graphsage.py runs as is, small, on the suite's backend: it trains (the loss
falls) and prints the feature-fetch time."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch_geometric")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "graphsage.py"


def test_graphsage_example_trains_from_a_file_store(tmp_path, backend):
    store = tmp_path / "features.bin"
    done = subprocess.run(
        [sys.executable, str(EXAMPLE), "--nodes", "5000", "--features", "32", "--steps", "30", "--batch-size",
         "128", "--cache-mib", "1", "--backend", backend, "--file", str(store)],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    losses = [float(v) for v in re.findall(r"loss (\d+\.\d+)", done.stdout)]
    assert len(losses) >= 3 and losses[-1] < losses[0]
    assert re.search(r"30 steps in [\d.]+ s; feature fetch [\d.]+ ms per batch", done.stdout), done.stdout
    assert "(real I/O)" in done.stdout and store.stat().st_size > 5000 * 32 * 4
