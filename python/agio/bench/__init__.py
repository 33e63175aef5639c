"""agio's Python benchmarks (python -m agio.bench): 4 KiB random reads into GPU memory through
Device.read beside KvikIO (file: store, real I/O) and beside agio's C++ benchmark (ram: store,
an emulation), and Array gathers through the HBM cache beside a C++ gather. See
docs/PYTHON.md#benchmarks."""
