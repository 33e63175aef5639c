// cuFile's batch API where CMake did not find libcufile (baselines/cufile_reader.hpp): never
// available, and saying how to build it.
#include <stdexcept>

#include "baselines/cufile_reader.hpp"

namespace agio::bench {

struct cufile_reader::state {};

std::string cufile_reader::why_unavailable() {
  return "libcufile was not found at build time (needs CUDA; configure with -DAGIO_CUFILE_ROOT=DIR holding "
         "include/cufile.h and lib/libcufile.so*)";
}

cufile_reader::cufile_reader(const std::vector<std::string>&, std::uint64_t, unsigned) {
  throw std::runtime_error("cufile_reader: " + why_unavailable());
}
cufile_reader::~cufile_reader() = default;
void cufile_reader::register_buffer(std::byte*, std::size_t) {}
void cufile_reader::deregister_buffer(std::byte*) {}
void cufile_reader::read(const std::vector<std::uint64_t>&, std::byte*) {}

}  // namespace agio::bench
