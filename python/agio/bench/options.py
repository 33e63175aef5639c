"""The command line of python -m agio.bench (argparse), with --quick's smaller defaults."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

EXPERIMENTS = ("file", "ram", "gather", "graphsage", "dlrm")
DLRM_STORES = ("ram", "file")
FULL_DEPTHS = "1,2,4,8,16,32,64,128,256,512,1024"
QUICK_DEPTHS = "1,8,64,512"


def _whole_list(text: str) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v]
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}' is not a list of whole numbers such as 1,4,16") from None
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"'{text}': give whole numbers of at least 1, such as 1,4,16")
    return values


def _experiments(text: str) -> list[str]:
    names = [e for e in text.split(",") if e]
    unknown = [e for e in names if e not in EXPERIMENTS]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown experiment(s) {', '.join(unknown) or text!r}; pick from {','.join(EXPERIMENTS)}"
        )
    return names


def _dlrm_stores(text: str) -> list[str]:
    names = [e for e in text.split(",") if e]
    if not names or any(n not in DLRM_STORES for n in names):
        raise argparse.ArgumentTypeError(f"{text!r}: pick from {','.join(DLRM_STORES)}")
    return names


def _positive(kind):
    def parse(text: str):
        value = kind(text)
        if not value > 0:
            raise argparse.ArgumentTypeError(f"'{text}' must be positive")
        return value

    return parse


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m agio.bench",
        description="4 KiB random reads into GPU memory through agio's Python batch reads, beside "
        "KvikIO (file: store, real I/O) and beside agio's C++ benchmark (ram: store, an emulation), "
        "Array gathers through the HBM cache beside a C++ gather, and DLRM inference with its tables on "
        "agio stores beside PyTorch baselines and the C++ agio-eval dlrm. Medians of --repeats runs; "
        "JSON and PNG.",
    )
    p.add_argument("--experiments", type=_experiments, default=list(EXPERIMENTS),
                   help="any of file,ram,gather,graphsage,dlrm (default: all; those that cannot run say why and skip)")
    p.add_argument("--depths", type=_whole_list, default=None,
                   help=f"requests in flight (agio: read calls of 256 rows per request in flight, at most "
                        f"131072; KvikIO: that many futures) (default {FULL_DEPTHS}; --quick {QUICK_DEPTHS})")
    p.add_argument("--repeats", type=_positive(int), default=None, help="runs per point (default 5; --quick 3)")
    budget = p.add_mutually_exclusive_group()
    budget.add_argument("--seconds", type=_positive(float), default=None,
                        help="time per point and run (default 0.5; --quick 0.1)")
    budget.add_argument("--reads", type=_positive(int), default=None,
                        help="reads per point and run instead of a time (the C++ tool keeps --seconds)")
    p.add_argument("--file", type=Path, default=None,
                   help="the file: store's file (kept); default a --file-gib file of random data in the "
                   "temp directory, removed at the end")
    p.add_argument("--file-gib", type=_positive(float), default=None,
                   help="size of that file (default 1; --quick 0.25)")
    p.add_argument("--ram-gib", type=_positive(float), default=None,
                   help="the ram: store's size (default 1; --quick 0.25)")
    p.add_argument("--out", type=Path, default=Path("results/python_bench.json"), help="the JSON document")
    p.add_argument("--png", type=Path, default=None, help="the figure (default: beside the JSON, .png)")
    p.add_argument("--cpp-tool", type=Path, default=None,
                   help="the C++ agio tool of a build (e.g. build-gpu/tools/agio): the ram and gather "
                   "comparisons run it; without it they are skipped")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto", help="agio's backend (default auto)")
    p.add_argument("--completion", default="on_demand",
                   help="the runtime's completion mode, for agio in Python and the C++ tool alike (default "
                        "on_demand, the Python package's)")
    p.add_argument("--queue-pairs", type=_positive(int), default=8, help="agio queue pairs per store (default 8)")
    p.add_argument("--queue-depth", type=_positive(int), default=256, help="entries per queue (default 256)")
    p.add_argument("--controller-threads", type=_positive(int), default=None,
                   help="agio controller threads (default: one per two queue pairs, at most half the cores, "
                   "as the runtime's own default, written out so that the C++ tool gets the same)")
    p.add_argument("--kvikio-threads", type=_positive(int), default=None,
                   help="KvikIO's thread pool (default: one thread per CPU core)")
    p.add_argument("--kvikio-direct-io", choices=("on", "off"), default="on",
                   help="KvikIO's opportunistic O_DIRECT for reads (auto_direct_io_read; default on, as "
                   "agio's file: store reads with O_DIRECT)")
    p.add_argument("--gather-rows", type=_positive(int), default=None,
                   help="rows per gather (default 2^20; --quick 2^16)")
    p.add_argument("--gather-row-bytes", type=_positive(int), default=512, help="bytes per row (default 512)")
    p.add_argument("--gather-cache-mib", type=_positive(int), default=None,
                   help="HBM cache size (default 256; --quick 8)")
    p.add_argument("--gather-table-factor", type=_positive(int), default=4, help="table size / cache size (default 4)")
    p.add_argument("--pyg-nodes", type=_positive(int), default=None,
                   help="graphsage: nodes of the generated graph (default 4000000; --quick 20000)")
    p.add_argument("--pyg-features", type=_positive(int), default=None,
                   help="graphsage: float32 features per node (default 256, with 4M nodes a 4 GB file; --quick 64)")
    p.add_argument("--pyg-degree", type=_positive(int), default=10, help="graphsage: edges per node (default 10)")
    p.add_argument("--pyg-fanouts", default="15,10", help="graphsage: neighbours sampled per hop (default 15,10)")
    p.add_argument("--pyg-batch-size", type=_positive(int), default=None,
                   help="graphsage: seed nodes per batch (default 1024; --quick 256)")
    p.add_argument("--pyg-steps", type=_positive(int), default=None,
                   help="graphsage: training steps per run (default 50; --quick 4)")
    p.add_argument("--pyg-hidden", type=_positive(int), default=256, help="graphsage: hidden width (default 256)")
    p.add_argument("--pyg-cache-mib", type=_positive(int), default=None,
                   help="graphsage: agio's software cache (default 1024; --quick 2)")
    p.add_argument("--pyg-budget-seconds", type=_positive(float), default=120.0,
                   help="graphsage: the budgeted memory map stops after the step that passes this many seconds "
                        "(default 120); every system's fetch is then compared over the steps it did")
    p.add_argument("--pyg-dir", type=Path, default=None,
                   help="graphsage: where the features' file is written (default the temp directory)")
    dlrm = p.add_argument_group("dlrm", "DLRM inference, configuration 1 of agio-eval dlrm (docs/PYTHON.md)")
    dlrm.add_argument("--cpp-eval", type=Path, default=None,
                      help="agio-eval of a build (e.g. build-gpu/eval/agio-eval): runs its dlrm at the same "
                      "configuration; without it that comparison is skipped")
    dlrm.add_argument("--dlrm-stores", type=_dlrm_stores, default=list(DLRM_STORES),
                      help="ram (emulated SSD), file (real I/O in a temp dir) or both (default ram,file)")
    dlrm.add_argument("--dlrm-batch", type=_positive(int), default=None,
                      help="samples per batch (default 2048; --quick 256; CPU backend 32)")
    dlrm.add_argument("--dlrm-batches", type=_positive(int), default=None,
                      help="batches per run (default 32; --quick 4)")
    dlrm.add_argument("--dlrm-dim", type=_positive(int), default=None, help="embedding dimension (default 64; CPU 16)")
    dlrm.add_argument("--dlrm-bottom-width", type=_positive(int), default=None,
                      help="bottom MLP width (default 512; CPU backend 32)")
    dlrm.add_argument("--dlrm-top-width", type=_positive(int), default=None,
                      help="top MLP width (default 1024; CPU backend 64)")
    dlrm.add_argument("--dlrm-vocab-scale", type=_positive(float), default=None,
                      help="Criteo 1TB table sizes times this (default 1; --quick 0.001)")
    dlrm.add_argument("--dlrm-vocab-cap", type=_positive(int), default=None,
                      help="rows per table at most, ram: store (default 4000000; --quick 20000)")
    dlrm.add_argument("--dlrm-cache-mib", type=_positive(int), default=None,
                      help="agio's cache, ram: store (default 2048; --quick 64)")
    dlrm.add_argument("--dlrm-ram-store", default=None,
                      help="the emulated SSD (default ram:8G?lba=4096&profile=agile-ssd; --quick ram:256M?...)")
    dlrm.add_argument("--dlrm-file-vocab-cap", type=_positive(int), default=None,
                      help="rows per table at most, file: store (default 100000; --quick 20000)")
    dlrm.add_argument("--dlrm-file-cache-mib", type=_positive(int), default=None,
                      help="agio's cache, file: store (default 64; --quick 8)")
    dlrm.add_argument("--dlrm-host-tier-mib", type=int, default=0,
                      help="also run agio with a host tier of this many MiB below its cache (modes "
                           "agio-host-tier-sync and agio-host-tier-prefetch; default 0: not run)")
    dlrm.add_argument("--dlrm-alpha", type=float, default=1.05, help="Zipf exponent of the lookups (default 1.05)")
    p.add_argument("--seed", type=int, default=1, help="seed of the random offsets and indices")
    p.add_argument("--quick", action="store_true", help="fewer depths, repeats and bytes: a smoke run")
    return p


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    """Parses argv and fills the defaults that depend on --quick or on the machine."""
    args = parser().parse_args(argv)
    quick = args.quick
    if args.depths is None:
        args.depths = _whole_list(QUICK_DEPTHS if quick else FULL_DEPTHS)
    args.depths = sorted(set(args.depths))
    defaults = {
        "repeats": (3, 5),
        "file_gib": (0.25, 1.0),
        "ram_gib": (0.25, 1.0),
        "gather_rows": (1 << 16, 1 << 20),
        "gather_cache_mib": (8, 256),
        "pyg_nodes": (20_000, 4_000_000),
        "pyg_features": (64, 256),
        "pyg_batch_size": (256, 1024),
        "pyg_steps": (4, 50),
        "pyg_cache_mib": (2, 1024),
    }
    cpu = args.backend == "cpu"  # CPU threads run a scaled-down network, as agio-eval dlrm's defaults
    defaults.update({
        "dlrm_batch": (32 if cpu else 256, 32 if cpu else 2048),
        "dlrm_batches": (4, 32),
        "dlrm_dim": (16 if cpu else 64,) * 2,
        "dlrm_bottom_width": (32 if cpu else 512,) * 2,
        "dlrm_top_width": (64 if cpu else 1024,) * 2,
        "dlrm_vocab_scale": (0.001, 1.0),
        "dlrm_vocab_cap": (20000, 4_000_000),
        "dlrm_cache_mib": (64, 2048),
        "dlrm_ram_store": ("ram:256M?lba=4096&profile=agile-ssd", "ram:8G?lba=4096&profile=agile-ssd"),
        "dlrm_file_vocab_cap": (20000, 100000),
        "dlrm_file_cache_mib": (8, 64),
    })
    for name, (small, full) in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, small if quick else full)
    if args.seconds is None and args.reads is None:
        args.seconds = 0.1 if quick else 0.5
    cores = os.cpu_count() or 1
    if args.controller_threads is None:
        args.controller_threads = max(1, min(args.queue_pairs // 2, cores // 2))
    if args.kvikio_threads is None:
        args.kvikio_threads = cores
    if args.png is None:
        args.png = args.out.with_suffix(".png")
    return args
