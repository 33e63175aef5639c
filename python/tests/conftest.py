"""The suite runs on the CPU backend with NumPy arrays (CI), or with AGIO_PYTEST_BACKEND=gpu on
the GPU backend with PyTorch CUDA tensors (the GPU machine)."""

import os

import numpy as np
import pytest

BACKEND = os.environ.get("AGIO_PYTEST_BACKEND", "cpu")


class Arrays:
    """Makes the arrays the backend reads into and writes from, and brings them back as NumPy."""

    def __init__(self, backend: str):
        self.backend = backend
        if backend == "gpu":
            import torch

            self.torch = torch

    def put(self, a: np.ndarray):
        if self.backend == "gpu":
            return self.torch.from_numpy(np.ascontiguousarray(a)).cuda()
        return np.ascontiguousarray(a)

    def empty(self, shape, dtype):
        return self.put(np.zeros(shape, dtype))

    def get(self, a) -> np.ndarray:
        if self.backend == "gpu":
            return a.cpu().numpy()
        return a


@pytest.fixture
def backend() -> str:
    return BACKEND


@pytest.fixture
def arrays() -> Arrays:
    return Arrays(BACKEND)
