"""agio.gather, agio.scatter, agio.prefetch: rows of several agio.Arrays that share one
agio.Cache, all in one agio job (one GPU launch)."""

from __future__ import annotations

from typing import Any

from ._array import Array
from ._runtime import _array


def gather(pairs: Any, out: Any = None) -> list:
    """Rows index[i] of each (array, index) pair, one output a pair, as Array.gather gives
    them: out[k] when `out` (a list, one C-contiguous array a pair) is given, else a new array
    of index k's framework. Every array must share one agio.Cache (ValueError naming two that
    do not). Raises IndexError naming the pair and the first index out of range, agio.IOError
    when storage failed; nothing runs until every pair is checked."""
    pairs = _pairs("agio.gather", pairs, 2)
    if out is not None and len(out) != len(pairs):
        raise ValueError(f"agio.gather: out holds {len(out)} arrays for {len(pairs)} pairs; give one a pair")
    cache = _shared_cache("agio.gather", pairs)
    outs, segments = [], []
    for k, (arr, index) in enumerate(pairs):
        name = f"pairs[{k}] "
        index = _array(index)
        rows = arr._out(name, index, None if out is None else out[k])
        outs.append(rows)
        segments.append(arr._segment(name, index, rows))
    if segments:
        cache.gather(segments)
    return outs


def scatter(pairs: Any) -> None:
    """Writes values[i] as row index[i] of each (array, index, values) pair, as Array.scatter
    does, all in one job; every pair's index and values are checked before anything is
    written. The arrays share one agio.Cache, as for gather."""
    pairs = _pairs("agio.scatter", pairs, 3)
    cache = _shared_cache("agio.scatter", pairs)
    segments = []
    for k, (arr, index, values) in enumerate(pairs):
        name = f"pairs[{k}] "
        index = _array(index)
        arr._check_rows(name + "values", values, index)
        segments.append(arr._segment(name, index, values))
    if segments:
        cache.scatter(segments)


def prefetch(pairs: Any) -> None:
    """Starts loading rows index[i] of each (array, index) pair into their shared cache, as
    Array.prefetch does, in one job."""
    pairs = _pairs("agio.prefetch", pairs, 2)
    cache = _shared_cache("agio.prefetch", pairs)
    segments = [arr._segment(f"pairs[{k}] ", _array(index), None) for k, (arr, index) in enumerate(pairs)]
    if segments:
        cache.prefetch(segments)


def _pairs(call: str, pairs: Any, size: int) -> list:
    """`pairs` as a list of `size`-tuples whose first item is an agio.Array."""
    pairs = list(pairs)
    what = "(array, index)" if size == 2 else "(array, index, values)"
    for k, pair in enumerate(pairs):
        if not isinstance(pair, (tuple, list)) or len(pair) != size or not isinstance(pair[0], Array):
            raise TypeError(f"{call}: pairs[{k}] must be a tuple {what} with an agio.Array, not {pair!r}")
    return pairs


def _shared_cache(call: str, pairs: list) -> Any:
    """The extension's cache every pair's array reads through (None for no pairs); ValueError
    naming the first array on another cache."""
    if not pairs:
        return None
    first = pairs[0][0]
    for k, pair in enumerate(pairs):
        if pair[0].cache is not first.cache:
            raise ValueError(
                f"{call}: pairs[0] ({first!r}) and pairs[{k}] ({pair[0]!r}) use different caches; "
                "one call covers arrays of one agio.Cache (make them with agio.Array(..., cache=cache))"
            )
    for arr, *_ in pairs:
        arr._live()
    return first._live()
