#pragma once
// Placeholder on the tools branch: the store interface (store, store_channel, store_io,
// host_memory, open_store) that the I/O benchmark's CPU ceiling and the evaluation's CPU
// pipeline drive directly. The library's public version of src/proxy/store.hpp replaces it.
#include "../../../src/proxy/store.hpp"
