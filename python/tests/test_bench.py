"""python -m agio.bench at a tiny size: the document's structure, every figure positive, the
comparisons and their targets, and the lines that say what was skipped."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest

import agio
from agio.bench import harness, options, report, workload

REPO = Path(__file__).resolve().parents[2]
TINY = ["--quick", "--depths", "1,4", "--repeats", "2", "--seconds", "0.02", "--file-gib", "0.004",
        "--ram-gib", "0.004", "--queue-pairs", "2", "--queue-depth", "64", "--controller-threads", "1"]


TINY_DLRM = ["--experiments", "dlrm", "--dlrm-batch", "16", "--dlrm-batches", "3", "--dlrm-vocab-scale", "0.0001",
             "--dlrm-vocab-cap", "2000", "--dlrm-file-vocab-cap", "2000", "--dlrm-cache-mib", "2",
             "--dlrm-file-cache-mib", "2", "--dlrm-ram-store", "ram:16M?lba=4096&profile=agile-ssd", "--dlrm-dim", "8",
             "--dlrm-bottom-width", "16", "--dlrm-top-width", "16"]


def _cpp_eval() -> Path | None:
    """agio-eval: AGIO_BENCH_CPP_EVAL, or the CPU build's (built with AGIO_BUILD_EVAL=ON)."""
    named = os.environ.get("AGIO_BENCH_CPP_EVAL")
    tool = Path(named) if named else REPO / "build-cpu" / "eval" / "agio-eval"
    return tool if tool.is_file() else None


def _cpp_tool() -> Path | None:
    """The C++ tool: AGIO_BENCH_CPP_TOOL, or the CPU build's (scripts/test.sh builds it)."""
    named = os.environ.get("AGIO_BENCH_CPP_TOOL")
    tool = Path(named) if named else REPO / "build-cpu" / "tools" / "agio"
    return tool if tool.is_file() else None


def _run(tmp_path: Path, backend: str, *extra: str) -> dict:
    out = tmp_path / "bench.json"
    assert harness.main([*TINY, "--backend", backend, "--out", str(out), *extra]) == 0
    return json.loads(out.read_text())


def test_quick_run_measures_every_depth_and_says_what_it_skipped(tmp_path, backend):
    not_a_tool = tmp_path / "agio"
    not_a_tool.write_text("")
    doc = _run(tmp_path, backend, "--experiments", "file,ram,gather", "--cpp-tool", str(not_a_tool))

    for key in ("benchmark", "device", "date", "command", "commit", "driver", "host", "agio", "config", "points",
                "comparisons", "targets", "notes"):
        assert key in doc, key
    assert doc["agio"]["backend"] == backend
    assert doc["config"]["depths"] == [1, 4]
    for experiment in ("file", "ram"):
        points = [p for p in doc["points"] if p["experiment"] == experiment and p["system"] == "agio-python"]
        assert [p["depth"] for p in points] == [1, 4]
        for p in points:
            assert len(p["repeats"]) == 2 and min(p["repeats"]) > 0
            assert p["min"] <= p["median"] <= p["max"]
    assert "(real I/O)" in doc["points"][0]["store"]
    assert any("(emulation)" in p["store"] for p in doc["points"] if p["experiment"] == "ram")

    # The C++ comparison is skipped with one line naming the tool; nothing of it is measured.
    assert [n for n in doc["notes"] if "is not an executable file" in n and "bench io" in n]
    assert not [p for p in doc["points"] if p["system"] == "agio-cpp"]
    ram_target = next(t for t in doc["targets"] if t["experiment"] == "ram")
    assert ram_target["met"] is None and ram_target["result"] == "not measured"
    if not hasattr(agio, "Array"):
        assert "agio.Array is not in this build: the gather experiment is skipped" in doc["notes"]
    if backend == "cpu" or not [p for p in doc["points"] if p["system"] == "kvikio"]:
        assert [n for n in doc["notes"] if "KvikIO" in n]


def test_ram_experiment_sets_python_beside_the_cpp_tool_at_the_same_points(tmp_path, backend):
    tool = _cpp_tool()
    if tool is None:
        pytest.skip("no C++ agio tool (build-cpu/tools/agio, or AGIO_BENCH_CPP_TOOL)")
    doc = _run(tmp_path, backend, "--experiments", "ram", "--cpp-tool", str(tool))
    ratios = {c["depth"]: c["ratio"] for c in doc["comparisons"] if c["experiment"] == "ram"}
    assert sorted(ratios) == [1, 4] and min(ratios.values()) > 0
    command = doc["cpp_bench_io"]["command"]
    for pinned in ("--outstanding 1,4", "--io-bytes 4096", "--ops read", "--queue-pairs 2", "--queue-depth 64",
                   "--controller-threads 1", f"--backend {backend}"):
        assert pinned in command
    assert doc["cpp_bench_io"]["config"]["ram"] == doc["points"][0]["uri"]


@pytest.mark.skipif(not hasattr(agio, "Array"), reason="agio.Array is not in this build")
def test_gather_experiment_checks_every_row_and_reports_rows_per_second(tmp_path, backend):
    doc = _run(tmp_path, backend, "--experiments", "gather", "--gather-rows", "4096", "--gather-cache-mib", "1")
    (point,) = [p for p in doc["points"] if p["experiment"] == "gather"]
    assert point["verified"] and point["unit"] == "rows/s" and min(point["repeats"]) > 0
    assert point["table_rows"] * point["row_bytes"] == 4 * point["cache_bytes"]


def test_dlrm_experiment_runs_every_mode_on_the_same_batches_and_checks_them(tmp_path, backend):
    pytest.importorskip("torch")
    cpp_eval = _cpp_eval()
    extra = ["--cpp-eval", str(cpp_eval)] if cpp_eval else []
    doc = _run(tmp_path, backend, *TINY_DLRM, *extra)
    points = [p for p in doc["points"] if p["experiment"] == "dlrm"]
    for series, label in (("ram", "(emulation)"), ("file", "(real I/O)")):
        systems = {p["system"]: p for p in points if p["series"] == series}
        assert "hbm" in systems
        for p in systems.values():
            assert p["unit"] == "samples/s" and p["batch"] == 16 and p["batches"] == 3 and p["verified"]
            assert min(p["repeats"]) > 0 and p["min"] <= p["median"] <= p["max"]
        assert label in doc["dlrm"][series]["store"]
        assert all(label in p["store"] for name, p in systems.items() if name.startswith("agio"))
        assert len(doc["dlrm"][series]["vocab"]) == 26 and max(doc["dlrm"][series]["vocab"]) == 2000
        if backend == "cpu":
            assert "host-cpu-lookup" not in systems and "uvm" not in systems
        else:
            assert "host-cpu-lookup" in systems
            assert "uvm" in systems or [n for n in doc["notes"] if n.startswith("dlrm: (c)")]
        if cpp_eval:
            assert {"agio-cpp-sync", "agio-cpp-async"} <= set(systems)
            command = doc["cpp_eval_dlrm"][series]["command"]
            for pinned in ("--configs 1", "--batch 16", "--batches 3", "--vocab-cap 2000", "--cache-mib 2",
                           "--dim 8", f"--backend {backend}", f"--store {doc['dlrm'][series]['uri']}"):
                assert pinned in command
        has_agio = "agio-sync" in systems
        if has_agio:
            assert "agio-prefetch" in systems
            assert [c for c in doc["comparisons"] if c["series"] == series and c["denominator"] == "hbm"]
        if has_agio and cpp_eval:
            ratios = {(c["numerator"], c["denominator"]) for c in doc["comparisons"] if c["series"] == series}
            assert {("agio-sync", "agio-cpp-sync"), ("agio-prefetch", "agio-cpp-async")} <= ratios
    if backend == "cpu":
        assert [n for n in doc["notes"] if "(b)" in n and "GPU backend" in n]
    if not cpp_eval:
        assert [n for n in doc["notes"] if "--cpp-eval" in n]


def test_dlrm_with_a_host_tier_runs_both_agio_modes_above_it_and_compares_them_with_none(tmp_path, backend):
    pytest.importorskip("torch")
    doc = _run(tmp_path, backend, *TINY_DLRM, "--dlrm-stores", "ram", "--dlrm-host-tier-mib", "4")
    systems = {p["system"]: p for p in doc["points"] if p["experiment"] == "dlrm"}
    for mode in ("agio-host-tier-sync", "agio-host-tier-prefetch"):
        assert systems[mode]["verified"] and min(systems[mode]["repeats"]) > 0
        assert "a 4 MiB host tier below its cache" in systems[mode]["store"]
    ratios = {(c["numerator"], c["denominator"]) for c in doc["comparisons"] if c["experiment"] == "dlrm"}
    assert {("agio-host-tier-sync", "agio-sync"), ("agio-host-tier-prefetch", "agio-prefetch")} <= ratios
    # Without a C++ run its target is not measured: agio over agio is not held to it.
    (cpp,) = [t for t in doc["targets"] if "agio-eval" in t["target"]]
    assert cpp["met"] is None


def test_dlrm_targets_each_judge_their_own_comparator():
    results = report.Results()
    for denominator, ratio in (("host-cpu-lookup", 2.5), ("hbm", 0.3), ("agio-cpp-sync", 0.7), ("agio-cpp-async", 1.1)):
        results.comparisons.append({"experiment": "dlrm", "depth": None, "ratio": ratio, "series": "ram",
                                    "numerator": "agio-sync", "denominator": denominator})
    verdicts = {v["target"]: v for v in report.judge(results) if v["experiment"] == "dlrm"}
    host, cpp = verdicts.values()
    assert host["met"] is True and host["result"] == "2.50x"
    assert cpp["met"] is False and cpp["result"] == "lowest 0.70x"


def test_targets_hold_every_ratio_from_their_depth_on():
    results = report.Results()
    for depth, ratio in ((1, 1.5), (16, 0.8), (64, 3.2), (128, 2.9)):
        results.comparisons.append({"experiment": "file", "depth": depth, "ratio": ratio,
                                    "numerator": "agio-python", "denominator": "kvikio"})
    verdicts = {v["target"]: v for v in report.judge(results)}
    three_x = verdicts["file: agio >= 3x KvikIO from 64 in flight"]
    assert three_x["met"] is False and three_x["result"] == "lowest 2.90x at depth 128"
    never_slower = verdicts["file: agio never slower than KvikIO"]
    assert never_slower["met"] is False and never_slower["result"] == "lowest 0.80x at depth 16"
    assert verdicts["gather: Python Array >= 0.8x C++ bench gather"]["met"] is None


def test_wrong_data_stops_the_benchmark():
    got = np.zeros((3, 8), np.uint8)
    expected = got.copy()
    expected[2, 5] = 1
    with pytest.raises(RuntimeError, match="wrong data for 1 of 3 rows, the first at byte offset 8192"):
        workload.check_rows("agio", got, expected, np.array([0, 4096, 8192]))


@pytest.mark.parametrize("argv, message", [
    (["--depths", "0,4"], "whole numbers of at least 1"),
    (["--experiments", "file,disk"], "unknown experiment"),
    (["--dlrm-stores", "ram,ssd"], "pick from ram,file"),
    (["--seconds", "1", "--reads", "100"], "not allowed with argument"),
])
def test_bad_options_name_what_to_change(argv, message, capsys):
    with pytest.raises(SystemExit) as exit:
        options.parse(argv)
    assert exit.value.code == 2
    assert message in capsys.readouterr().err


def test_figure_draws_every_panel(tmp_path):
    pytest.importorskip("matplotlib")
    from agio.bench import plot

    results = report.Results(info={"agio": {"backend": "gpu"}})
    gather = {"rows": 1 << 20, "row_bytes": 512, "table_rows": 1 << 21, "cache_bytes": 1 << 28}
    for system, scale in (("agio-python", 3.0), ("kvikio", 1.0), ("agio-cpp", 1.1)):
        for depth in (1, 64, 1024):
            if system != "agio-cpp":
                results.point("file", system, "file: (real I/O)", depth, [scale * depth, scale * depth * 1.1])
            if system != "kvikio":
                results.point("ram", system, "ram: (emulation)", depth, [scale * depth * 100])
        if system != "kvikio":
            results.point("gather", system, "ram: (emulation)", None, [scale * 1e6], unit="rows/s", **gather)
    for experiment, ours, theirs in (("file", "agio-python", "kvikio"), ("ram", "agio-python", "agio-cpp")):
        for depth in (1, 64, 1024):
            pick = {p["system"]: p for p in results.points if p["experiment"] == experiment and p["depth"] == depth}
            results.compare(experiment, depth, pick[ours], pick[theirs])
    dlrm = {}
    for series in ("ram", "file"):
        for system, rate in (("hbm", 9e5), ("host-cpu-lookup", 1e5), ("agio-sync", 4e5), ("agio-cpp-sync", 4.5e5)):
            dlrm[series, system] = results.point("dlrm", system, f"{series}: ...", None, [rate, rate * 1.1],
                                                 unit="samples/s", series=series, batch=2048, batches=32)
        results.compare("dlrm", None, dlrm[series, "agio-sync"], dlrm[series, "host-cpu-lookup"], series=series)
    doc = report.document(options.parse(["--out", str(tmp_path / "x.json")]), [], "NVIDIA H100", results)
    report.save(doc, tmp_path / "x.json")
    assert plot.main([str(tmp_path / "x.json"), str(tmp_path / "figure.png")]) == 0
    assert (tmp_path / "figure.png").stat().st_size > 10_000
