#pragma once
// agio's binary CSR file: a graph that loads without parsing (a Kronecker graph of scale 27 is
// 4 billion edges: minutes of text). Little-endian, laid out as
//
//   offset  bytes        field
//   0       8            magic "AGIOCSR" and a zero byte
//   8       4            version: 1
//   12      4            flags: bit 0 set when edge weights follow the columns
//   16      8            vertices n (below 2^32)
//   24      8            edges m
//   32      8 (n + 1)    row offsets, uint64: row[0] = 0, non-decreasing, row[n] = m
//   ...     4 m          column (target vertex) of each edge, uint32, below n
//   ...     4 m          weights, float32, when flag bit 0 is set
//
// Reading checks every field and names the file and what is wrong.
#include <string>

#include "graph/csr.hpp"

namespace agio::bench::graph {

void write_csr_file(const std::string& path, const csr& g);
csr read_csr_file(const std::string& path);

// Whether the file starts with the binary CSR magic.
bool is_csr_file(const std::string& path);

}  // namespace agio::bench::graph
