"""agio: GPU threads read and write storage themselves, through agio's NVMe queues.

    import numpy as np, agio
    with agio.Runtime(backend="cpu") as rt:          # "gpu", "cpu" or "auto"
        dev = rt.attach("ram:64M")                    # before the runtime starts: see Runtime
    ...

See docs/PYTHON.md for every call.
"""

from ._array import Array
from ._runtime import Device, Future, IOError, Runtime, cuda_backend, runtime_option_names
from ._stage import ArrayHeader, npy_header, read_header, stage

__all__ = [
    "Array",
    "ArrayHeader",
    "Device",
    "Future",
    "IOError",
    "Runtime",
    "cuda_backend",
    "npy_header",
    "read_header",
    "runtime_option_names",
    "stage",
]


def __getattr__(name: str):
    # agio.torch imports PyTorch, so `import agio` loads it only when it is asked for.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'agio' has no attribute {name!r}")
