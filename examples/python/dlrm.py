"""DLRM with its embedding tables on an agio store: Criteo-shaped samples (agio.workloads, the
generator of agio's C++ DLRM benchmark), 26 tables in an agio.torch.EmbeddingBagCollection read
through agio's cache, the DLRM network of `python -m agio.bench dlrm` (bottom MLP, dot
interaction, top MLP). It runs inference over a few batches (each next batch prefetched while
this one computes), checks the rows it read against the tables it staged, then trains a few
steps: the network with torch.optim.Adagrad, the tables with agio's fused row-wise Adagrad
(rows updated in backward and written back through the cache), and flushes them to the store.

    python examples/python/dlrm.py                        # small, seconds on the CPU backend
    python examples/python/dlrm.py --backend gpu --batch 2048 --vocab-scale 1 --vocab-cap 4000000 \\
        --dim 64 --bottom-width 512 --top-width 1024 --store 'ram:8G?lba=4096&profile=agile-ssd' --cache-mib 2048
    python examples/python/dlrm.py --store 'file:/tmp/dlrm.bin?lba=4096&create=64M'

A `ram:` store is host memory (with `profile=agile-ssd` an emulated SSD), a `file:` store real
I/O on this machine's disk. Needs PyTorch and agio (pip install .)."""

from __future__ import annotations

import argparse
import time

import torch

import agio
import agio.torch
from agio import workloads
from agio.bench.dlrm_model import DLRM


def parse() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto", help="agio's backend (default auto)")
    p.add_argument("--store", default="ram:64M?lba=4096", help="the tables' store (default ram:64M?lba=4096)")
    p.add_argument("--batch", type=int, default=128, help="samples per batch (default 128)")
    p.add_argument("--batches", type=int, default=4, help="inference batches (default 4)")
    p.add_argument("--train-steps", type=int, default=4, help="training steps (default 4)")
    p.add_argument("--vocab-scale", type=float, default=0.001, help="Criteo 1TB table sizes times this (0.001)")
    p.add_argument("--vocab-cap", type=int, default=20000, help="rows per table at most (default 20000)")
    p.add_argument("--dim", type=int, default=16, help="embedding dimension (default 16)")
    p.add_argument("--bottom-width", type=int, default=64, help="bottom MLP width (default 64)")
    p.add_argument("--top-width", type=int, default=128, help="top MLP width (default 128)")
    p.add_argument("--config", type=int, choices=(1, 2, 3), default=1, help="DLRM configuration (default 1)")
    p.add_argument("--cache-mib", type=int, default=16, help="agio's cache (default 16 MiB)")
    p.add_argument("--lr", type=float, default=0.01, help="learning rate of both optimisers (default 0.01)")
    p.add_argument("--seed", type=int, default=1, help="seed of the samples, tables and network")
    args = p.parse_args()
    for name in ("batch", "batches", "train_steps", "dim", "bottom_width", "top_width", "cache_mib", "vocab_cap"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def store_kind(uri: str) -> str:
    if uri.startswith("file:"):
        return "file: store (real I/O)"
    if uri.startswith("ram:") and "profile=" in uri:
        return "ram: store with an SSD profile (emulated SSD)"
    return "ram: store (host memory)"


def main() -> None:
    args = parse()
    vocab = workloads.criteo_vocab_sizes(args.vocab_scale, args.vocab_cap)
    generator = torch.Generator().manual_seed(args.seed)
    weights = [torch.randn(rows, args.dim, generator=generator) * 0.05 for rows in vocab]
    tables = [agio.torch.EmbeddingBagConfig(f"table{t}", rows, args.dim, [f"sparse{t}"], pooling="sum",
                                            weight=weights[t]) for t, rows in enumerate(vocab)]
    samples = workloads.CriteoGenerator(vocab, alpha=1.05, seed=args.seed)

    rt = agio.Runtime(backend=args.backend)
    dev = rt.attach(args.store, queue_pairs=4, queue_depth=256)
    with rt:  # started here, stopped (every table written back) at the end
        device = torch.device("cuda" if rt.backend == "gpu" else "cpu")
        print(f"agio {rt.backend} backend; tables: 26, {sum(vocab):,} rows of {args.dim} floats "
              f"({sum(vocab) * args.dim * 4 / (1 << 20):.1f} MiB) on {args.store}, a {store_kind(args.store)}")
        ebc = agio.torch.EmbeddingBagCollection(tables, store=dev, cache_bytes=args.cache_mib << 20,
                                                optimizer="rowwise_adagrad", lr=args.lr)
        model = DLRM(args.config, args.dim, args.bottom_width, args.top_width, seed=args.seed).to(device)

        # Inference: each batch's rows through agio's cache, the next batch's prefetched first.
        batches = [samples.batch(args.batch) for _ in range(args.batches)]
        indices = [torch.from_numpy(sparse).to(device) for _, sparse, _ in batches]
        ebc.eval()
        model.eval()
        start = time.perf_counter()
        with torch.inference_mode():
            for b, (dense, _, _) in enumerate(batches):
                rows = ebc.lookup(indices[b])
                if b + 1 < len(batches):
                    ebc.prefetch(indices[b + 1])
                probability = model(torch.from_numpy(dense).to(device), rows)
                expected = torch.stack([weights[t][indices[b][:, t].cpu()] for t in range(26)], dim=1)
                if not torch.equal(rows.cpu(), expected):
                    raise SystemExit(f"batch {b}: rows read through agio differ from the staged tables")
        seconds = time.perf_counter() - start
        print(f"inference: {args.batches} batches of {args.batch}, {args.batches * args.batch / seconds:,.0f} "
              f"samples/s (with the check), mean click probability {float(probability.mean()):.4f}; "
              f"every row read equals the staged tables")

        # Training: the network by torch.optim, the tables by agio's fused row-wise Adagrad.
        ebc.train()
        model.train()
        optimizer = torch.optim.Adagrad(model.parameters(), lr=args.lr)
        loss_fn = torch.nn.BCELoss()
        for step in range(args.train_steps):
            dense, sparse, labels = samples.batch(args.batch)
            rows = ebc.lookup(torch.from_numpy(sparse).to(device))
            loss = loss_fn(model(torch.from_numpy(dense).to(device), rows), torch.from_numpy(labels).to(device))
            optimizer.zero_grad()
            loss.backward()  # also updates the rows this batch read, on the store through the cache
            optimizer.step()
            print(f"training step {step + 1}: loss {loss.item():.4f}")
        ebc.flush()
        ebc.eval()
        with torch.inference_mode():
            after = ebc.lookup(torch.from_numpy(sparse).to(device)).cpu()
        before = torch.stack([weights[t][torch.from_numpy(sparse[:, t])] for t in range(26)], dim=1)
        changed = int((after != before).any(dim=2).sum())
        print(f"tables trained: {changed} of the last batch's {sparse.size} rows read changed; flushed to the store")


if __name__ == "__main__":
    main()
