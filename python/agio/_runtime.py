"""The runtime, its devices and batch reads and writes (wrapping the _agio extension)."""

from __future__ import annotations

import builtins
import importlib.util
import weakref
from typing import Any

from . import _agio

cuda_backend: bool = _agio.cuda_backend
"""Whether this agio was built with its GPU backend (it runs on CPU threads either way)."""


class IOError(builtins.OSError):
    """A request agio could not carry out, with the C++ runtime's fields.

    Attributes (set when the error names a request; `has_request` says whether it does):
    device, uri, opcode ("read", "write", "flush" or "other"), lba, blocks, result (the outcome
    in words), nvme_status, error_number (the store's errno, 0 if none), refusal (why it was
    refused before submission, "completed" when it was submitted and failed),
    controller_failure (a controller thread's failure, or ""), store_error (the store's words).
    `errno` is error_number, or EIO when the store gave none.
    """


_agio._set_io_error_type(IOError)

runtime_option_names = tuple(
    name for name in dir(_agio.RuntimeOptions) if not name.startswith("_")
)
"""Keywords Runtime accepts: the fields of the C++ agio::runtime_options."""


class Device:
    """A store attached to a Runtime (Runtime.attach). Its properties are known once attached;
    reads and writes need the runtime started."""

    def __init__(self, runtime: "Runtime", index: int):
        self._runtime = runtime
        self.index = index

    def _description(self) -> dict:
        return self._runtime._devices()[self.index]

    @property
    def uri(self) -> str:
        return self._description()["uri"]

    @property
    def lba_bytes(self) -> int:
        """The store's logical block size: offsets and row sizes are multiples of it."""
        return self._description()["lba_bytes"]

    @property
    def capacity_bytes(self) -> int:
        return self._description()["capacity_bytes"]

    def read(self, offsets: Any, out: Any) -> Any:
        """Reads row i of `out` (its first dimension) from byte offset offsets[i], all rows in
        one batch, and returns `out`. `offsets`: any one-dimensional integer array (NumPy,
        PyTorch, CuPy: anything with DLPack or the buffer protocol); `out`: a C-contiguous
        array in host memory on the CPU backend, in CUDA memory on the GPU backend, whose rows
        are a multiple of the LBA size. Returns once every row has landed; raises agio.IOError
        if any failed (the rows that did not fail hold their data)."""
        self._runtime._live().transfer(self.index, False, _array(offsets), _array(out))
        return out

    def write(self, offsets: Any, src: Any) -> None:
        """Writes row i of `src` to byte offset offsets[i]; as read() for the arguments."""
        self._runtime._live().transfer(self.index, True, _array(offsets), _array(src))

    def __repr__(self) -> str:
        return f"agio.Device({self.index}, {self.uri!r})"


def _array(a: Any) -> Any:
    """Python sequences become NumPy arrays; arrays pass as they are (DLPack/buffer protocol)."""
    if isinstance(a, (list, tuple, range)):
        import numpy

        return numpy.asarray(a, dtype=numpy.int64)
    return a


def _initialize_torch_cuda() -> None:
    """PyTorch initialises CUDA lazily, on its first CUDA call, and that initialisation waits for
    every kernel running on the device: after the runtime has started its completion service (a
    kernel that runs until stop) it would never return. So when PyTorch is installed, its CUDA
    state is initialised before the service starts."""
    if importlib.util.find_spec("torch") is None:
        return
    import torch

    if torch.cuda.is_available():
        torch.cuda.init()


class Runtime:
    """agio's runtime: its devices, queues, completion service and controller.

        with agio.Runtime(backend="auto") as rt:   # starts on enter, stops on exit
            ...

    Devices are attached before start: pass `devices=[uri, ...]` or call attach() first and
    start() (or enter the `with` block) after. Keywords are the fields of the C++
    agio::runtime_options (runtime_option_names lists them): backend ("auto", "gpu", "cpu"),
    mover ("gpu_warps", "copy_engine"), completion ("service", "waiters"),
    max_transfer_bytes, controller_threads, service_warps, transaction_records,
    submit_timeout_ms, wait_timeout_ms, stop_timeout_ms, controller_spin_us,
    gpu_thread_stack_bytes. An unknown keyword raises TypeError."""

    def __init__(self, backend: str = "auto", devices: tuple | list = (), **options: Any):
        opts = _agio.RuntimeOptions()
        opts.backend = backend
        for name, value in options.items():
            if name not in runtime_option_names:
                raise TypeError(
                    f"agio.Runtime: unknown option {name!r}; the options are "
                    + ", ".join(runtime_option_names)
                )
            setattr(opts, name, value)
        self._core = _agio.Core(opts)
        self._stopped: tuple = ()  # devices, counters and backend, once stopped
        self._failure: IOError | None = None  # what check() raised at stop
        # The live agio.Arrays on this runtime: their caches live in its memory, so stop()
        # closes them before it frees the runtime. Weak, so that an Array is freed when its
        # user lets go of it.
        self._arrays: weakref.WeakSet = weakref.WeakSet()
        self.devices: list[Device] = []
        for uri in devices:
            self.attach(uri)

    def attach(self, uri: str, queue_pairs: int = 4, queue_depth: int = 256) -> Device:
        """Attaches a store before start: "file:PATH[?...]" or "ram:SIZE[?...]" (USAGE.md has
        the URI's options). Raises ValueError or OSError naming the URI if it cannot open."""
        device = Device(self, self._live().attach(uri, queue_pairs, queue_depth))
        self.devices.append(device)
        return device

    def start(self) -> "Runtime":
        core = self._live()
        if core.backend() == "gpu":
            _initialize_torch_cuda()
        core.start()
        return self

    def stop(self) -> None:
        """Lets requests in flight finish, makes acknowledged writes durable and frees the
        runtime's memory; idempotent. A stopped runtime does not start again (make a new one);
        its devices and counters stay readable."""
        if self._core is None:
            return
        core = self._core
        try:
            core.stop()
        finally:
            try:
                core.check()
            except IOError as failure:
                self._failure = failure
            self._stopped = (core.devices(), core.counters(), core.backend())
            # core.stop() wrote the Arrays' caches back (their stop hooks); closing frees them
            # while the runtime they live in still exists.
            for array in list(self._arrays):
                array.close()
            # Freed now rather than whenever the garbage collector comes: on the GPU backend
            # freeing device memory waits for every running kernel, so a runtime freed while
            # another one's completion service runs would wait for as long as that one runs.
            self._core = None

    def _live(self) -> Any:
        if self._core is None:
            raise RuntimeError("agio: this runtime has stopped; make a new agio.Runtime")
        return self._core

    def _devices(self) -> list[dict]:
        return self._stopped[0] if self._core is None else self._core.devices()

    @property
    def running(self) -> bool:
        return self._core is not None and self._core.running()

    @property
    def backend(self) -> str:
        """"gpu" or "cpu": where requests are issued from."""
        return self._stopped[2] if self._core is None else self._core.backend()

    def describe(self) -> str:
        return "stopped" if self._core is None else self._core.describe()

    def counters(self) -> list[dict]:
        """One dict per device: uri, submitted, completed, errors, rejected,
        queue_full_retries, bytes, latency_p50_ns, latency_p99_ns. After stop: as they were
        then."""
        return self._stopped[1] if self._core is None else self._core.counters()

    def check(self) -> None:
        """Raises agio.IOError for the first request that failed since start, if any (after
        stop, for the run that ended)."""
        if self._core is not None:
            self._core.check()
        elif self._failure is not None:
            raise self._failure

    def __enter__(self) -> "Runtime":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.running else "stopped"
        return f"agio.Runtime({self.describe()!r}, {len(self.devices)} devices, {state})"
