"""agio: GPU threads read and write storage themselves, through agio's NVMe queues.

    import numpy as np, agio
    with agio.Runtime(backend="cpu") as rt:          # "gpu", "cpu" or "auto"
        dev = rt.attach("ram:64M")                    # before the runtime starts: see Runtime
    ...

See docs/PYTHON.md for every call.
"""

from ._array import Array
from ._cache import Cache
from ._many_arrays import gather, prefetch, scatter
from ._runtime import Device, Future, IOError, Runtime, cuda_backend, runtime_option_names
from ._stage import ArrayHeader, npy_header, read_header, stage

__all__ = [
    "Array",
    "ArrayHeader",
    "Cache",
    "Device",
    "Future",
    "IOError",
    "Runtime",
    "cuda_backend",
    "gather",
    "npy_header",
    "prefetch",
    "read_header",
    "runtime_option_names",
    "scatter",
    "stage",
]
