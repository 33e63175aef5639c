"""The figure of a run (matplotlib, Agg): file IOPS agio vs KvikIO with their ratio, ram IOPS
Python vs C++ with theirs, the gather rates as bars, GraphSAGE's feature fetch times as bars, and
DLRM samples per second per mode and store as grouped bars. Medians, with the runs' range."""

from __future__ import annotations

from pathlib import Path


def _series(doc: dict, experiment: str, system: str) -> list[dict]:
    return sorted((p for p in doc["points"] if p["experiment"] == experiment and p["system"] == system),
                  key=lambda p: p["depth"] or 0)


def _curve(ax, points: list[dict], label: str, color: str, scale: float) -> None:
    x = [p["depth"] for p in points]
    y = [p["median"] / scale for p in points]
    err = [[(p["median"] - p["min"]) / scale for p in points], [(p["max"] - p["median"]) / scale for p in points]]
    ax.errorbar(x, y, yerr=err, marker="o", color=color, capsize=3, label=label)


def _absent(ax, title: str) -> None:
    ax.text(0.5, 0.5, "not in this run", ha="center", va="center", transform=ax.transAxes)
    ax.set(title=title, xticks=[], yticks=[])


def _with_ratio(ax, doc: dict, experiment: str, systems: tuple[tuple[str, str], ...], target: float,
                ylabel: str, scale: float, title: str) -> None:
    drawn = [s for s in systems if _series(doc, experiment, s[0])]
    if not drawn:
        _absent(ax, title)
        return
    for (system, label), color in zip(drawn, ("C0", "C1", "C2", "C7")):
        _curve(ax, _series(doc, experiment, system), label, color, scale)
    depths = [p["depth"] for p in _series(doc, experiment, drawn[0][0])]
    ax.set_xscale("log", base=2)
    ax.set(xticks=depths, xticklabels=[str(d) for d in depths], xlabel="requests in flight",
           ylabel=ylabel, title=title)
    ax.minorticks_off()
    ax.set_ylim(bottom=0)
    ratios = sorted((c for c in doc["comparisons"] if c["experiment"] == experiment), key=lambda c: c["depth"])
    if ratios:
        twin = ax.twinx()
        twin.plot([c["depth"] for c in ratios], [c["ratio"] for c in ratios], "k--", marker=".", label="ratio")
        twin.axhline(target, color="C3", lw=1, ls=":", label=f"target {target:g}x")
        twin.set(ylabel=f"{drawn[0][1]} / {drawn[1][1] if len(drawn) > 1 else '?'}")
        twin.set_ylim(0, 1.2 * max(target, *(c["ratio"] for c in ratios)))
        twin.legend(loc="lower right", fontsize=8)
    ax.legend(loc="upper left", fontsize=8)


def _gather(ax, doc: dict) -> None:
    title = "gather through the HBM cache, ram: store (emulation)"
    bars = [(label, p) for label, system in (("Python Array", "agio-python"), ("C++ bench gather", "agio-cpp"))
            for p in _series(doc, "gather", system)]
    if not bars:
        _absent(ax, title)
        return
    points = [p for _, p in bars]
    errors = [[(p["median"] - p["min"]) / 1e6 for p in points], [(p["max"] - p["median"]) / 1e6 for p in points]]
    ax.bar([label for label, _ in bars], [p["median"] / 1e6 for p in points], color=["C0", "C1"][: len(bars)],
           yerr=errors, capsize=4)
    p = points[0]
    factor = p["table_rows"] * p["row_bytes"] // p["cache_bytes"]
    ax.set(ylabel="million rows/s",
           title=f"{title}\n{p['rows']} rows of {p['row_bytes']} B, table {factor}x the cache")
    for c in (c for c in doc["comparisons"] if c["experiment"] == "gather"):
        ax.text(0.5, 0.95, f"Python / C++: {c['ratio']:.2f}x (target 0.8x)", ha="center", va="top",
                transform=ax.transAxes)


def _graphsage(ax, doc: dict) -> None:
    title = "GraphSAGE feature fetch per mini-batch (same batches)"
    labels = {"agio-python": "agio (file:)", "host-memory": "host memory",
              "numpy-memmap-budget": "numpy.memmap,\npage cache = agio's cache",
              "numpy-memmap-unbounded": "numpy.memmap,\npage cache unbounded"}
    points = [p for system in labels for p in _series(doc, "graphsage-fetch", system)]
    if not points:
        _absent(ax, title)
        return
    errors = [[p["median"] - p["min"] for p in points], [p["max"] - p["median"] for p in points]]
    colors = {"agio-python": "C0", "host-memory": "C7", "numpy-memmap-budget": "C1",
              "numpy-memmap-unbounded": "C8"}
    ax.bar([labels[p["system"]] for p in points], [p["median"] for p in points], yerr=errors, capsize=4,
           color=[colors[p["system"]] for p in points])
    p = points[0]
    ax.set(ylabel="ms per batch (median)",
           title=f"{title}\n{p['nodes']} nodes x {p['features']} float32, batch {p['batch_size']}, fanouts {p['fanouts']}")
    ratios = [c for c in doc["comparisons"] if c["experiment"] == "graphsage-fetch"]
    for i, c in enumerate(ratios):
        budget = c["numerator"] == "numpy-memmap-budget"
        text = "same cache budget, target 2x" if budget else "unbounded, no target"
        ax.text(0.5, 0.95 - 0.07 * i, f"memmap / agio: {c['ratio']:.2f}x ({text})", ha="center", va="top",
                transform=ax.transAxes)


DLRM_SYSTEMS = (("hbm", "(a) tables in HBM"), ("host-cpu-lookup", "(b) host tables, CPU lookup"),
                ("uvm", "(c) managed memory"), ("agio-sync", "agio sync"), ("agio-prefetch", "agio prefetch"),
                ("agio-host-tier-sync", "agio + host tier, sync"),
                ("agio-host-tier-prefetch", "agio + host tier, prefetch"),
                ("agio-cpp-sync", "(d) C++ sync"), ("agio-cpp-async", "(d) C++ async"), ("agio-cpp-hbm", "C++ HBM"))
DLRM_SERIES = (("ram", "ram: emulated SSD"), ("file", "file: real I/O"))


def _dlrm(ax, doc: dict) -> None:
    title = "DLRM inference, configuration 1"
    points = [p for p in doc["points"] if p["experiment"] == "dlrm"]
    series = [(name, label) for name, label in DLRM_SERIES if any(p["series"] == name for p in points)]
    if not series:
        _absent(ax, title)
        return
    width = 0.8 / len(DLRM_SYSTEMS)
    for k, (system, label) in enumerate(DLRM_SYSTEMS):
        xs, ys, low, high = [], [], [], []
        for i, (name, _) in enumerate(series):
            for p in (p for p in points if p["series"] == name and p["system"] == system):
                xs.append(i + (k - len(DLRM_SYSTEMS) / 2 + 0.5) * width)
                ys.append(p["median"] / 1e3)
                low.append((p["median"] - p["min"]) / 1e3)
                high.append((p["max"] - p["median"]) / 1e3)
        if xs:
            ax.bar(xs, ys, width, yerr=[low, high], capsize=2, label=label, color=f"C{k}")
    first = points[0]
    ax.set_xticks(range(len(series)), [label for _, label in series])
    # The modes span orders of magnitude (tables in HBM against reads from storage).
    ax.set_yscale("log")
    ax.set(ylabel="thousand samples/s (log)",
           title=f"{title}, batches of {first['batch']} ({first['batches']} a run)")
    lines = [f"{c['series']}: {c['numerator']} / {c['denominator']} {c['ratio']:.2f}x"
             for c in doc["comparisons"] if c["experiment"] == "dlrm"]
    if lines:
        ax.set_xlabel("\n".join(lines), fontsize=7)
    ax.legend(loc="upper right", fontsize=7)


def save(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    into = "GPU memory" if doc.get("agio", {}).get("backend") == "gpu" else "host memory (CPU backend)"
    fig, axes = plt.subplots(1, 5, figsize=(30, 5.5))
    fig.suptitle(f"python -m agio.bench on {doc['device']}, {doc['date']}, commit {doc['commit']}", fontsize=11)
    _with_ratio(axes[0], doc, "file", (("agio-python", "agio"), ("kvikio", "KvikIO"), ("agio-cpp", "agio C++"),
                                       ("cpu-ceiling", "disk ceiling (CPU io_uring)")), 3.0, "thousand reads/s", 1e3,
                f"file: store on the machine's disk (real I/O), 4 KiB random reads into {into}")
    _with_ratio(axes[1], doc, "ram", (("agio-python", "Python"), ("agio-cpp", "C++ bench io")), 0.9,
                "million reads/s", 1e6, f"ram: store (emulation), 4 KiB random reads into {into}")
    _gather(axes[2], doc)
    _graphsage(axes[3], doc)
    _dlrm(axes[4], doc)
    for ax in axes:
        ax.title.set_fontsize(9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str]) -> int:
    """python -m agio.bench.plot RESULTS.json [OUT.png]: the figure of a run, drawn afterwards
    (on a machine with matplotlib when the one that measured has none)."""
    import json

    if len(argv) not in (1, 2):
        print("usage: python -m agio.bench.plot RESULTS.json [OUT.png]")
        return 2
    source = Path(argv[0])
    out = Path(argv[1]) if len(argv) == 2 else source.with_suffix(".png")
    save(json.loads(source.read_text()), out)
    print(f"figure: {out}")
    return 0


if __name__ == "__main__":
    import sys

    sys.exit(main(sys.argv[1:]))
