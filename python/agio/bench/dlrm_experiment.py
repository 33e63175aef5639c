"""dlrm: DLRM inference (configuration 1 of `agio-eval dlrm`: bottom MLP 512-512-512, dot
interaction of 27 vectors, top MLP 1024-1024-1024, FP32, dim 64, the 26 Criteo tables of
agio.workloads.criteo_vocab_sizes(scale, cap), Zipf lookups) over --dlrm-batches batches of
--dlrm-batch samples, the same batches (agio.workloads.CriteoGenerator) for every mode:

- hbm (a): the tables in GPU memory, torch.nn.EmbeddingBag: the upper bound and the reference;
- host-cpu-lookup (b): the tables in pinned host memory, looked up on CPU threads, the pooled
  rows copied to the GPU per batch;
- uvm (c): the tables in CUDA managed memory preferred on the host, looked up on the GPU;
- agio-sync / agio-prefetch: agio.torch.EmbeddingBagCollection on the store, each timed run
  from an empty cache; prefetch hands the next batch to ebc.prefetch on a second thread;
- agio-host-tier-sync / agio-host-tier-prefetch (with --dlrm-host-tier-mib): the same, on one
  agio.Cache with a host tier of that size below it (both empty at the start of each run);
- agio-cpp-sync / agio-cpp-async (d): the C++ `agio-eval dlrm` at the same configuration.

Per store series: `ram` (an emulated SSD, --dlrm-ram-store, tables capped at --dlrm-vocab-cap
rows, --dlrm-cache-mib of cache) and `file` (real I/O on a file in the temp directory, capped
at --dlrm-file-vocab-cap, --dlrm-file-cache-mib, as agio-eval's file run). Time: wall time of
all batches, from the first lookup to the last output computed (the device synchronised),
medians of --repeats; reported as samples per second. Every output is checked against hbm's."""

from __future__ import annotations

import argparse
import gc
import importlib.util
import tempfile
import time

from . import cpp_tool, workload
from .progress import Progress
from .report import Results

TOLERANCE = 1e-5  # the C++ benchmark's bound on |probability - reference|
AGIO_MODES = ("agio-sync", "agio-prefetch", "agio-host-tier-sync", "agio-host-tier-prefetch")
STORES = {"ram": "ram: store with an SSD profile (emulation)", "file": "file: store on this machine's disk (real I/O)"}


def missing_reason() -> str | None:
    if importlib.util.find_spec("torch") is None:
        return "dlrm: PyTorch is not installed: the dlrm experiment is skipped"
    return None


def _series(args: argparse.Namespace, series: str, directory: str) -> dict:
    """The store, table cap and cache of one series."""
    from agio import workloads

    cap = args.dlrm_vocab_cap if series == "ram" else args.dlrm_file_vocab_cap
    vocab = workloads.criteo_vocab_sizes(args.dlrm_vocab_scale, cap)
    table_bytes = sum(vocab) * args.dlrm_dim * 4
    if series == "ram":
        uri = args.dlrm_ram_store
        store = STORES["ram"] if "profile=" in uri else "ram: store, host memory without an SSD profile (emulation)"
    else:
        uri = f"file:{directory}/agio-dlrm-tables.bin?lba=4096&create={(table_bytes >> 20) + 64}M"
        store = STORES["file"]
    cache_mib = args.dlrm_cache_mib if series == "ram" else args.dlrm_file_cache_mib
    return {"series": series, "uri": uri, "vocab": vocab, "vocab_cap": cap, "cache_mib": cache_mib,
            "table_bytes": table_bytes, "store": store}


def _inputs(args: argparse.Namespace, vocab: list[int], device):
    """The batches: dense features on the model's device, lookups as CPU tensors (each mode puts
    them where it reads them before the clock starts)."""
    import torch

    from agio import workloads

    gen = workloads.CriteoGenerator(vocab, alpha=args.dlrm_alpha, seed=args.seed)
    dense, indices = [], []
    for _ in range(args.dlrm_batches):
        d, s, _labels = gen.batch(args.dlrm_batch)
        dense.append(torch.from_numpy(d).to(device))
        indices.append(torch.from_numpy(s))
    return dense, indices


def _synchronize(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.current_stream().synchronize()


def _timed(model, dense, lookup, device) -> tuple[float, list]:
    """Seconds for every batch (lookup, then the network), and the outputs."""
    import torch

    with torch.inference_mode():
        _synchronize(device)
        start = time.perf_counter()
        outputs = [model(dense[b], lookup.lookup(b)) for b in range(len(dense))]
        _synchronize(device)
        return time.perf_counter() - start, outputs


def _max_error(outputs: list, reference: list) -> float:
    return max(float((o - r).abs().max()) for o, r in zip(outputs, reference))


def _measure(lookups, runs: int, model, dense, device, reference, progress: Progress, label: str
             ) -> tuple[list, float]:
    """`runs` timed runs, run r on lookups(r) (the same object for a mode without state, a new
    one, with an empty cache, for agio); seconds per run and the largest error against the
    reference. Raises when an output is off."""
    seconds, worst = [], 0.0
    for r in range(runs):
        took, outputs = _timed(model, dense, lookups(r), device)
        error = _max_error(outputs, reference)
        if not error <= TOLERANCE:
            raise RuntimeError(f"agio.bench: dlrm {label}: outputs differ from the tables in GPU memory by {error:.3g} "
                               f"(more than {TOLERANCE})")
        worst = max(worst, error)
        seconds.append(took)
        progress.step(f"dlrm {label} run {r + 1}")
    return seconds, worst


class _Each:
    """A new lookup per run, the previous one closed first (its cache freed)."""

    def __init__(self, make):
        self.make = make
        self.current = None

    def __call__(self, run: int):
        self.close()
        self.current = self.make()
        return self.current

    def close(self) -> None:
        if self.current is not None:
            self.current.close()
            self.current = None
            gc.collect()


class _Same(_Each):
    """One lookup for every run (tables in memory: nothing of one run carries to the next)."""

    def __call__(self, run: int):
        if self.current is None:
            self.current = self.make()
        return self.current


def run(args: argparse.Namespace, results: Results, progress: Progress) -> None:
    reason = missing_reason()
    if reason:
        results.note(reason)
        return
    from . import dlrm_lookups as lookups

    with tempfile.TemporaryDirectory(prefix="agio-bench-dlrm-") as directory:
        for name in args.dlrm_stores:
            _run_series(args, results, progress, _series(args, name, directory), lookups)


def _run_series(args: argparse.Namespace, results: Results, progress: Progress, s: dict, lookups) -> None:
    import torch

    from .dlrm_model import DLRM

    samples = args.dlrm_batch * args.dlrm_batches
    info = {"uri": s["uri"], "vocab": s["vocab"], "vocab_cap": s["vocab_cap"], "cache_mib": s["cache_mib"],
            "table_bytes": s["table_bytes"], "store": s["store"], "torch": torch.__version__,
            "float32_matmul_precision": torch.get_float32_matmul_precision()}
    results.info.setdefault("dlrm", {})[s["series"]] = info
    measured: dict[str, dict] = {}

    def record(system: str, store: str, seconds: list, **extra) -> None:
        measured[system] = results.point("dlrm", system, store, None, [samples / t for t in seconds],
                                         unit="samples/s", series=s["series"], seconds=seconds,
                                         batch=args.dlrm_batch, batches=args.dlrm_batches, **extra)

    agio_reason = lookups.agio_missing_reason()
    if agio_reason:
        results.note(agio_reason)
    rt = workload.runtime(args, s["uri"])
    backend = rt.backend
    device = torch.device("cuda" if backend == "gpu" else "cpu")
    model = DLRM(1, args.dlrm_dim, args.dlrm_bottom_width, args.dlrm_top_width, seed=args.seed).to(device).eval()
    dense, indices = _inputs(args, s["vocab"], device)
    # The network runs once before the runtime starts: cuBLAS loads its kernels on first use, and
    # loading waits for every running kernel (a completion service, with --completion service).
    with torch.inference_mode():
        model(dense[0], torch.zeros(args.dlrm_batch, 26, args.dlrm_dim, device=device))
    _synchronize(device)
    progress.say(f"dlrm {s['series']}: 26 tables, {s['table_bytes'] / (1 << 20):.1f} MiB, {s['uri']}")
    tables = lookups.make_tables(s["vocab"], args.dlrm_dim, args.seed)
    if args.completion != "service":
        results.note(f"dlrm: agio in Python runs with completion={args.completion} (--completion); agio-eval dlrm "
                     "always runs its completion service: --completion service compares like with like")
    with rt:
        results.info.setdefault("agio", workload.describe(rt))

        hbm = _Same(lambda: lookups.HbmLookup(tables, indices, device))
        _, reference = _timed(model, dense, hbm(0), device)  # also the first run of every kernel
        modes = [("hbm", hbm, lookups.HbmLookup.store)]
        if backend == "gpu":
            modes.append(("host-cpu-lookup", _Same(lambda: lookups.HostLookup(tables, indices, device)),
                          lookups.HostLookup.store))
        else:
            results.note("dlrm: (b) tables in pinned host memory copied to the GPU needs the GPU backend: skipped")
        uvm = _managed(lookups, args, backend, tables, indices, device, results)
        if uvm is not None:
            modes.append(("uvm", _Same(lambda: uvm), lookups.ManagedLookup.store))
        if not agio_reason:
            lookups.stage(tables, rt.devices[0])
            tiers = [0] + ([args.dlrm_host_tier_mib << 20] if args.dlrm_host_tier_mib > 0 else [])
            for tier in tiers:
                for prefetch in (False, True):
                    make = (lambda p=prefetch, t=tier: lookups.AgioLookup(
                        s["vocab"], args.dlrm_dim, indices, device, rt.devices[0], s["cache_mib"] << 20, p, t))
                    name = "agio-host-tier" if tier else "agio"
                    where = f", a {tier >> 20} MiB host tier below its cache" if tier else ""
                    modes.append((f"{name}-{'prefetch' if prefetch else 'sync'}", _Each(make),
                                  f"{s['store']}, agio.torch.EmbeddingBagCollection{where}"))
        progress.add(args.repeats * len(modes))

        for system, each_run, store in modes:
            try:
                seconds, error = _measure(each_run, args.repeats, model, dense, device, reference, progress,
                                          f"{s['series']} {system}")
            finally:
                each_run.close()
            record(system, store, seconds, verified=True, max_error=error)
        del tables, reference, uvm
        gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()  # the HBM tables' memory back to the device, for agio-eval

    # The C++ benchmark runs while no runtime of this process does.
    _cpp(args, results, progress, s, backend, record)
    _compare(results, s["series"], measured)


def _managed(lookups, args: argparse.Namespace, backend: str, tables, indices, device, results: Results):
    """(c)'s lookup, or None with a note saying why it cannot run here."""
    reason = lookups.managed_missing_reason(backend)
    if reason is None and args.completion == "service":
        reason = ("dlrm: (c) CUDA managed memory is skipped beside a running completion service "
                  "(--completion service): freeing it would wait for the service's kernel until stop")
    if reason:
        results.note(reason)
        return None
    try:
        return lookups.ManagedLookup(tables, indices, device)
    except Exception as e:
        # CuPy's managed memory and memAdvise vary with its CUDA version, and PyTorch must take
        # the pointer: say what failed, and measure the rest.
        results.note(f"dlrm: (c) CUDA managed memory could not be set up ({type(e).__name__}: {e}): skipped")
        return None


def _cpp(args: argparse.Namespace, results: Results, progress: Progress, s: dict, backend: str, record) -> None:
    reason = cpp_tool.missing_reason(args.cpp_eval, ["dlrm"], option="--cpp-eval", program="agio-eval")
    if reason:
        results.note(reason)
        return
    progress.add(1)
    modes, info = cpp_tool.eval_dlrm(args.cpp_eval, args, backend, s["uri"], s["vocab_cap"], s["cache_mib"])
    results.info.setdefault("cpp_eval_dlrm", {})[s["series"]] = info
    for mode, p in modes.items():
        if not p.get("verified", False):
            raise RuntimeError(f"agio.bench: agio-eval dlrm {mode}: its outputs did not match its HBM run: {p}")
        # One median (of the C++ repeats): the point holds it alone.
        record(f"agio-cpp-{mode}", f"{s['store']}, C++ agio-eval dlrm", [p["seconds"]],
               verified=True, max_error=p.get("max_error"), hit_rate=p.get("hit_rate"))
    progress.step(f"dlrm {s['series']} C++ agio-eval")


def _compare(results: Results, series: str, measured: dict[str, dict]) -> None:
    """agio's fastest mode over (b) and over the HBM upper bound; each Python agio mode over its
    C++ counterpart (sync over sync, prefetch over async); with a host tier over without."""
    agio_modes = [measured[m] for m in AGIO_MODES if m in measured]
    if agio_modes:
        best = max(agio_modes, key=lambda p: p["median"])
        for other in ("host-cpu-lookup", "uvm", "hbm"):
            if other in measured:
                results.compare("dlrm", None, best, measured[other], series=series)
    for ours, theirs in (("agio-sync", "agio-cpp-sync"), ("agio-prefetch", "agio-cpp-async"),
                         ("agio-host-tier-sync", "agio-sync"), ("agio-host-tier-prefetch", "agio-prefetch")):
        if ours in measured and theirs in measured:
            results.compare("dlrm", None, measured[ours], measured[theirs], series=series)
