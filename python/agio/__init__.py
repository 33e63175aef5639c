"""agio: GPU threads read and write storage themselves, through agio's NVMe queues.

    import numpy as np, agio
    with agio.Runtime(backend="cpu") as rt:          # "gpu", "cpu" or "auto"
        dev = rt.attach("ram:64M")                    # before the runtime starts: see Runtime
    ...

See docs/PYTHON.md for every call.
"""

import os

# agio's completion service needs CUDA's eager module loading, which only takes effect before
# CUDA starts: asked for here, at import, so that a program importing agio before its first CUDA
# call (PyTorch's included, which would otherwise ask for lazy loading) gets it. A runtime made
# after CUDA came up lazy raises and says so.
os.environ.setdefault("CUDA_MODULE_LOADING", "EAGER")

from ._array import Array  # noqa: E402
from ._cache import Cache  # noqa: E402
from ._many_arrays import gather, prefetch, scatter  # noqa: E402
from ._memory_buffer import MemoryBuffer, Region, SharedRegion  # noqa: E402
from ._runtime import (  # noqa: E402
    Device,
    Future,
    IOError,
    Runtime,
    cuda_backend,
    host_memory_nodes,
    runtime_option_names,
)
from ._stage import ArrayHeader, npy_header, read_header, stage  # noqa: E402

__all__ = [
    "Array",
    "ArrayHeader",
    "Cache",
    "Device",
    "Future",
    "IOError",
    "MemoryBuffer",
    "Region",
    "Runtime",
    "SharedRegion",
    "cuda_backend",
    "gather",
    "host_memory_nodes",
    "npy_header",
    "prefetch",
    "read_header",
    "runtime_option_names",
    "scatter",
    "stage",
]


def __getattr__(name: str):
    # agio.torch imports PyTorch, so `import agio` loads it only when it is asked for.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'agio' has no attribute {name!r}")
