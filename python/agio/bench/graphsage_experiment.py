"""graphsage: GraphSAGE mini-batch training on a generated power-law graph whose node features
(--pyg-nodes x --pyg-features float32) are fetched four ways, on the same batches: through
agio.pyg.FeatureStore from a file: store (O_DIRECT reads into agio's software cache of
--pyg-cache-mib in GPU memory, real I/O), from host memory (PyG's default: x[n_id] then
.to(device)), and from a numpy.memmap of the same file (buffered reads through the page cache),
twice: with the page cache held to agio's cache size (a child process in a cgroup whose
memory.high leaves the file --pyg-cache-mib: a host whose RAM is smaller than the features, the
workload agio is for; the target's baseline) and unbounded (the whole file stays cached after its
first reads: features that fit in host memory). The file's pages are dropped before each run, so
both memory maps start from the disk as agio does. The budgeted memory map reads the disk one
fault at a time and can take minutes a step: it stops after the step that passes
--pyg-budget-seconds, and every system's fetch time is then the median over the same first
steps. The batches are sampled once beforehand (agio.pyg's sampler, seeded), so every system
trains on the same ones. Per run: the median time to fetch one batch's features (ms) and the
time of --pyg-steps steps (fetch, forward, backward, optimizer); each run starts cold (a new
agio cache; the memory map's pages dropped) and trains a model from the same seed under
torch.use_deterministic_algorithms, so the loss curves of agio and of host memory must be
identical."""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import agio

from . import page_cache_budget
from .data_file import cached_bytes, drop_cached_pages
from .progress import Progress
from .report import Results
from .workload import describe

FILE_STORE = "file: store on the machine's disk (real I/O), O_DIRECT reads into agio's software cache"
MEMMAP_BUDGET = ("the same file through numpy.memmap (real I/O, buffered), page cache held to agio's cache size "
                 "by a cgroup's memory.high: features larger than host memory; pages dropped before each run")
MEMMAP_UNBOUNDED = ("numpy.memmap, page cache unbounded: the file fits in host memory (real I/O until it is cached; "
                    "pages dropped before each run)")
HOST = "host memory (x[n_id].to(device), PyG's default)"
BUDGET = "numpy-memmap-budget"
UNBOUNDED = "numpy-memmap-unbounded"
SYSTEMS = (("agio-python", FILE_STORE), ("host-memory", HOST), (BUDGET, MEMMAP_BUDGET), (UNBOUNDED, MEMMAP_UNBOUNDED))


def missing_reason() -> str | None:
    if importlib.util.find_spec("torch_geometric") is None:
        return "torch_geometric is not installed: the graphsage experiment is skipped"
    return None


def run(args: argparse.Namespace, results: Results, progress: Progress) -> None:
    reason = missing_reason()
    if reason:
        results.note(reason)
        return
    # cuBLAS is deterministic only with a fixed workspace, set before its first use (and inherited
    # by the budgeted memory map's child process).
    os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
    import torch

    from agio.pyg import graphsage_workload as workload

    was_deterministic = torch.are_deterministic_algorithms_enabled()
    torch.use_deterministic_algorithms(True, warn_only=True)
    fd, name = tempfile.mkstemp(prefix="agio-graphsage-", suffix=".npy", dir=args.pyg_dir)
    os.close(fd)
    path = Path(name)
    batches_file = path.with_suffix(".batches.pt")
    try:
        progress.say(f"graphsage: generating {args.pyg_nodes} nodes x {args.pyg_features} features, "
                     f"staging them in {path} (removed at the end)")
        edge_index = workload.power_law_graph(args.pyg_nodes, args.pyg_degree, args.seed)
        x, y = workload.features_and_labels(args.pyg_nodes, args.pyg_features, args.seed)
        agio.stage(x, f"file:{path}", progress=False, backend="cpu")
        batches = _batches(args, edge_index, torch)
        root, reason = _budget_root(args, torch)
        if reason:
            results.note(f"graphsage: the {BUDGET} series (the target's baseline) is skipped, so the target is not "
                         f"measured: {reason}")
        else:
            torch.save((batches, y), batches_file)  # the child's batches, identical to the others'
        systems = [system for system, _ in SYSTEMS if system != BUDGET or reason is None]
        progress.add(args.repeats * len(systems))
        runs: dict[str, list[dict]] = {system: [] for system in systems}
        for r in range(args.repeats):
            for system in list(systems):
                if system == BUDGET:
                    try:
                        run = _budgeted_run(root, args, path, batches_file, batches)
                    except RuntimeError as failed:  # the child died: the other series go on
                        results.note(f"graphsage: the {BUDGET} series (the target's baseline) failed, so the "
                                     f"target is not measured: {failed}")
                        systems.remove(system)
                        del runs[system]
                        continue
                else:
                    run = _run(system, args, path, x, y, batches, results, torch, workload)
                runs[system].append(run)
                progress.step(f"graphsage {system} run {r + 1}")
    finally:
        path.unlink(missing_ok=True)
        batches_file.unlink(missing_ok=True)
        torch.use_deterministic_algorithms(was_deterministic)
    _report(args, results, runs)


def _device(args: argparse.Namespace, torch):
    """Where the baselines train (agio's runs train where its backend puts the rows)."""
    return torch.device("cuda" if torch.cuda.is_available() and args.backend != "cpu" else "cpu")


def _budget_root(args: argparse.Namespace, torch) -> tuple[Path | None, str | None]:
    """The cgroup v2 root the budgeted memory map runs under, or why it cannot run."""
    if _device(args, torch).type != "cuda":
        return None, ("it trains on the GPU only: on the CPU the model's activations would share the cgroup's "
                      "memory with the page cache")
    root, reason = page_cache_budget.here()
    return (None, reason) if reason else (root, None)


def _batches(args: argparse.Namespace, edge_index, torch) -> list:
    """--pyg-steps batches of --pyg-batch-size seeds, sampled once: (n_id, edge_index, seeds)."""
    from torch_geometric.data import Data
    from torch_geometric.sampler import NodeSamplerInput

    from agio.pyg import NeighborSampler

    fanouts = [int(k) for k in args.pyg_fanouts.split(",")]
    sampler = NeighborSampler(Data(edge_index=edge_index, num_nodes=args.pyg_nodes), num_neighbors=fanouts)
    torch.manual_seed(args.seed)
    order = torch.randperm(args.pyg_nodes)
    batches = []
    for step in range(args.pyg_steps):
        seeds = order[step * args.pyg_batch_size:(step + 1) * args.pyg_batch_size]
        out = sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=seeds))
        batches.append((out.node, torch.stack([out.row, out.col]), len(seeds)))
    return batches


def _run(system: str, args: argparse.Namespace, path: Path, x, y, batches: list, results: Results, torch,
         workload) -> dict:
    """One cold run of `system` in this process: fetch times (s), the steps' time (s), the loss of each step."""
    drop_cached_pages(path)
    if system != "agio-python":
        device = _device(args, torch)
        if system == "host-memory":
            fetch = lambda node, _: x[node].to(device)  # noqa: E731 - the baseline is this one expression
        else:
            fetch = _memmap_fetch(path, device, torch)
        return _train(fetch, device, args, y, batches, torch, workload)
    from agio.pyg import FeatureStore

    rt = agio.Runtime(backend=args.backend, completion=args.completion, controller_threads=args.controller_threads)
    rt.attach(f"file:{path}?lba=4096", queue_pairs=args.queue_pairs, queue_depth=args.queue_depth)
    with rt:
        results.info.setdefault("agio", describe(rt))
        features = FeatureStore(rt.devices[0], cache_bytes=args.pyg_cache_mib << 20)
        features.open_tensor("x")
        device = torch.device("cuda" if rt.backend == "gpu" else "cpu")
        run = _train(lambda _, node_on_device: features.get_tensor(group_name=None, attr_name="x",
                                                                   index=node_on_device),
                     device, args, y, batches, torch, workload)
        run["cache"] = features.counters()
    return run


def _memmap_fetch(path: Path, device, torch) -> Callable:
    mapped = np.load(path, mmap_mode="r")
    return lambda node, _: torch.from_numpy(mapped[node.numpy()]).to(device)


def _budgeted_run(root: Path, args: argparse.Namespace, path: Path, batches_file: Path, batches: list) -> dict:
    """One cold run of the memory map in a child process whose page cache is held to --pyg-cache-mib."""
    largest = max(len(node) for node, _, _ in batches) * args.pyg_features * 4  # the rows one fetch copies out
    # A fetch holds its rows several times over (the memory map's gather, the tensor, its copy to
    # the GPU), and the process grows by more than its setup showed. This allowance is charged to
    # the budget's cgroup, and file pages may use what the process does not, so
    # file_cached_bytes_at_end (in the JSON) says how much of the file the page cache really held.
    working = 4 * largest + (512 << 20)
    run, budget = page_cache_budget.run(root, _budgeted_child, (args, path, batches_file),
                                        cache_bytes=args.pyg_cache_mib << 20, working_bytes=working,
                                        before_run=lambda: drop_cached_pages(path))
    # The child's cgroup is gone; the file's pages it left stay cached (nothing else reads the
    # file meanwhile): how much of the file its page cache held at the end.
    budget["file_cached_bytes_at_end"] = cached_bytes(path)
    run["budget"] = budget
    return run


def _budgeted_child(conn, args: argparse.Namespace, path: Path, batches_file: Path) -> None:
    """The child's side of page_cache_budget.run: set up, say ready, run when the limit is set."""
    conn.recv()  # in the cgroup now: the file's pages it reads from here on are charged to it
    import torch

    from agio.pyg import graphsage_workload as workload

    torch.use_deterministic_algorithms(True, warn_only=True)
    batches, y = torch.load(batches_file)
    device = _device(args, torch)

    fetch = _memmap_fetch(path, device, torch)

    def ready() -> None:
        # One untimed step first, on a model of its own and with the random state put back, so that
        # what the process keeps after it (cuBLAS and the other libraries PyTorch loads on first
        # use, its buffers) is in the memory the limit is computed from: without it the process grew
        # by 1.7 GB past its setup on the H100 VM and left the file little of its page cache.
        node, edges, seeds = batches[0]
        with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
            net = workload.model(args.pyg_features, args.pyg_hidden, len(args.pyg_fanouts.split(","))).to(device)
            workload.train_step(net, torch.optim.Adam(net.parameters()), fetch(node, None), edges.to(device),
                                y.to(device)[node.to(device)], seeds)
        del net
        conn.send(page_cache_budget.READY)
        conn.recv()

    conn.send(_train(fetch, device, args, y, batches, torch, workload, ready,
                     deadline_seconds=args.pyg_budget_seconds))


def _train(fetch: Callable, device, args: argparse.Namespace, y, batches: list, torch, workload,
           before_steps: Callable[[], None] = lambda: None, deadline_seconds: float | None = None) -> dict:
    """--pyg-steps training steps over `batches`, fetching each batch's features with
    fetch(n_id on the host, n_id on `device`); the model starts from the same seed every run.
    before_steps() runs once all is set up, untimed. With deadline_seconds, the run ends after
    the step that passes it (its `losses` then hold fewer than --pyg-steps values)."""
    def synchronize() -> None:
        if device.type == "cuda":
            torch.cuda.current_stream().synchronize()

    on_device = [(node, node.to(device), edges.to(device), seeds) for node, edges, seeds in batches]
    labels = y.to(device)
    torch.manual_seed(args.seed)
    net = workload.model(args.pyg_features, args.pyg_hidden, len(args.pyg_fanouts.split(","))).to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=0.003)
    fetches, losses = [], []
    synchronize()
    before_steps()
    start = time.perf_counter()
    for node, node_on_device, edges, seeds in on_device:
        begin = time.perf_counter()
        features = fetch(node, node_on_device)
        synchronize()
        fetches.append(time.perf_counter() - begin)
        losses.append(workload.train_step(net, optimizer, features, edges, labels[node_on_device], seeds))
        if deadline_seconds is not None and time.perf_counter() - start > deadline_seconds:
            break
    synchronize()
    return {"fetches": fetches, "seconds": time.perf_counter() - start, "losses": losses}


def _report(args: argparse.Namespace, results: Results, runs: dict[str, list[dict]]) -> None:
    shape = {"nodes": args.pyg_nodes, "features": args.pyg_features, "dtype": "float32",
             "feature_bytes": args.pyg_nodes * args.pyg_features * 4, "degree": args.pyg_degree,
             "fanouts": args.pyg_fanouts, "batch_size": args.pyg_batch_size, "steps": args.pyg_steps}
    # Fetch times are compared over the steps every run did (all of them, unless the budgeted
    # memory map stopped at its deadline): the first steps, when every cache is coldest.
    compared = min(len(r["fetches"]) for per_run in runs.values() for r in per_run)
    stopped = {system for system, per_run in runs.items() if any(len(r["losses"]) < args.pyg_steps for r in per_run)}
    if stopped:
        results.note(f"graphsage: {', '.join(sorted(stopped))} stopped at --pyg-budget-seconds "
                     f"({args.pyg_budget_seconds:g} s) after {compared} of {args.pyg_steps} steps: every system's "
                     f"fetch time is the median over its first {compared} steps, and its epoch time is not reported")
    fetch_points, epoch_points = {}, {}
    for system, store in ((system, store) for system, store in SYSTEMS if system in runs):
        per_run = runs[system]
        extra = {}
        if system == "agio-python":
            extra = {"cache_bytes": args.pyg_cache_mib << 20,
                     "cache_per_run": [_with_hit_rate(r["cache"]) for r in per_run]}
        elif system == BUDGET:
            extra = {"cache_bytes": args.pyg_cache_mib << 20, "budget_per_run": [r["budget"] for r in per_run]}
        fetch_points[system] = results.point(
            "graphsage-fetch", system, store, None,
            [statistics.median(r["fetches"][:compared]) * 1e3 for r in per_run],
            unit=f"ms per batch (median over the run's first {compared} batches)", steps_compared=compared, **shape,
            **extra)
        if system in stopped:
            continue
        epoch_points[system] = results.point(
            "graphsage-epoch", system, store, None, [r["seconds"] for r in per_run],
            unit=f"s per {args.pyg_steps} steps", loss_curve=per_run[0]["losses"], **shape)
    starved = BUDGET in runs and any(
        r["budget"]["file_cached_bytes_at_end"] < min(r["budget"]["cache_bytes"], shape["feature_bytes"]) // 2
        for r in runs[BUDGET])
    if starved:
        results.note(f"graphsage: the {BUDGET} series had less than half its page-cache budget of the file cached "
                     "at the end of a run (its process grew past the allowance: see budget_per_run), so it is not "
                     "compared and the target is not measured")
    # The target holds agio to the budgeted memory map (the same cache budget); the unbounded one's
    # ratio is reported beside it, without a target.
    for experiment, points in (("graphsage-fetch", fetch_points), ("graphsage-epoch", epoch_points)):
        for memmap in (m for m in (BUDGET, UNBOUNDED) if m in points and not (m == BUDGET and starved)):
            results.speedup(experiment, None, points["agio-python"], points[memmap])
    agio_losses = np.array(runs["agio-python"][0]["losses"])
    host_losses = np.array(runs["host-memory"][0]["losses"])
    difference = float(np.abs(agio_losses - host_losses).max())
    results.info["graphsage"] = {
        "loss_max_abs_difference_agio_vs_host_memory": difference,
        "deterministic": "torch.use_deterministic_algorithms(True, warn_only=True), CUBLAS_WORKSPACE_CONFIG="
                         f"{os.environ.get('CUBLAS_WORKSPACE_CONFIG')}, the same model seed and batches",
        "host_memory_fetch_ms_over_agio": fetch_points["host-memory"]["median"] / fetch_points["agio-python"]["median"],
    }
    results.note(f"graphsage: the loss curves of agio and of host memory differ by at most {difference:.3g} "
                 f"over {args.pyg_steps} steps (identical data, same seed: 0 expected)")


def _with_hit_rate(counters: dict) -> dict:
    looked_up = counters["hits"] + counters["misses"]
    return {**counters, "hit_rate": counters["hits"] / looked_up if looked_up else None}
