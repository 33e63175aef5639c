"""Where reads land: CUDA memory from PyTorch (or CuPy when PyTorch is absent) on the GPU
backend, NumPy arrays on the CPU backend; and the name of the machine's GPU."""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np


def _has(module: str) -> bool:
    return importlib.util.find_spec(module) is not None


def gpu_name() -> str:
    """The first CUDA device's name as PyTorch or CuPy reports it, or "no GPU"."""
    if _has("torch"):
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name(0)
    if _has("cupy"):
        import cupy

        try:
            return cupy.cuda.runtime.getDeviceProperties(0)["name"].decode()
        except cupy.cuda.runtime.CUDARuntimeError:
            pass
    return "no GPU"


class Memory:
    """Arrays in the memory the backend reads into (`library`: "torch", "cupy" or "numpy")."""

    def __init__(self, backend: str):
        if backend == "cpu":
            self.library = "numpy"
        elif _has("torch"):
            self.library = "torch"
        elif _has("cupy"):
            self.library = "cupy"
        else:
            raise RuntimeError(
                "agio.bench: the GPU backend reads into CUDA memory; install PyTorch or CuPy, "
                "or run with --backend cpu"
            )
        if self.library == "torch":
            import torch

            self._lib = torch
        elif self.library == "cupy":
            import cupy

            self._lib = cupy

    def rows(self, count: int, row_bytes: int) -> Any:
        """A (count, row_bytes) uint8 array, zeroed."""
        if self.library == "torch":
            return self._lib.zeros((count, row_bytes), dtype=self._lib.uint8, device="cuda")
        if self.library == "cupy":
            return self._lib.zeros((count, row_bytes), dtype=self._lib.uint8)
        return np.zeros((count, row_bytes), np.uint8)

    def zero(self, a: Any) -> None:
        if self.library == "torch":
            a.zero_()
        else:
            a.fill(0)

    def put(self, a: np.ndarray) -> Any:
        """A copy of a NumPy array in this memory."""
        if self.library == "torch":
            return self._lib.from_numpy(np.ascontiguousarray(a)).cuda()
        if self.library == "cupy":
            return self._lib.asarray(a)
        return np.ascontiguousarray(a)

    def get(self, a: Any) -> np.ndarray:
        """A NumPy copy of an array in this memory."""
        if self.library == "torch":
            return a.cpu().numpy()
        if self.library == "cupy":
            return a.get()
        return a

    def synchronize(self) -> None:
        """Waits for the current CUDA stream (never the whole device: a started runtime's
        completion service would keep a device-wide synchronize waiting until it stops)."""
        if self.library == "torch":
            self._lib.cuda.current_stream().synchronize()
        elif self.library == "cupy":
            self._lib.cuda.get_current_stream().synchronize()
