"""agio: GPU threads read and write storage themselves, through agio's NVMe queues.

    import numpy as np, agio
    with agio.Runtime(backend="cpu") as rt:          # "gpu", "cpu" or "auto"
        dev = rt.attach("ram:64M")                    # before the runtime starts: see Runtime
    ...

See docs/PYTHON.md for every call.
"""

from ._array import Array
from ._runtime import Device, IOError, Runtime, cuda_backend, runtime_option_names

__all__ = ["Array", "Device", "IOError", "Runtime", "cuda_backend", "runtime_option_names"]
