"""python -m agio.bench: runs the experiments asked for, writes the JSON document and the figure,
prints the ratios and the targets."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Sequence

from . import dlrm_experiment, file_experiment, gather_experiment, graphsage_experiment, options, plot, ram_experiment, report
from .measure import Budget
from .memory import gpu_name
from .progress import Progress


def _missing_extras() -> list[str]:
    return [m for m in ("tqdm", "matplotlib") if importlib.util.find_spec(m) is None]


def main(argv: Sequence[str] | None = None) -> int:
    # agio's completion service needs CUDA's eager module loading, which agio asks for when its
    # first runtime is made; naming the GPU below starts CUDA earlier, so ask for it here.
    os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")
    argv = list(sys.argv[1:] if argv is None else argv)
    args = options.parse(argv)
    missing = _missing_extras()
    if missing:
        lost = {"tqdm": "plain progress lines", "matplotlib": "no PNG"}
        print(f"agio.bench: {' and '.join(missing)} not installed (pip install 'agio[bench]'): "
              + ", ".join(lost[m] for m in missing), file=sys.stderr)
    device = gpu_name()
    budget = Budget(args.seconds, args.reads)
    results = report.Results()
    progress = Progress()
    try:
        for name in args.experiments:
            if name == "file":
                file_experiment.run(args, results, progress, budget)
            elif name == "ram":
                ram_experiment.run(args, results, progress, budget)
            elif name == "gather":
                gather_experiment.run(args, results, progress)
            elif name == "graphsage":
                graphsage_experiment.run(args, results, progress)
            else:
                dlrm_experiment.run(args, results, progress)
    finally:
        progress.close()
    doc = report.document(args, argv, device, results)
    report.save(doc, args.out)
    print(f"results: {args.out}")
    if "matplotlib" not in missing:
        plot.save(doc, args.png)
        print(f"figure: {args.png}")
    for note in doc["notes"]:
        print(f"note: {note}")
    print(report.summary_table(doc))
    return 0
