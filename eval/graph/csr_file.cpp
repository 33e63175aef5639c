#include "graph/csr_file.hpp"

#include <bit>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace agio::bench::graph {
namespace {

static_assert(std::endian::native == std::endian::little, "the CSR file is read and written as little-endian memory");

constexpr char magic[8] = {'A', 'G', 'I', 'O', 'C', 'S', 'R', '\0'};
constexpr std::uint32_t version = 1;
constexpr std::uint32_t weighted_flag = 1;

struct header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t flags;
  std::uint64_t vertices;
  std::uint64_t edges;
};
static_assert(sizeof(header) == 32);

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what);
}

template <class T>
void read_array(std::ifstream& in, const std::string& path, std::vector<T>& v, const char* what) {
  in.read(reinterpret_cast<char*>(v.data()), static_cast<std::streamsize>(v.size() * sizeof(T)));
  if (!in) fail(path, std::string("file ends inside the ") + what);
}

}  // namespace

void write_csr_file(const std::string& path, const csr& g) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) fail(path, "cannot open for writing");
  header h{};
  std::memcpy(h.magic, magic, sizeof magic);
  h.version = version;
  h.flags = g.val.empty() ? 0 : weighted_flag;
  h.vertices = g.n;
  h.edges = g.edges();
  out.write(reinterpret_cast<const char*>(&h), sizeof h);
  out.write(reinterpret_cast<const char*>(g.row.data()),
            static_cast<std::streamsize>(g.row.size() * sizeof(std::uint64_t)));
  out.write(reinterpret_cast<const char*>(g.col.data()),
            static_cast<std::streamsize>(g.col.size() * sizeof(std::uint32_t)));
  out.write(reinterpret_cast<const char*>(g.val.data()), static_cast<std::streamsize>(g.val.size() * sizeof(float)));
  if (!out.flush()) fail(path, "writing failed");
}

bool is_csr_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char start[sizeof magic] = {};
  return in.read(start, sizeof start) && std::memcmp(start, magic, sizeof magic) == 0;
}

csr read_csr_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(path, "cannot open");
  header h{};
  if (!in.read(reinterpret_cast<char*>(&h), sizeof h)) fail(path, "shorter than the 32-byte CSR header");
  if (std::memcmp(h.magic, magic, sizeof magic) != 0) fail(path, "not an agio CSR file (bad magic)");
  if (h.version != version)
    fail(path, "CSR file version " + std::to_string(h.version) + "; this build reads version 1");
  if ((h.flags & ~weighted_flag) != 0) fail(path, "unknown flags " + std::to_string(h.flags));
  if (h.vertices > 0xffffffffull) fail(path, std::to_string(h.vertices) + " vertices: ids must fit 32 bits");
  if (h.edges >= (std::uint64_t{1} << 56)) fail(path, std::to_string(h.edges) + " edges: not a plausible count");
  const bool weighted = (h.flags & weighted_flag) != 0;
  const std::uint64_t expected = sizeof h + (h.vertices + 1) * 8 + h.edges * (weighted ? 8 : 4);
  const std::uint64_t size = std::filesystem::file_size(path);
  if (size != expected) {
    fail(path, "is " + std::to_string(size) + " bytes; its header (" + std::to_string(h.vertices) + " vertices, " +
                   std::to_string(h.edges) + " edges" + (weighted ? ", weighted" : "") + ") says " +
                   std::to_string(expected));
  }
  csr g;
  g.n = static_cast<std::uint32_t>(h.vertices);
  g.row.resize(g.n + std::size_t{1});
  g.col.resize(h.edges);
  if (weighted) g.val.resize(h.edges);
  read_array(in, path, g.row, "row offsets");
  read_array(in, path, g.col, "columns");
  if (weighted) read_array(in, path, g.val, "weights");
  if (g.row[0] != 0 || g.row[g.n] != h.edges) fail(path, "row offsets must run from 0 to the edge count");
  for (std::uint32_t v = 0; v < g.n; ++v) {
    if (g.row[v + 1] < g.row[v]) fail(path, "row offsets decrease at vertex " + std::to_string(v));
  }
  for (std::uint64_t e = 0; e < h.edges; ++e) {
    if (g.col[e] >= g.n)
      fail(path, "edge " + std::to_string(e) + " goes to vertex " + std::to_string(g.col[e]) + ", past the last");
  }
  return g;
}

}  // namespace agio::bench::graph
