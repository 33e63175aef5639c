"""GraphSAGE trained on a generated power-law graph whose node features live on a file: store and
reach the GPU through agio's software cache: PyG's NeighborLoader over (agio.pyg.FeatureStore,
LocalGraphStore), sampled by agio.pyg.NeighborSampler (no pyg-lib needed). Prints the loss and the
time spent fetching features.

    python examples/python/graphsage.py                          # 4M nodes x 256 float32: ~4 GB file
    python examples/python/graphsage.py --nodes 20000 --steps 5  # a small run (CPU backend works)
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import torch
from torch_geometric.distributed import LocalGraphStore
from torch_geometric.loader import NeighborLoader

import agio
import agio.pyg
from agio.pyg import graphsage_workload as workload


class TimedFeatureStore(agio.pyg.FeatureStore):
    """The FeatureStore, counting the seconds its mini-batch gathers take."""

    fetch_seconds = 0.0

    def _multi_get_tensor(self, attrs):
        start = time.perf_counter()
        tensors = super()._multi_get_tensor(attrs)
        if tensors and tensors[0].is_cuda:
            torch.cuda.current_stream().synchronize()
        self.fetch_seconds += time.perf_counter() - start
        return tensors


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nodes", type=int, default=4_000_000)
    p.add_argument("--features", type=int, default=256, help="float32 features per node")
    p.add_argument("--degree", type=int, default=10, help="edges per node")
    p.add_argument("--fanouts", default="15,10", help="neighbours sampled per node, per hop")
    p.add_argument("--batch-size", type=int, default=1024)
    p.add_argument("--steps", type=int, default=100)
    p.add_argument("--cache-mib", type=int, default=1024, help="agio's software cache")
    p.add_argument("--file", type=Path, default=None, help="the store's file (default: a temporary file, removed)")
    p.add_argument("--backend", choices=("auto", "gpu", "cpu"), default="auto")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    fanouts = [int(k) for k in args.fanouts.split(",")]

    torch.manual_seed(args.seed)
    edge_index = workload.power_law_graph(args.nodes, args.degree, args.seed)
    x, y = workload.features_and_labels(args.nodes, args.features, args.seed)
    path = args.file or Path(tempfile.mkstemp(prefix="agio-graphsage-", suffix=".bin")[1])
    size = (x.numel() * 4 + y.numel() * 8 + (3 << 20)) // 4096 * 4096  # two records and their headers
    try:
        with agio.Runtime(backend=args.backend, devices=[f"file:{path}?lba=4096&create={size}"]) as rt:
            device = torch.device("cuda" if rt.backend == "gpu" else "cpu")
            features = TimedFeatureStore(rt.devices[0], cache_bytes=args.cache_mib << 20)
            start = time.perf_counter()
            features[None, "x", None] = x
            features[None, "y", None] = y
            print(f"staged x {tuple(x.shape)} and y on {rt.devices[0].uri} (real I/O) in "
                  f"{time.perf_counter() - start:.1f} s; agio backend {rt.backend}")
            graph = LocalGraphStore.from_data(torch.arange(edge_index.size(1)), edge_index, args.nodes)
            sampler = agio.pyg.NeighborSampler((features, graph), num_neighbors=fanouts)
            loader = NeighborLoader((features, graph), num_neighbors=fanouts, neighbor_sampler=sampler,
                                    batch_size=args.batch_size, input_nodes=torch.arange(args.nodes), shuffle=True)
            net = workload.model(args.features, 256, len(fanouts)).to(device)
            optimizer = torch.optim.Adam(net.parameters(), lr=0.003)
            start = time.perf_counter()
            for step, batch in zip(range(args.steps), loader):
                loss = workload.train_step(net, optimizer, batch.x, batch.edge_index.to(device), batch.y,
                                           batch.batch_size)
                if step % 10 == 0 or step == args.steps - 1:
                    print(f"step {step:4d}  loss {loss:.4f}")
            steps = step + 1
            elapsed = time.perf_counter() - start
            print(f"{steps} steps in {elapsed:.2f} s; feature fetch {features.fetch_seconds / steps * 1e3:.2f} ms "
                  f"per batch ({features.fetch_seconds / elapsed:.0%} of the time); cache {features.counters()}")
    finally:
        if args.file is None:
            os.unlink(path)


if __name__ == "__main__":
    main()
