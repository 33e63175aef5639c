"""The checks every lookup makes before anything is read, so that a bad batch raises a Python
exception that says what to change and no row is gathered or written."""

from __future__ import annotations

from typing import Any

import torch

MODES = ("sum", "mean", "max")


def checked_mode(mode: str, where: str) -> str:
    if mode not in MODES:
        raise ValueError(f"{where}: mode is one of {', '.join(MODES)}, not {mode!r}")
    return mode


def checked_indices(indices: Any, where: str, name: str = "input") -> torch.Tensor:
    """`indices` as a tensor of int32 or int64 (the integer types torch.nn.EmbeddingBag takes)."""
    if not isinstance(indices, torch.Tensor):
        raise TypeError(f"{where}: {name} is a torch.Tensor of int32 or int64, not {type(indices).__name__}")
    if indices.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"{where}: {name} holds {indices.dtype}; indices are torch.int32 or torch.int64")
    return indices


def check_in_range(indices: torch.Tensor, uniq: torch.Tensor, num_rows: int, where: str, name: str = "input") -> None:
    """Raises IndexError naming the first of `indices` outside [0, num_rows). `uniq` is the
    sorted torch.unique of `indices`, so its ends alone tell whether one is (one host read)."""
    if uniq.numel() == 0:
        return
    low, high = torch.stack([uniq[0], uniq[-1]]).tolist()
    if low >= 0 and high < num_rows:
        return
    bad = ((indices < 0) | (indices >= num_rows)).nonzero()[0].tolist()
    position = ", ".join(str(i) for i in bad)
    value = int(indices[tuple(bad)])
    raise IndexError(f"{where}: {name}[{position}] = {value} is out of range for a table of {num_rows} rows")


def checked_offsets(offsets: Any, length: int, include_last_offset: bool, where: str) -> torch.Tensor:
    """torch.nn.EmbeddingBag's `offsets` for a 1-D input of `length` indices, as int64: 1-D,
    starting at 0, non-decreasing and at most `length`."""
    if not isinstance(offsets, torch.Tensor):
        raise TypeError(f"{where}: offsets is a 1-D torch.Tensor of int32 or int64, not {type(offsets).__name__}")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"{where}: offsets holds {offsets.dtype}; offsets are torch.int32 or torch.int64")
    if offsets.dim() != 1:
        raise ValueError(f"{where}: offsets is 1-D (the start of each bag), not of shape {tuple(offsets.shape)}")
    if offsets.numel() < 1 + include_last_offset:
        least = "two (the first bag's start and the end)" if include_last_offset else "one"
        raise ValueError(f"{where}: offsets holds {offsets.numel()} entries; it needs at least {least}")
    host = offsets.tolist()
    if host[0] != 0:
        raise ValueError(f"{where}: offsets[0] is {host[0]}; the first bag starts at 0")
    steps = [i for i in range(1, len(host)) if host[i] < host[i - 1]]
    if steps:
        i = steps[0]
        raise ValueError(f"{where}: offsets decrease at offsets[{i}] = {host[i]} < offsets[{i - 1}] = {host[i - 1]}")
    if host[-1] > length:
        raise ValueError(f"{where}: offsets[{len(host) - 1}] = {host[-1]} is past the input's {length} indices")
    return offsets.to(torch.int64)


def check_input_shape(indices: torch.Tensor, offsets: Any, where: str) -> None:
    if indices.dim() == 1 and offsets is None:
        raise ValueError(f"{where}: a 1-D input needs offsets (the start of each bag); or pass a 2-D input")
    if indices.dim() == 2 and offsets is not None:
        raise ValueError(f"{where}: a 2-D input is one bag a row, so offsets must be None")
    if indices.dim() not in (1, 2):
        raise ValueError(f"{where}: input is 1-D (with offsets) or 2-D, not of shape {tuple(indices.shape)}")


def checked_weights(weights: Any, indices: torch.Tensor, mode: str, dtype: torch.dtype, where: str) -> Any:
    if weights is None:
        return None
    if mode != "sum":
        raise ValueError(f"{where}: per_sample_weights goes with mode 'sum' only, not {mode!r}")
    if not isinstance(weights, torch.Tensor):
        raise TypeError(f"{where}: per_sample_weights is a torch.Tensor, not {type(weights).__name__}")
    if weights.shape != indices.shape:
        raise ValueError(
            f"{where}: per_sample_weights has shape {tuple(weights.shape)}; it needs the input's "
            f"{tuple(indices.shape)}"
        )
    if weights.dtype != dtype:
        raise TypeError(f"{where}: per_sample_weights holds {weights.dtype}; the table holds {dtype}")
    return weights
