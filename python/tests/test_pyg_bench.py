"""python -m agio.bench --experiments graphsage at a tiny size: fetch and epoch times of every
system on the same batches, the speed-up over numpy.memmap held to its target against the memory
map with agio's cache budget (or that series skipped with a note saying why, where this machine
cannot make a memory-limited cgroup), agio's cache counters per run, and loss curves of agio and
host memory that are identical."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch_geometric")

from agio.bench import harness  # noqa: E402


def test_graphsage_experiment_times_every_system_on_the_same_batches(tmp_path, backend):
    out = tmp_path / "bench.json"
    assert harness.main(["--quick", "--experiments", "graphsage", "--repeats", "2", "--backend", backend,
                         "--pyg-nodes", "3000", "--pyg-features", "32", "--pyg-steps", "3", "--pyg-batch-size", "64",
                         "--pyg-cache-mib", "1", "--pyg-dir", str(tmp_path), "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    skipped = [n for n in doc["notes"] if "numpy-memmap-budget series" in n]
    budgeted = [] if skipped else ["numpy-memmap-budget"]
    for experiment in ("graphsage-fetch", "graphsage-epoch"):
        points = {p["system"]: p for p in doc["points"] if p["experiment"] == experiment}
        assert sorted(points) == sorted(["agio-python", "host-memory", "numpy-memmap-unbounded", *budgeted])
        for p in points.values():
            assert len(p["repeats"]) == 2 and min(p["repeats"]) > 0 and p["nodes"] == 3000
        assert "(real I/O)" in points["agio-python"]["store"]
        assert "page cache unbounded" in points["numpy-memmap-unbounded"]["store"]
    fetch = {p["system"]: p for p in doc["points"] if p["experiment"] == "graphsage-fetch"}
    counters = fetch["agio-python"]["cache_per_run"]
    assert len(counters) == 2 and all(c["misses"] > 0 and 0 <= c["hit_rate"] <= 1 for c in counters)
    curves = {p["system"]: p["loss_curve"] for p in doc["points"] if p["experiment"] == "graphsage-epoch"}
    assert len(curves["agio-python"]) == 3 and curves["agio-python"] == curves["host-memory"]
    assert doc["graphsage"]["loss_max_abs_difference_agio_vs_host_memory"] == 0
    speedups = [c for c in doc["comparisons"] if c["experiment"] == "graphsage-fetch"]
    assert sorted(c["numerator"] for c in speedups) == sorted(["numpy-memmap-unbounded", *budgeted])
    assert all(c["denominator"] == "agio-python" for c in speedups)
    (target,) = [t for t in doc["targets"] if t["experiment"] == "graphsage-fetch"]
    if skipped:  # the target is against the budgeted memory map only: not measured without it
        assert len(skipped) == 1 and target["met"] is None
    else:
        assert target["met"] is not None
        budgets = fetch["numpy-memmap-budget"]["budget_per_run"]
        assert len(budgets) == 2 and all(b["memory_high_bytes"] > b["cache_bytes"] == 1 << 20 for b in budgets)
    assert not list(tmp_path.glob("agio-graphsage-*"))  # the features' and batches' files are removed


@pytest.fixture
def fake_cgroup(tmp_path, monkeypatch):
    """A directory that stands for the budget's cgroup (its memory.current, memory.stat and
    memory.events written beforehand, the limit written into it), so that the parent's and
    child's protocol runs without root."""
    import contextlib

    from agio.bench import graphsage_experiment, page_cache_budget

    group = tmp_path / "cgroup"
    group.mkdir()
    (group / "memory.current").write_text(f"{300 << 20}\n")
    (group / "memory.stat").write_text(f"anon {290 << 20}\nfile {10 << 20}\n")
    (group / "memory.events").write_text("low 0\nhigh 3\nmax 0\noom 0\noom_kill 0\n")
    monkeypatch.setattr(graphsage_experiment, "_budget_root", lambda args, torch: (tmp_path, None))
    monkeypatch.setattr(page_cache_budget, "_cgroup", lambda root: contextlib.nullcontext(group))
    return group


def _run_on_cpu(tmp_path, *extra: str) -> dict:
    out = tmp_path / "bench.json"
    assert harness.main(["--quick", "--experiments", "graphsage", "--repeats", "1", "--backend", "cpu",
                         "--pyg-nodes", "2000", "--pyg-features", "16", "--pyg-steps", "3", "--pyg-batch-size", "32",
                         "--pyg-cache-mib", "1", "--pyg-dir", str(tmp_path), "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_the_budgeted_memory_map_runs_in_its_child_on_a_fake_cgroup(tmp_path, fake_cgroup):
    doc = _run_on_cpu(tmp_path)
    curves = {p["system"]: p for p in doc["points"] if p["experiment"] == "graphsage-epoch"}
    assert curves["numpy-memmap-budget"]["loss_curve"] == curves["numpy-memmap-unbounded"]["loss_curve"]
    (budget,) = next(p for p in doc["points"] if p["system"] == "numpy-memmap-budget")["budget_per_run"]
    assert budget["memory_high_bytes"] == (300 << 20) + budget["working_bytes"] + (1 << 20)
    assert budget["page_cache_bytes_at_end"] == 10 << 20
    assert budget["times_over_high"] == 3
    assert budget["file_cached_bytes_at_end"] > 0  # the tiny file, read through the memory map
    assert int((fake_cgroup / "memory.high").read_text()) == budget["memory_high_bytes"]
    assert not (fake_cgroup / "memory.max").exists()  # past the budget the kernel reclaims, it does not kill
    (target,) = [t for t in doc["targets"] if t["experiment"] == "graphsage-fetch"]
    assert target["met"] is not None
    assert all(p["steps_compared"] == 3 for p in doc["points"] if p["experiment"] == "graphsage-fetch")


def test_a_budgeted_run_past_its_deadline_stops_and_every_fetch_is_compared_over_its_steps(tmp_path, fake_cgroup):
    doc = _run_on_cpu(tmp_path, "--pyg-budget-seconds", "1e-9")
    fetch = {p["system"]: p for p in doc["points"] if p["experiment"] == "graphsage-fetch"}
    assert sorted(fetch) == ["agio-python", "host-memory", "numpy-memmap-budget", "numpy-memmap-unbounded"]
    assert all(p["steps_compared"] == 1 and "first 1 batches" in p["unit"] for p in fetch.values())
    epochs = {p["system"] for p in doc["points"] if p["experiment"] == "graphsage-epoch"}
    assert epochs == {"agio-python", "host-memory", "numpy-memmap-unbounded"}
    assert any("numpy-memmap-budget stopped at --pyg-budget-seconds" in n and "after 1 of 3 steps" in n
               for n in doc["notes"])
    (target,) = [t for t in doc["targets"] if t["experiment"] == "graphsage-fetch"]
    assert target["met"] is not None


def test_a_budgeted_run_whose_page_cache_was_starved_is_not_compared(tmp_path, fake_cgroup, monkeypatch):
    from agio.bench import graphsage_experiment

    monkeypatch.setattr(graphsage_experiment, "cached_bytes", lambda path: 0)  # none of the file left cached
    doc = _run_on_cpu(tmp_path)
    assert any("less than half its page-cache budget of the file cached" in n for n in doc["notes"])
    assert not [c for c in doc["comparisons"] if c["numerator"] == "numpy-memmap-budget"]
    (target,) = [t for t in doc["targets"] if t["experiment"] == "graphsage-fetch"]
    assert target["met"] is None
    (budget,) = next(p for p in doc["points"] if p["system"] == "numpy-memmap-budget")["budget_per_run"]
    assert budget["anon_bytes_at_end"] == 290 << 20 and budget["file_cached_bytes_at_end"] == 0
