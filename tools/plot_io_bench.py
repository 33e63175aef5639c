#!/usr/bin/env python3
"""Plots an I/O benchmark result file (agio bench io --out FILE) as one PNG with four panels:
RAM-store IOPS at 4 KiB, RAM-store bandwidth at 64 KiB beside the pinned host-to-device copy,
file-store IOPS on the machine's disk, and scaling over emulated SSDs. Every agio curve is drawn
beside the store's own CPU ceiling measured in the same run.

usage: plot_io_bench.py RESULTS.json OUT.png
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def series(points, **match):
    rows = [p for p in points if all(p.get(k) == v for k, v in match.items())]
    rows.sort(key=lambda p: p["outstanding"])
    return [p["outstanding"] for p in rows], rows


def main(path, out):
    doc = json.load(open(path))
    pts = doc["points"]
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    title = f"agio bench io on {doc['device']}, {doc['date']}"
    fig.suptitle(title, fontsize=11)

    def agio_beside_ceiling(ax, value, scale, **match):
        for op, style in (("read", "-"), ("write", "--")):
            for system, color in (("agio", "C0"), ("cpu-ceiling", "C7")):
                x, rows = series(pts, op=op, system=system, **match)
                if x:
                    ax.plot(x, [r[value] / scale for r in rows], style, color=color, marker="o",
                            label=f"{system} {op}")
        ax.set(xscale="log", xlabel="requests outstanding")

    ax = axes[0][0]
    agio_beside_ceiling(ax, "iops", 1e6, series="ram", io_bytes=4096)
    ax.set(ylabel="million IOPS", title="ram: store (emulation, pinned host RAM), 4 KiB random")
    ax.legend(fontsize=8)

    ax = axes[0][1]
    agio_beside_ceiling(ax, "gbps", 1, series="ram", io_bytes=65536)
    h2d = doc["config"].get("h2d_copy_gbps", 0)
    if h2d:
        ax.axhline(h2d, color="C3", lw=1, label=f"pinned host-to-device copy {h2d:.1f} GB/s")
    d2h = doc["config"].get("d2h_copy_gbps", 0)
    if d2h:
        ax.axhline(d2h, color="C4", lw=1, ls="--", label=f"pinned device-to-host copy {d2h:.1f} GB/s")
    ax.set(ylabel="GB/s", title="ram: store (emulation), 64 KiB random")
    ax.legend(fontsize=8)

    ax = axes[1][0]
    agio_beside_ceiling(ax, "iops", 1e3, series="file")
    ax.set(ylabel="thousand IOPS", title="file: store on the VM's virtio disk (real I/O), 4 KiB random")
    ax.legend(fontsize=8)

    ax = axes[1][1]
    for op, marker in (("read", "o"), ("write", "s")):
        for system, color in (("agio", "C0"), ("cpu-ceiling", "C7")):
            rows = sorted((p for p in pts if p["series"].startswith("profile-x") and p["op"] == op
                           and p["system"] == system), key=lambda p: p["devices"])
            if rows:
                ax.plot([r["devices"] for r in rows], [r["gbps"] for r in rows], marker=marker, color=color,
                        label=f"{system} {op}")
    ax.set(xlabel="devices", ylabel="GB/s aggregate", xticks=[1, 2, 3, 4],
           title="ram: stores emulating a 3.7/2.2 GB/s SSD each, 4 KiB random")
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, "not in this run", ha="center", transform=ax.transAxes)

    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
