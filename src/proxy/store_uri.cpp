// Store URIs: `ram:SIZE[?params]` and `file:PATH[?params]`, parameters joined by '&'.
// Everything is checked before a byte is allocated or a file is created, so a typo never
// leaves a half-made store (or a stray file) behind.
#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "proxy/store_impl.hpp"

namespace agio {
using proxy::in_quotes;
using proxy::make_file_store;
using proxy::make_ram_store;

namespace {

[[noreturn]] void bad_uri(std::string_view uri, const std::string& why) {
  throw std::invalid_argument("open_store(\"" + std::string(uri) + "\"): " + why);
}

struct named_profile {
  std::string_view name;
  ssd_profile profile;
};

// agile-ssd: a PCIe Gen3 x4 NVMe SSD of the kind GPU-direct storage work benchmarks against.
// 3.7 GB/s read and 2.2 GB/s write are its sequential limits; 80 us read latency is a NAND
// page read plus transfer, while 20 us write latency is lower because writes land in the
// drive's DRAM cache and are acknowledged before reaching flash.
constexpr std::array<named_profile, 1> named_profiles{{
    {"agile-ssd", {.read_latency_us = 80, .write_latency_us = 20, .read_gbps = 3.7, .write_gbps = 2.2}},
}};

struct param {
  std::string_view key;
  std::string_view value;
};

std::vector<param> split_query(std::string_view uri, std::string_view query) {
  std::vector<param> params;
  for (std::size_t begin = 0; begin <= query.size();) {
    const std::size_t end = std::min(query.find('&', begin), query.size());
    const std::string_view item = query.substr(begin, end - begin);
    const std::size_t eq = item.find('=');
    if (item.empty()) bad_uri(uri, "empty parameter");
    if (eq == std::string_view::npos || eq == 0) bad_uri(uri, "parameter " + in_quotes(item) + " is not key=value");
    for (const param& seen : params) {
      if (seen.key == item.substr(0, eq) && seen.key != "fault") {
        bad_uri(uri, "parameter " + in_quotes(seen.key) + " given twice");
      }
    }
    params.push_back({item.substr(0, eq), item.substr(eq + 1)});
    begin = end + 1;
  }
  return params;
}

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

double parse_rate(std::string_view uri, const param& p) {
  const std::optional<double> value = parse_number<double>(p.value);
  if (!value || !std::isfinite(*value) || *value < 0) {
    bad_uri(uri,
            "bad number " + in_quotes(p.value) + " for " + std::string(p.key) + " (expected a non-negative number)");
  }
  return *value;
}

std::uint32_t parse_lba(std::string_view uri, const param& p) {
  const std::optional<std::uint32_t> value = parse_number<std::uint32_t>(p.value);
  if (!value || (*value != 512 && *value != 4096)) {
    bad_uri(uri, "bad lba " + in_quotes(p.value) + " (expected 512 or 4096)");
  }
  return *value;
}

struct fault_name {
  std::string_view name;
  fault_injection::kind what;
  bool random;  // takes P:SEED rather than an LBA
};

constexpr std::array<fault_name, 7> fault_names{{
    {"eio", fault_injection::kind::eio, false},
    {"short", fault_injection::kind::short_transfer, false},
    {"hang", fault_injection::kind::hang, false},
    {"crash", fault_injection::kind::crash, false},
    {"random", fault_injection::kind::random, true},
    {"random_read", fault_injection::kind::random_read, true},
    {"random_write", fault_injection::kind::random_write, true},
}};

// P:SEED, with 0 <= P <= 1.
bool parse_random(std::string_view text, fault_injection& fault) {
  const std::size_t colon = text.find(':');
  if (colon == std::string_view::npos) return false;
  const std::optional<double> probability = parse_number<double>(text.substr(0, colon));
  const std::optional<std::uint64_t> seed = parse_number<std::uint64_t>(text.substr(colon + 1));
  if (!probability || !seed || !(*probability >= 0 && *probability <= 1)) return false;
  fault.probability = *probability;
  fault.seed = *seed;
  return true;
}

fault_injection parse_fault(std::string_view uri, const param& p) {
  const std::size_t at = p.value.find('@');
  const std::string_view what = p.value.substr(0, at);
  const std::string_view argument = at == std::string_view::npos ? std::string_view{} : p.value.substr(at + 1);
  for (const fault_name& candidate : fault_names) {
    if (candidate.name != what || at == std::string_view::npos) continue;
    fault_injection fault;
    fault.what = candidate.what;
    if (candidate.random) {
      if (!parse_random(argument, fault)) {
        bad_uri(uri, "bad fault " + in_quotes(p.value) + " (expected " + std::string(what) +
                         "@P:SEED, P from 0 to 1, SEED an unsigned integer)");
      }
      return fault;
    }
    const std::optional<std::uint64_t> lba = parse_number<std::uint64_t>(argument);
    if (!lba) bad_uri(uri, "bad fault " + in_quotes(p.value) + " (expected " + std::string(what) + "@LBA)");
    fault.lba = *lba;
    return fault;
  }
  bad_uri(uri, "bad fault " + in_quotes(p.value) +
                   " (expected eio@LBA, short@LBA, hang@LBA, crash@LBA, random@P:SEED, random_read@P:SEED or "
                   "random_write@P:SEED)");
}

bool is_block_fault(const fault_injection& fault) {
  using kind = fault_injection::kind;
  return fault.what == kind::eio || fault.what == kind::short_transfer || fault.what == kind::hang ||
         fault.what == kind::crash;
}

// splitmix64's finalizer: every input bit reaches every output bit, so consecutive offsets
// and sequence numbers give unrelated draws.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// A number in [0, 1) from the fault's seed, the I/O's offset and its place in the sequence.
double draw(const fault_injection& fault, std::uint64_t offset, std::uint64_t sequence) {
  return static_cast<double>(mix(fault.seed ^ mix(offset ^ mix(sequence))) >> 11) * 0x1.0p-53;
}

bool random_applies(const fault_injection& fault, store_op op) {
  using kind = fault_injection::kind;
  if (fault.what == kind::random) return true;
  if (fault.what == kind::random_read) return op == store_op::read;
  return fault.what == kind::random_write && op == store_op::write;
}

ssd_profile find_profile(std::string_view uri, std::string_view name) {
  std::string known;
  for (const named_profile& candidate : named_profiles) {
    if (candidate.name == name) return candidate.profile;
    known += (known.empty() ? "" : ", ") + std::string(candidate.name);
  }
  bad_uri(uri, "unknown profile " + in_quotes(name) + " (known: " + known + ")");
}

bool is_ram_only(std::string_view key) {
  return key == "read_us" || key == "write_us" || key == "read_gbps" || key == "write_gbps" || key == "iops" ||
         key == "profile";
}

void apply_param(store_spec& spec, const param& p) {
  const std::string_view uri = spec.options.uri;
  const bool ram = spec.what == store_spec::kind::ram;
  if (is_ram_only(p.key) && !ram) bad_uri(uri, "parameter " + in_quotes(p.key) + " applies to ram: stores only");
  if (p.key == "create" && ram) bad_uri(uri, "parameter \"create\" applies to file: stores only");
  ssd_profile& profile = spec.options.profile;
  if (p.key == "lba") {
    spec.options.lba_bytes = parse_lba(uri, p);
  } else if (p.key == "create") {
    spec.options.create_bytes = parse_size(p.value);
    if (!spec.options.create_bytes) bad_uri(uri, "bad size " + in_quotes(p.value) + " for create");
  } else if (p.key == "read_us") {
    profile.read_latency_us = parse_rate(uri, p);
  } else if (p.key == "write_us") {
    profile.write_latency_us = parse_rate(uri, p);
  } else if (p.key == "read_gbps") {
    profile.read_gbps = parse_rate(uri, p);
  } else if (p.key == "write_gbps") {
    profile.write_gbps = parse_rate(uri, p);
  } else if (p.key == "iops") {
    profile.max_iops = parse_rate(uri, p);
  } else if (p.key == "fault") {
    spec.options.faults.push_back(parse_fault(uri, p));
  } else if (p.key != "profile") {
    bad_uri(uri, "unknown parameter " + in_quotes(p.key));
  }
}

// A named profile goes first wherever it appears, so that explicit caps refine it.
void apply_params(store_spec& spec, const std::vector<param>& params) {
  for (const param& p : params) {
    if (p.key == "profile" && spec.what == store_spec::kind::ram) {
      spec.options.profile = find_profile(spec.options.uri, p.value);
    }
  }
  for (const param& p : params) apply_param(spec, p);
}

void check_size(std::string_view uri, std::string_view what, std::uint64_t bytes, std::uint32_t lba_bytes) {
  if (bytes == 0) bad_uri(uri, std::string(what) + " must not be zero");
  if (bytes % lba_bytes != 0) {
    bad_uri(uri, std::string(what) + " " + std::to_string(bytes) + " is not a multiple of the " +
                     std::to_string(lba_bytes) + "-byte LBA");
  }
}

}  // namespace

std::optional<std::uint64_t> parse_size(std::string_view text) {
  const std::size_t digits = std::min(text.find_first_not_of("0123456789"), text.size());
  const std::optional<std::uint64_t> count = parse_number<std::uint64_t>(text.substr(0, digits));
  std::string_view suffix = text.substr(digits);
  if (!count) return std::nullopt;
  unsigned shift = 0;
  constexpr std::string_view prefixes = "KMGT";
  if (!suffix.empty()) {
    const char letter = static_cast<char>(std::toupper(static_cast<unsigned char>(suffix.front())));
    if (const std::size_t index = prefixes.find(letter); index != std::string_view::npos) {
      shift = 10 * static_cast<unsigned>(index + 1);
      suffix.remove_prefix(1);
      if (suffix == "iB") suffix = {};
    }
  }
  if (suffix == "B") suffix = {};
  if (!suffix.empty() || *count > (std::numeric_limits<std::uint64_t>::max() >> shift)) return std::nullopt;
  return *count << shift;
}

store_spec parse_store_uri(std::string_view uri) {
  store_spec spec;
  spec.options.uri = std::string(uri);
  const std::size_t colon = uri.find(':');
  if (colon == std::string_view::npos) bad_uri(uri, "expected ram:SIZE or file:PATH");
  const std::string_view scheme = uri.substr(0, colon);
  if (scheme != "ram" && scheme != "file")
    bad_uri(uri, "unknown scheme " + in_quotes(scheme) + " (expected ram or file)");
  spec.what = scheme == "ram" ? store_spec::kind::ram : store_spec::kind::file;

  const std::string_view rest = uri.substr(colon + 1);
  const std::size_t question = rest.find('?');
  const std::string_view body = rest.substr(0, question);
  if (question != std::string_view::npos) apply_params(spec, split_query(uri, rest.substr(question + 1)));

  const std::uint32_t lba_bytes = spec.options.lba_bytes;
  if (spec.options.create_bytes) check_size(uri, "create size", *spec.options.create_bytes, lba_bytes);
  if (spec.what == store_spec::kind::file) {
    if (body.empty()) bad_uri(uri, "empty path");
    spec.path = std::string(body);
    return spec;
  }
  const std::optional<std::uint64_t> bytes = parse_size(body);
  if (!bytes) bad_uri(uri, "bad size " + in_quotes(body) + " (expected bytes or a K, M, G, T suffix)");
  check_size(uri, "size", *bytes, lba_bytes);
  spec.ram_bytes = *bytes;
  return spec;
}

void proxy::check_fault_in_range(const store_options& options, std::uint64_t capacity_bytes) {
  const std::uint64_t blocks = capacity_bytes / options.lba_bytes;
  for (const fault_injection& fault : options.faults) {
    if (is_block_fault(fault) && fault.lba >= blocks) {
      bad_uri(options.uri,
              "fault LBA " + std::to_string(fault.lba) + " is past the store's " + std::to_string(blocks) + " blocks");
    }
  }
}

proxy::fault_plan::fault_plan(const store_options& options)
    : uri_(options.uri), lba_bytes_(options.lba_bytes), faults_(options.faults) {
  for (const fault_injection& fault : faults_) random_ |= !is_block_fault(fault);
}

bool proxy::fault_plan::touches(const store_io& io, std::uint64_t lba) const {
  const std::uint64_t first = io.offset / lba_bytes_;
  return lba >= first && lba < first + io.length / lba_bytes_;
}

bool proxy::fault_plan::hangs(const store_io& io) const {
  if (io.op == store_op::flush) return false;
  return std::any_of(faults_.begin(), faults_.end(), [&](const fault_injection& fault) {
    return fault.what == fault_injection::kind::hang && touches(io, fault.lba);
  });
}

std::int64_t proxy::fault_plan::bytes_to_move(const store_io& io) {
  if (faults_.empty() || io.op == store_op::flush) return io.length;
  const std::uint64_t sequence = random_ ? sequence_.fetch_add(1, std::memory_order_relaxed) : 0;
  const std::uint64_t first = io.offset / lba_bytes_;
  std::int64_t bytes = io.length;
  bool failed = false;
  for (const fault_injection& fault : faults_) {
    if (!is_block_fault(fault)) {
      failed |= random_applies(fault, io.op) && draw(fault, io.offset, sequence) < fault.probability;
      continue;
    }
    if (!touches(io, fault.lba)) continue;
    switch (fault.what) {
      case fault_injection::kind::crash:
        throw std::runtime_error(uri_ + ": injected crash at LBA " + std::to_string(fault.lba));
      case fault_injection::kind::eio: failed = true; break;
      case fault_injection::kind::short_transfer:
        bytes = std::min(bytes, static_cast<std::int64_t>((fault.lba - first) * lba_bytes_));
        break;
      default: break;  // hang: the channel holds the I/O; hangs() decides that
    }
  }
  return failed ? -EIO : bytes;
}

std::unique_ptr<store> open_store(std::string_view uri, const host_memory& memory) {
  store_spec spec = parse_store_uri(uri);
  if (spec.what == store_spec::kind::ram) return make_ram_store(spec.ram_bytes, std::move(spec.options), memory);
  return make_file_store(spec.path, std::move(spec.options));
}

}  // namespace agio
