"""The DLRM network of agio's C++ DLRM benchmark (eval/dlrm/network.hpp, after Naumov et al.) in
PyTorch: a bottom MLP over the 13 dense features ending in a projection to the embedding
dimension, the pairwise dot products of its output and the 26 embedding rows (the strictly lower
triangle of the 27 x 27 Gram matrix, in the C++ order), and a top MLP over [bottom output, the
products] ending in one click probability. ReLU after every layer but the last, a sigmoid there.

Configurations (eval/dlrm/network.hpp): the MLPs hold 3 (1), 1 (2) or 6 (3) square products of
the bottom and top widths, between projection layers. The benchmark's configuration 1 is
bottom 13-512-512-512-512-64, top 415-1024-1024-1024-1024-1, FP32.

Imported by `python -m agio.bench dlrm` and by examples/python/dlrm.py; needs PyTorch."""

from __future__ import annotations

import torch

PRODUCTS = {1: 3, 2: 1, 3: 6}


def _mlp(widths: list[int], last_sigmoid: bool, generator: torch.Generator) -> torch.nn.Sequential:
    """Linear layers between consecutive widths, Xavier-uniform weights and small biases (as the
    C++ network_weights), ReLU after each but the last."""
    layers: list[torch.nn.Module] = []
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        linear = torch.nn.Linear(n_in, n_out)
        with torch.no_grad():
            bound = (6.0 / (n_in + n_out)) ** 0.5
            linear.weight.uniform_(-bound, bound, generator=generator)
            linear.bias.uniform_(-0.01, 0.01, generator=generator)
        layers.append(linear)
        last = i == len(widths) - 2
        if not last:
            layers.append(torch.nn.ReLU())
        elif last_sigmoid:
            layers.append(torch.nn.Sigmoid())
    return torch.nn.Sequential(*layers)


class DLRM(torch.nn.Module):
    """forward(dense [batch, dense_features], embeddings [batch, tables, dim]) -> click
    probabilities [batch]. Weights are drawn from `seed` on the CPU (the same network on every
    device); move the module with .to(device)."""

    def __init__(self, config: int = 1, dim: int = 64, bottom_width: int = 512, top_width: int = 1024,
                 tables: int = 26, dense_features: int = 13, seed: int = 11):
        super().__init__()
        if config not in PRODUCTS:
            raise ValueError(f"DLRM: config is 1, 2 or 3, not {config!r}")
        for name, value in (("dim", dim), ("bottom_width", bottom_width), ("top_width", top_width),
                            ("tables", tables), ("dense_features", dense_features)):
            if not isinstance(value, int) or value < 1:
                raise ValueError(f"DLRM: {name} must be a positive integer, not {value!r}")
        products = PRODUCTS[config]
        vectors = tables + 1  # the bottom output and one row per table
        self.config, self.dim, self.tables = config, dim, tables
        self.top_input = dim + vectors * (vectors - 1) // 2
        generator = torch.Generator().manual_seed(seed)
        self.bottom = _mlp([dense_features] + [bottom_width] * (products + 1) + [dim], False, generator)
        self.top = _mlp([self.top_input] + [top_width] * (products + 1) + [1], True, generator)
        rows, cols = torch.tril_indices(vectors, vectors, offset=-1)
        self.register_buffer("_rows", rows, persistent=False)
        self.register_buffer("_cols", cols, persistent=False)

    def interact(self, bottom: torch.Tensor, embeddings: torch.Tensor) -> torch.Tensor:
        """[bottom, every dot product of two different vectors of (bottom, embeddings...)]."""
        vectors = torch.cat([bottom.unsqueeze(1), embeddings], dim=1)
        gram = torch.bmm(vectors, vectors.transpose(1, 2))
        return torch.cat([bottom, gram[:, self._rows, self._cols]], dim=1)

    def forward(self, dense: torch.Tensor, embeddings: torch.Tensor) -> torch.Tensor:
        if embeddings.dim() != 3 or embeddings.shape[1:] != (self.tables, self.dim):
            raise ValueError(f"DLRM: embeddings are [batch, {self.tables}, {self.dim}], not {tuple(embeddings.shape)}")
        if dense.shape[0] != embeddings.shape[0]:
            raise ValueError(f"DLRM: {dense.shape[0]} dense rows for {embeddings.shape[0]} samples of embeddings")
        return self.top(self.interact(self.bottom(dense), embeddings)).squeeze(1)
