#pragma once
// What a user with NVIDIA's GPUDirect Storage library would use instead of agio: cuFile's batch
// API reads blocks from files straight into GPU memory (DMA through the nvidia-fs driver or,
// without it, cuFile's compatibility mode: POSIX reads staged through pinned buffers). The
// DLRM benchmark's `cufile` mode runs on it. CMake picks the implementation: cufile_reader.cpp
// where it found libcufile, cufile_reader_absent.cpp (never available) elsewhere.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace agio::bench {

class cufile_reader {
 public:
  // Why no reader can be made here, "" when one can: libcufile missing at build time, or
  // cuFileDriverOpen failing (it is called once, on the first ask).
  static std::string why_unavailable();
  static bool available() { return why_unavailable().empty(); }

  // Opens the files of `uris` (file: stores only: std::invalid_argument names any other) for
  // `blocks` 4 KiB blocks striped over them as over agio's devices (baselines/block_reader.hpp),
  // keeping up to `batches_in_flight` batches of reads in flight. Throws std::runtime_error
  // when cuFile is unavailable or refuses a file.
  cufile_reader(const std::vector<std::string>& uris, std::uint64_t blocks, unsigned batches_in_flight);
  ~cufile_reader();
  cufile_reader(const cufile_reader&) = delete;
  cufile_reader& operator=(const cufile_reader&) = delete;

  // Registers device memory that reads will land in (GPUDirect DMA wants registered buffers).
  // Where cuFile refuses, reads go to it unregistered and the reader says so once.
  // Deregister before freeing it.
  void register_buffer(std::byte* device, std::size_t bytes);
  void deregister_buffer(std::byte* device);

  // Reads global block blocks[i] into device memory at device_dst + i * 4096 and returns once
  // all are there. Throws with the file, block and cuFile's status on a failed or short read
  // or one not done within the deadline; the reader is not to be used after that.
  void read(const std::vector<std::uint64_t>& blocks, std::byte* device_dst);

 private:
  struct state;
  std::unique_ptr<state> state_;
};

}  // namespace agio::bench
