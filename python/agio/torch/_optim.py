"""The optimisers applied to a table's rows inside backward (the table is not a Parameter, so
torch.optim never sees it): each takes the rows a batch read and their summed gradients, and
returns the rows to write back."""

from __future__ import annotations

from typing import Any

import torch


class SGD:
    """w -= lr * g, as torch.optim.SGD without momentum or weight decay."""

    name = "sgd"

    def __init__(self, lr: float, eps: float):
        self.lr = lr

    def new_state(self, num_rows: int, device: torch.device) -> Any:
        return None

    def updated(self, rows: torch.Tensor, grad: torch.Tensor, state: Any, uniq: torch.Tensor) -> torch.Tensor:
        return rows.add(grad.to(rows.dtype), alpha=-self.lr)


class RowwiseAdagrad:
    """FBGEMM's and DLRM's row-wise Adagrad: one float32 accumulator per row,
    state[r] += mean(g_r ** 2), then w_r -= lr * g_r / (sqrt(state[r]) + eps)."""

    name = "rowwise_adagrad"

    def __init__(self, lr: float, eps: float):
        self.lr, self.eps = lr, eps

    def new_state(self, num_rows: int, device: torch.device) -> torch.Tensor:
        return torch.zeros(num_rows, dtype=torch.float32, device=device)

    def updated(self, rows: torch.Tensor, grad: torch.Tensor, state: torch.Tensor, uniq: torch.Tensor) -> torch.Tensor:
        g = grad.float()
        accumulated = state[uniq] + g.pow(2).mean(dim=1)
        state[uniq] = accumulated
        step = (self.lr / (accumulated.sqrt() + self.eps)).unsqueeze(1) * g
        return (rows.float() - step).to(rows.dtype)


OPTIMIZERS = {kind.name: kind for kind in (SGD, RowwiseAdagrad)}


def make_optimizer(name: Any, lr: float, eps: float, where: str) -> Any:
    """The optimiser called `name`, or None for None (a table that is read only)."""
    if name is None:
        return None
    if name not in OPTIMIZERS:
        raise ValueError(f"{where}: optimizer is one of {', '.join(map(repr, OPTIMIZERS))} or None, not {name!r}")
    if not lr > 0:
        raise ValueError(f"{where}: lr is a positive learning rate, not {lr!r}")
    if not eps > 0:
        raise ValueError(f"{where}: eps is positive, not {eps!r}")
    return OPTIMIZERS[name](float(lr), float(eps))
