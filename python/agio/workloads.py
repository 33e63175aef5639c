"""agio.workloads: the Criteo-shaped samples of agio's DLRM benchmark (`agio-eval dlrm`), made
by the same C++ generator, so that a Python DLRM runs on the very samples the C++ one does.

    vocab = agio.workloads.criteo_vocab_sizes(scale=0.01, cap=100_000)
    gen = agio.workloads.CriteoGenerator(vocab, alpha=1.05, seed=1)
    dense, sparse, labels = gen.batch(2048)   # float32 [2048, 13], int64 [2048, 26], float32 [2048]

Samples: dense[i] = log(1 + count) of heavy-tailed counts, sparse[:, t] a row of table t drawn
from Zipf(alpha) over its vocab[t] rows (the hot rows spread over the table, the same rows for
every seed), labels 1 with probability 0.03. The same (vocab, alpha, seed) gives the same
samples on every platform. See docs/PYTHON.md#workloads.
"""

from __future__ import annotations

import math

from . import _agio

DENSE_FEATURES: int = _agio.criteo_dense_features
SPARSE_FEATURES: int = _agio.criteo_sparse_features
_ROWS_MAX = (1 << 32) - 1  # the generator's rows are 32-bit


def criteo_vocab_sizes(scale: float = 1.0, cap: int | None = None) -> list[int]:
    """Rows per table of the Criteo 1TB logs (26 tables, MLPerf's DLRM), each scaled by `scale`
    (rounded; at least 2 where the original has 2 or more) and then capped at `cap` rows."""
    if isinstance(scale, bool) or not isinstance(scale, (int, float)) or not math.isfinite(scale) or scale <= 0:
        raise ValueError(f"agio.workloads.criteo_vocab_sizes: scale must be a positive finite number, not {scale!r}")
    if cap is None:
        cap = _ROWS_MAX
    if isinstance(cap, bool) or not isinstance(cap, int) or not 1 <= cap <= _ROWS_MAX:
        raise ValueError(
            f"agio.workloads.criteo_vocab_sizes: cap must be an integer from 1 to {_ROWS_MAX}, not {cap!r}")
    return list(_agio.criteo_vocab_sizes(float(scale), cap))


class CriteoGenerator:
    """Deterministic Criteo-shaped samples over tables of `vocab` rows (26 integers, each from 1
    to 2**32 - 1), lookups Zipf-skewed with exponent `alpha` (>= 0; 0 is uniform), from `seed`.
    Each batch(n) continues the same stream."""

    def __init__(self, vocab, alpha: float = 1.05, seed: int = 1):
        rows = [int(v) for v in vocab]
        if len(rows) != SPARSE_FEATURES or any(not 1 <= v <= _ROWS_MAX for v in rows):
            raise ValueError(
                f"agio.workloads.CriteoGenerator: vocab must be {SPARSE_FEATURES} table sizes from 1 to {_ROWS_MAX}, "
                f"not {rows!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not math.isfinite(alpha) or alpha < 0:
            raise ValueError(f"agio.workloads.CriteoGenerator: alpha must be a finite number >= 0, not {alpha!r}")
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < (1 << 64):
            raise ValueError(
                f"agio.workloads.CriteoGenerator: seed must be an integer from 0 to 2**64 - 1, not {seed!r}")
        self._gen = _agio.CriteoGenerator(rows, float(alpha), seed)
        self.seed = seed

    @property
    def vocab(self) -> list[int]:
        return list(self._gen.vocab)

    @property
    def alpha(self) -> float:
        return self._gen.alpha

    def batch(self, n: int):
        """The next `n` samples: (dense float32 [n, 13], sparse int64 [n, 26], labels float32
        [n]), NumPy arrays of their own. The GIL is released while they are made."""
        if isinstance(n, bool) or not isinstance(n, int) or n < 0:
            raise ValueError(f"agio.workloads.CriteoGenerator.batch: n must be an integer >= 0, not {n!r}")
        return self._gen.batch(n)

    def __repr__(self) -> str:
        return f"CriteoGenerator(vocab={self.vocab}, alpha={self.alpha}, seed={self.seed})"
