"""examples/python/dlrm.py runs as a user would run it, at a tiny size, on the backend under test,
on a ram: store and on a file: store: inference whose rows equal the staged tables, training
steps that change the rows they read, the tables flushed."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "python" / "dlrm.py"
TINY = ["--batch", "16", "--batches", "3", "--train-steps", "2", "--vocab-scale", "0.0001", "--vocab-cap", "500",
        "--dim", "8", "--bottom-width", "16", "--top-width", "16", "--cache-mib", "2"]


def _run(*args: str) -> str:
    done = subprocess.run([sys.executable, str(EXAMPLE), *TINY, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("store", ["ram", "file"])
def test_example_runs_inference_and_training(tmp_path, backend, store):
    uri = "ram:16M?lba=4096" if store == "ram" else f"file:{tmp_path / 'tables.bin'}?lba=4096&create=16M"
    out = _run("--backend", backend, "--store", uri)
    assert f"agio {backend} backend" in out
    assert "(real I/O)" in out if store == "file" else "(host memory)" in out
    assert "inference: 3 batches of 16" in out and "every row read equals the staged tables" in out
    losses = [float(x) for x in re.findall(r"training step \d: loss ([0-9.]+)", out)]
    assert len(losses) == 2
    changed = re.search(r"tables trained: (\d+) of the last batch's (\d+) rows read changed", out)
    assert changed and 0 < int(changed.group(1)) <= int(changed.group(2)) == 16 * 26


def test_example_refuses_a_bad_size():
    done = subprocess.run([sys.executable, str(EXAMPLE), "--batch", "0"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "--batch must be at least 1" in done.stderr
