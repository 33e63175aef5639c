#!/usr/bin/env python3
"""Plots the evaluation (agio-eval evaluation --out-dir DIR) as one PNG per figure of the AGILE
paper, from the JSON files the benchmarks left in DIR:
  figure4-overlap.png     async/sync speedup over the compute-to-communication ratio, beside the
                          ideal of the paper's Equation 1 (overlap.json)
  figure7-10-dlrm.png     DLRM: each mode's speedup over the BaM-style mode per configuration,
                          batch size, queue pairs and cache size (dlrm.json)
  figure7-file-dlrm.png   DLRM configuration 1 on a file: store (real I/O): each mode's time,
                          agio beside the CPU pipeline and cuFile (dlrm-file.json)
  figure11-graphs.png     graph kernels: native time, cache-API and I/O-API overheads, agio beside
                          the BaM-style mode (graphs.json)
  figure12-registers.png  registers per thread of every evaluation kernel (registers.json)
A figure whose JSON is missing is skipped.

usage: plot_evaluation.py DIR
"""
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(folder, name):
    path = os.path.join(folder, name)
    return json.load(open(path)) if os.path.exists(path) else None


def subtitle(doc):
    return f"{doc['device']}, {doc['date']}\n{doc['config'].get('store_kind', '')}"


def figure4(doc, out):
    pts = sorted(doc["points"], key=lambda p: p["ctc"])
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([p["ctc"] for p in pts], [p["speedup"] for p in pts], "o-", label="agio async / sync")
    ax.plot([p["ctc"] for p in pts], [p["ideal"] for p in pts], "--", color="C7", label="ideal (Equation 1)")
    ax.set(xlabel="computation / communication", ylabel="speedup", title="Figure 4: overlap in one block\n" + subtitle(doc))
    ax.title.set_fontsize(9)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def figure7_10(doc, out):
    pts = doc["points"]
    groups = [("config", "Figure 7: configurations", lambda p: f"config {p['config']}"),
              ("batch", "Figure 8: batch size (config 1)", lambda p: str(p["batch"])),
              ("queues", "Figure 9: queue pairs at depth 64", lambda p: str(p["queue_pairs"])),
              ("cache", "Figure 10: cache size", lambda p: f"{p['cache_bytes'] >> 20} MiB")]
    groups = [g for g in groups if any(p["point"].startswith(g[0]) for p in pts)]
    fig, axes = plt.subplots(1, len(groups), figsize=(5 * len(groups), 4.5), squeeze=False)
    modes = ["sync", "async", "cpu_pipeline"]
    for ax, (prefix, title, label) in zip(axes[0], groups):
        names = []
        for p in pts:
            if p["point"].startswith(prefix) and p["point"] not in names:
                names.append(p["point"])
        seconds = {(p["point"], p["mode"]): p["seconds"] for p in pts}
        width = 0.8 / len(modes)
        for i, mode in enumerate(modes):
            ys = [seconds.get((n, "bam_style"), 0) / seconds[(n, mode)] if seconds.get((n, mode)) else 0 for n in names]
            ax.bar([k + i * width for k in range(len(names))], ys, width, label=mode)
        ax.axhline(1, color="k", lw=0.8)
        first = {p["point"]: p for p in pts}
        ax.set_xticks([k + 0.4 - width / 2 for k in range(len(names))], [label(first[n]) for n in names], fontsize=8)
        ax.set(ylabel="speedup over BaM-style", title=title)
        ax.legend(fontsize=7)
    fig.suptitle("DLRM inference, embedding tables on storage\n" + subtitle(doc), fontsize=9)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def figure7_file(doc, out):
    pts = [p for p in doc["points"] if p["mode"] != "hbm"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.bar([p["mode"] for p in pts], [p["seconds"] * 1e3 for p in pts], color=[f"C{i}" for i in range(len(pts))])
    ax.set(ylabel="ms for the run (lower is better)",
           title="DLRM configuration 1, tables on a file: store (real I/O)\n" + subtitle(doc))
    ax.title.set_fontsize(9)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def figure11(doc, out):
    pts = doc["points"]
    cases = []
    for p in pts:
        if (p["graph"], p["kernel"]) not in cases:
            cases.append((p["graph"], p["kernel"]))

    def seconds(graph, kernel, model, step, key="seconds"):
        rows = [p for p in pts if (p["graph"], p["kernel"], p["model"], p["step"]) == (graph, kernel, model, step)]
        return rows[0][key] if rows else None

    fig, ax = plt.subplots(figsize=(max(7, 1.6 * len(cases)), 4.5))
    width = 0.38
    for k, (graph, kernel) in enumerate(cases):
        native = seconds(graph, kernel, "none", "native")
        for i, model in enumerate(("async", "bam_style")):
            cache = seconds(graph, kernel, model, "cache_api", "overhead_seconds")
            io = seconds(graph, kernel, model, "io_api", "overhead_seconds")
            if not native or cache is None or io is None:
                continue
            bottom = 0
            for part, color, name in zip((1.0, cache / native, io / native), ("C7", "C0", "C1"),
                                         ("kernel", "cache API", "I/O API")):
                ax.bar(k + i * width, part, width, bottom=bottom, color=color, hatch="//" if i else None,
                       label=f"{name} ({'agio' if i == 0 else 'BaM-style'})" if k == 0 else None)
                bottom += part
    ax.set_xticks([k + width / 2 for k in range(len(cases))], [f"{kern}-{g}" for g, kern in cases], fontsize=8)
    ax.set(ylabel="time / native kernel time",
           title="Figure 11: graph kernels, left agio, right BaM-style (hatched)\n" + subtitle(doc))
    ax.title.set_fontsize(9)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def figure12(doc, out):
    rows = doc["points"]
    labels = [f"{r['workload']}: {r['kernel']}" for r in rows if r["model"] == "async"]
    fig, ax = plt.subplots(figsize=(9, 0.45 * len(labels) + 1.5))
    height = 0.4
    for i, model in enumerate(("async", "bam_style")):
        regs = {f"{r['workload']}: {r['kernel']}": r["registers"] for r in rows if r["model"] == model}
        ax.barh([k + i * height for k in range(len(labels))], [regs.get(l, 0) for l in labels], height,
                label="agio" if i == 0 else "BaM-style")
    ax.set_yticks([k + height / 2 for k in range(len(labels))], labels, fontsize=8)
    ax.set(xlabel="registers per thread (compiler's report)", title="Figure 12: registers per thread\n" + doc["device"])
    ax.title.set_fontsize(9)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)


def main(folder):
    figures = [("overlap.json", "figure4-overlap.png", figure4), ("dlrm.json", "figure7-10-dlrm.png", figure7_10),
               ("dlrm-file.json", "figure7-file-dlrm.png", figure7_file),
               ("graphs.json", "figure11-graphs.png", figure11), ("registers.json", "figure12-registers.png", figure12)]
    for name, png, draw in figures:
        doc = load(folder, name)
        if doc is None:
            print(f"{name}: not found, skipped")
            continue
        draw(doc, os.path.join(folder, png))
        print(f"plotted {os.path.join(folder, png)}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
