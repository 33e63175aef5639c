"""python -m agio.bench --experiments graphsage at a tiny size: fetch and epoch times of the three
systems on the same batches, the speed-up over numpy.memmap held to its target, and loss curves
of agio and host memory that are identical."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch_geometric")

from agio.bench import harness  # noqa: E402


def test_graphsage_experiment_times_three_systems_on_the_same_batches(tmp_path, backend):
    out = tmp_path / "bench.json"
    assert harness.main(["--quick", "--experiments", "graphsage", "--repeats", "2", "--backend", backend,
                         "--pyg-nodes", "3000", "--pyg-features", "32", "--pyg-steps", "3", "--pyg-batch-size", "64",
                         "--pyg-cache-mib", "1", "--pyg-dir", str(tmp_path), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    for experiment in ("graphsage-fetch", "graphsage-epoch"):
        points = {p["system"]: p for p in doc["points"] if p["experiment"] == experiment}
        assert sorted(points) == ["agio-python", "host-memory", "numpy-memmap"]
        for p in points.values():
            assert len(p["repeats"]) == 2 and min(p["repeats"]) > 0 and p["nodes"] == 3000
        assert "(real I/O)" in points["agio-python"]["store"] and "(real I/O" in points["numpy-memmap"]["store"]
    curves = {p["system"]: p["loss_curve"] for p in doc["points"] if p["experiment"] == "graphsage-epoch"}
    assert len(curves["agio-python"]) == 3 and curves["agio-python"] == curves["host-memory"]
    assert doc["graphsage"]["loss_max_abs_difference_agio_vs_host_memory"] == 0
    (speedup,) = [c for c in doc["comparisons"] if c["experiment"] == "graphsage-fetch"]
    assert speedup["numerator"] == "numpy-memmap" and speedup["denominator"] == "agio-python"
    (target,) = [t for t in doc["targets"] if t["experiment"] == "graphsage-fetch"]
    assert target["met"] is not None
    assert not list(tmp_path.glob("agio-graphsage-*"))  # the features' file is removed
