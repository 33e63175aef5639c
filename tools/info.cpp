// agio info URI: opens a store as it is (never creating or resizing a file) and prints its size
// and block size.
#include "info.hpp"

#include <cstdio>
#include <stdexcept>
#include <string>

#include "agio/runtime/runtime.hpp"
#include "agio/store/store_uri.hpp"

namespace agio::tools {

int info_main(int argc, char** argv, int first) {
  if (argc - first != 1 || std::string(argv[first]).rfind("--", 0) == 0) {
    throw std::invalid_argument("give one store URI (file:PATH or ram:SIZE), e.g. agio info file:/data/store.bin");
  }
  const std::string uri = argv[first];
  // Looking must not change anything: a create= would make or grow the file.
  if (parse_store_uri(uri).options.create_bytes) {
    throw std::invalid_argument("info opens existing stores only and never creates one: drop create= from '" + uri +
                                "'");
  }
  runtime_options opt;
  opt.backend = backend::cpu;  // looking needs no GPU
  runtime rt(opt);
  rt.attach(uri);
  for (const auto& d : rt.devices()) {
    std::printf("%s: %llu blocks of %u bytes (%.1f MiB)\n", d.uri.c_str(),
                static_cast<unsigned long long>(d.capacity_blocks), d.lba_bytes,
                static_cast<double>(d.capacity_blocks) * d.lba_bytes / (1 << 20));
  }
  return 0;
}

}  // namespace agio::tools
