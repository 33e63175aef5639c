"""The suite runs on the CPU backend with NumPy arrays (CI), or with AGIO_PYTEST_BACKEND=gpu on
the GPU backend with PyTorch CUDA tensors (the GPU machine)."""

import os
import threading

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


def in_threads(count: int, body) -> None:
    """Runs body(k) on `count` Python threads at once and fails with the first exception any of
    them raised (a thread's failure would otherwise only be printed)."""
    failures = []

    def run(k: int) -> None:
        try:
            body(k)
        except Exception as e:  # noqa: BLE001 - reported below, by the test's thread
            failures.append(e)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in threads), "a thread did not finish within 300 s"
    if failures:
        raise failures[0]


def random_rows(rows: int, seed: int, row_bytes: int = 4096) -> np.ndarray:
    """`rows` rows of `row_bytes` random bytes, the same for the same seed."""
    return np.random.default_rng(seed).integers(0, 255, size=(rows, row_bytes), dtype=np.uint8)
