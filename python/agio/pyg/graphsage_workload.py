"""The GraphSAGE workload examples/python/graphsage.py and `python -m agio.bench graphsage` share:
a generated power-law graph (no downloads) with features and labels, the model, one training step."""

from __future__ import annotations

import math

import torch
from torch import Tensor
from torch_geometric.nn import GraphSAGE

CLASSES = 8
_CHUNK_ROWS = 1 << 18


def power_law_graph(nodes: int, degree: int, seed: int) -> Tensor:
    """edge_index (2, nodes * degree): destinations uniform, sources drawn with probability
    proportional to 1 / rank over a random ranking of the nodes (a power law of exponent 1), so
    a few nodes are the neighbours of very many and most are rarely sampled, and the popular ones
    lie scattered over the feature rows."""
    g = torch.Generator().manual_seed(seed)
    edges = nodes * degree
    rank = (torch.rand(edges, generator=g, dtype=torch.float64) * math.log(nodes)).exp().long() - 1
    source = torch.randperm(nodes, generator=g)[rank.clamp_(0, nodes - 1)]
    destination = torch.randint(0, nodes, (edges,), generator=g)
    return torch.stack([source, destination])


def features_and_labels(nodes: int, width: int, seed: int) -> tuple[Tensor, Tensor]:
    """x (nodes, width) float32, standard normal, made chunk by chunk (a few GB at full size), and
    y: the index of the largest of each row's first CLASSES features (learnable from x)."""
    g = torch.Generator().manual_seed(seed + 1)
    x = torch.empty((nodes, width), dtype=torch.float32)
    for start in range(0, nodes, _CHUNK_ROWS):
        rows = x[start:start + _CHUNK_ROWS]
        rows.normal_(generator=g)
    y = x[:, : min(CLASSES, width)].argmax(1)
    return x, y


def model(width: int, hidden: int, layers: int) -> GraphSAGE:
    """GraphSAGE with mean aggregation, `layers` layers (one per hop), CLASSES outputs."""
    return GraphSAGE(width, hidden, num_layers=layers, out_channels=CLASSES)


def train_step(net: GraphSAGE, optimizer: torch.optim.Optimizer, x: Tensor, edge_index: Tensor, y: Tensor,
               seeds: int) -> float:
    """One step on a mini-batch whose first `seeds` nodes are its seeds; returns the loss."""
    net.train()
    optimizer.zero_grad()
    out = net(x, edge_index)[:seeds]
    loss = torch.nn.functional.cross_entropy(out, y[:seeds])
    loss.backward()
    optimizer.step()
    return float(loss.detach())
