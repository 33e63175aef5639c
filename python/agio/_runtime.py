"""The runtime, its devices and batch reads and writes (wrapping the _agio extension)."""

from __future__ import annotations

import builtins
import importlib.util
import weakref
from typing import Any

from . import _agio

cuda_backend: bool = _agio.cuda_backend
"""Whether this agio was built with its GPU backend (it runs on CPU threads either way)."""


def host_memory_nodes(sysfs_node_dir: str = "/sys/devices/system/node") -> list[dict]:
    """The host's NUMA nodes that hold memory, as Linux lists them in sysfs_node_dir: where
    Cache(..., host_tier_numa_node=ID) can bind a host tier. Each a dict: id, total_bytes,
    free_bytes, cpus (the kernel's CPU list, "" for none) and memory_only (no CPUs: how a CXL
    memory expander appears). Empty where the kernel reports no NUMA nodes (then all host memory
    is node 0)."""
    return _agio.host_memory_nodes(str(sysfs_node_dir))


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


class Future:
    """A read or write in flight (blocking=False, or pread/pwrite), like KvikIO's IOFuture.

    done() says whether it has finished, without waiting; wait() (or get()) waits for it and
    returns its result (the output array, or the bytes transferred for pread/pwrite), raising
    what the call would have raised. Work queued later on the same CUDA stream runs after it
    anyway: wait() is only needed where the host needs the data or the outcome."""

    def __init__(self, batch: Any, result: Any, keep: tuple):
        self._batch = batch
        self._result = result
        self._keep = keep  # the caller's arrays stay alive while the GPU uses them

    def done(self) -> bool:
        return self._batch.done()

    def wait(self) -> Any:
        self._batch.wait()
        self._keep = ()
        return self._result

    get = wait

    def __repr__(self) -> str:
        return f"agio.Future({'done' if self.done() else 'in flight'})"


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

    def read(self, offsets: Any, out: Any, *, stream: Any = None, blocking: bool = True,
             in_flight: int | None = None) -> Any:
        """Reads row i of `out` (its first dimension) from byte offset offsets[i], all rows in
        one batch, and returns `out` (or, with blocking=False, a Future whose wait() returns it).
        `offsets`: any one-dimensional integer array (NumPy, PyTorch, CuPy, JAX: DLPack, the
        buffer protocol or __cuda_array_interface__; in CUDA memory it is checked there, never
        copied to the host); `out`: a C-contiguous array in host memory on the CPU backend, in
        CUDA memory on the GPU backend, whose rows are a multiple of the LBA size. On the GPU
        backend the batch is queued on `stream` (default: the current stream of out's framework,
        PyTorch's or CuPy's), after the work queued there before it. `in_flight`: at most this
        many requests at once (default: one per row, up to 8192 GPU or 16 CPU threads). Raises
        agio.IOError if any row failed (the rows that did not fail hold their data)."""
        return self._transfer(False, offsets, out, stream, blocking, in_flight)

    def write(self, offsets: Any, src: Any, *, stream: Any = None, blocking: bool = True,
              in_flight: int | None = None) -> Any:
        """Writes row i of `src` to byte offset offsets[i]; as read() for the arguments. Returns
        None (with blocking=False, a Future)."""
        return self._transfer(True, offsets, src, stream, blocking, in_flight)

    def pread(self, buf: Any, size: int | None = None, file_offset: int = 0, buf_offset: int = 0, *,
              stream: Any = None) -> Future:
        """KvikIO's pread: reads `size` bytes (default: all of buf from buf_offset) from byte
        `file_offset` of the device into `buf` at byte `buf_offset`, split into transfers of up
        to max_transfer_bytes issued at once. Returns a Future whose get() returns the bytes
        read. file_offset and size are multiples of the LBA size."""
        return self._range(False, buf, size, file_offset, buf_offset, stream)

    def pwrite(self, buf: Any, size: int | None = None, file_offset: int = 0, buf_offset: int = 0, *,
               stream: Any = None) -> Future:
        """KvikIO's pwrite: writes `size` bytes of `buf` from byte `buf_offset` to byte
        `file_offset` of the device; as pread()."""
        return self._range(True, buf, size, file_offset, buf_offset, stream)

    def _transfer(self, write: bool, offsets: Any, data: Any, stream: Any, blocking: bool,
                  in_flight: int | None) -> Any:
        core = self._runtime._live()
        if not write:
            _check_writable("out", data)
        offsets_array, data_array = _array(offsets), _array(data)
        batch = core.transfer(self.index, write, offsets_array, data_array, in_flight or 0,
                              _stream_handle(stream, data))
        future = Future(batch, None if write else data, (offsets_array, data_array))
        return future.wait() if blocking else future

    def _range(self, write: bool, buf: Any, size: int | None, file_offset: int, buf_offset: int,
               stream: Any) -> Future:
        core = self._runtime._live()
        if not write:
            _check_writable("buf", buf)
        array = _array(buf)
        if size is None:
            size = _nbytes(array) - buf_offset
        batch = core.transfer_range(self.index, write, array, size, file_offset, buf_offset,
                                    _stream_handle(stream, buf))
        return Future(batch, size, (array,))

    def __repr__(self) -> str:
        return f"agio.Device({self.index}, {self.uri!r})"


def _check_writable(name: str, a: Any) -> None:
    flags = getattr(a, "flags", None)
    if flags is not None and hasattr(flags, "writeable") and not flags.writeable:
        raise ValueError(f"agio: {name} is read-only; reads need a writable array (numpy: .copy())")


def _nbytes(a: Any) -> int:
    if hasattr(a, "nbytes"):
        return int(a.nbytes)
    return a.numel() * a.element_size()


def _array(a: Any) -> Any:
    """What the extension takes: objects with DLPack or the buffer protocol pass as they are;
    Python sequences become NumPy arrays; objects with only __cuda_array_interface__ (Numba's
    device arrays, for one) are viewed through PyTorch or CuPy, without a copy."""
    if isinstance(a, (list, tuple, range)):
        import numpy

        return numpy.asarray(a, dtype=numpy.int64)
    if hasattr(a, "__cuda_array_interface__") and not hasattr(a, "__dlpack__"):
        if importlib.util.find_spec("torch") is not None:
            import torch

            return torch.as_tensor(a, device="cuda")
        if importlib.util.find_spec("cupy") is not None:
            import cupy

            return cupy.asarray(a)
        raise TypeError(
            "agio: an array with only __cuda_array_interface__ needs PyTorch or CuPy installed "
            "to be viewed; pass a DLPack-capable array instead"
        )
    return a


def _stream_handle(stream: Any, data: Any) -> int:
    """The cudaStream_t to queue a batch on: `stream` as given (an int, a torch.cuda.Stream,
    a CuPy stream: anything with cuda_stream or ptr), else the current stream of the framework
    `data` comes from, else the default stream (0). Refuses a stream being captured into a CUDA
    graph (PyTorch's check; the extension checks the stream itself too)."""
    if stream is not None:
        for attribute in ("cuda_stream", "ptr"):
            if hasattr(stream, attribute):
                return int(getattr(stream, attribute))
        return int(stream)
    kind = type(data).__module__.split(".")[0]
    if kind == "torch" and data.is_cuda:
        import torch

        if torch.cuda.is_current_stream_capturing():
            raise RuntimeError(
                "agio: reads and writes cannot be captured into a CUDA graph: the completion "
                "service they need is started by the host at each call, which a graph replay "
                "would not do. Issue them outside the capture (before it, or between replays)"
            )
        return torch.cuda.current_stream(data.device).cuda_stream
    if kind == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0


def _initialize_torch_cuda() -> None:
    """PyTorch initialises CUDA lazily, on its first CUDA call, and that initialisation waits for
    every kernel running on the device: beside a persistent completion service
    (completion="service", a kernel that runs until stop) it would never return. So when PyTorch
    is installed, its CUDA state is initialised before the runtime starts."""
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
    mover ("gpu_warps", "copy_engine"), completion ("on_demand", the default here: the
    completion service runs only while a call is in flight, so torch.cuda.synchronize() and
    anything else that waits for every kernel return between calls; "service": it runs from
    start to stop, saving a kernel launch per call; "waiters": none, waiting threads retire),
    max_transfer_bytes, controller_threads, service_warps, service_staging_bytes, transaction_records,
    submit_timeout_ms, posted_slots, wait_timeout_ms, stop_timeout_ms, controller_spin_us,
    controller_copy_depth, lanes_per_queue, wait_together_ns, gpu_thread_stack_bytes,
    job_start_timeout_ms, host_tier_bytes, host_tier_numa_node and trip_stamps. An unknown
    keyword raises TypeError.

    The host tier on the runtime: `host_tier_bytes` of pinned host memory (bound to NUMA node
    `host_tier_numa_node`, -1 for none) that every agio.Cache made on this runtime gets below
    it as a host tier unless it says otherwise (docs/CACHE.md), taking what is left of it by
    default or its own host_tier_bytes of it; `host_tier_admission` ("always", "on_reuse",
    "on_eviction") is those tiers' admission unless a Cache gives its own. host_tier_memory()
    says how much is taken."""

    def __init__(self, backend: str = "auto", devices: tuple | list = (), host_tier_admission: str = "always",
                 **options: Any):
        if host_tier_admission not in ("always", "on_reuse", "on_eviction"):
            raise ValueError(f"agio.Runtime: host_tier_admission must be 'always', 'on_reuse' or 'on_eviction', "
                             f"not {host_tier_admission!r}")
        self.host_tier_admission = host_tier_admission
        opts = _agio.RuntimeOptions()
        opts.backend = backend
        opts.completion = "on_demand"
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
        # The live agio.Caches on this runtime (an Array's own cache is one): they live in its
        # memory, so stop() closes them before it frees the runtime. Weak, so that a Cache is
        # freed when its user and its Arrays let go of it.
        self._caches: weakref.WeakSet = weakref.WeakSet()
        # Its memory buffers and shared regions (agio.MemoryBuffer, agio.SharedRegion), closed
        # when it stops, while the runtime they are registered with still exists.
        self._memory: weakref.WeakSet = weakref.WeakSet()
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
        if any(memory._viewed() for memory in self._memory):
            raise BufferError("agio: stop: NumPy views of memory buffer regions are still alive; delete them first")
        core = self._core
        try:
            core.stop()
        finally:
            try:
                core.check()
            except IOError as failure:
                self._failure = failure
            self._stopped = (core.devices(), core.counters(), core.backend())
            # core.stop() wrote the caches back (their stop hooks); closing frees them while the
            # runtime they live in still exists.
            for cache in list(self._caches):
                cache.close()
            for memory in list(self._memory):
                memory.close()
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

    def host_tier_memory(self) -> dict | None:
        """The runtime's host tier memory (host_tier_bytes): a dict of capacity_bytes, used_bytes
        (what the host tiers of its caches hold) and numa_node; None without one or once
        stopped."""
        return None if self._core is None else self._core.host_tier_memory()

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
