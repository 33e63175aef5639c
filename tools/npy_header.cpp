#include "npy_header.hpp"

#include <cctype>
#include <cstdio>
#include <stdexcept>

namespace agio::tools {
namespace {

constexpr std::string_view magic{"\x93NUMPY", 6};

// Bytes as Python writes a bytes literal, so that the message shows what is there.
std::string shown(std::string_view bytes) {
  std::string out = "b'";
  for (const char c : bytes.substr(0, 16)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '\'' && c != '\\') {
      out += c;
    } else {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", u);
      out += hex;
    }
  }
  return out + "'";
}

std::uint64_t little_endian(std::string_view bytes) {
  std::uint64_t v = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) v = v << 8 | static_cast<unsigned char>(bytes[i]);
  return v;
}

// The bytes of the magic, version and length fields: 10 for format 1.0, 12 for 2.0.
std::uint64_t prefix_bytes(int major) { return major == 1 ? 10 : 12; }

class dict_reader {
 public:
  dict_reader(std::string_view dict, const std::string& where) : dict_(dict), where_(where) {}

  // Where the value of 'key' starts.
  std::size_t value_of(const std::string& key) const {
    const std::size_t at = dict_.find("'" + key + "'");
    if (at == std::string_view::npos) fail("it has no '" + key + "'");
    std::size_t i = skip_spaces(at + key.size() + 2);
    if (i >= dict_.size() || dict_[i] != ':') fail("no ':' after '" + key + "'");
    return skip_spaces(i + 1);
  }
  std::string quoted(std::size_t i, const std::string& key) const {
    if (i < dict_.size() && dict_[i] == '[') {
      throw std::invalid_argument(where_ + " holds an array of structured records (descr " +
                                  std::string(dict_.substr(i, 40)) +
                                  "...); the tool stages numbers and strings: stage records with Python's "
                                  "agio.stage, or as bytes with --file");
    }
    if (i >= dict_.size() || (dict_[i] != '\'' && dict_[i] != '"')) fail("'" + key + "' is not a quoted string");
    const std::size_t end = dict_.find(dict_[i], i + 1);
    if (end == std::string_view::npos) fail("'" + key + "' has no closing quote");
    return std::string(dict_.substr(i + 1, end - i - 1));
  }
  bool boolean(std::size_t i, const std::string& key) const {
    if (dict_.substr(i, 4) == "True") return true;
    if (dict_.substr(i, 5) == "False") return false;
    fail("'" + key + "' is neither True nor False");
  }
  std::vector<std::uint64_t> tuple(std::size_t i, const std::string& key) const {
    if (i >= dict_.size() || dict_[i] != '(') fail("'" + key + "' is not a tuple");
    const std::size_t end = dict_.find(')', i);
    if (end == std::string_view::npos) fail("'" + key + "' has no ')'");
    std::vector<std::uint64_t> values;
    std::size_t at = i + 1;
    while ((at = skip_spaces(at)) < end) {
      if (!std::isdigit(static_cast<unsigned char>(dict_[at]))) fail("'" + key + "' holds something not a count");
      std::uint64_t v = 0;
      for (; at < end && std::isdigit(static_cast<unsigned char>(dict_[at])); ++at) {
        if (v > (UINT64_MAX - 9) / 10) fail("'" + key + "' holds a count too large");
        v = v * 10 + static_cast<std::uint64_t>(dict_[at] - '0');
      }
      values.push_back(v);
      if (at < end && dict_[at] == 'L') ++at;  // Python 2's long integers
      at = skip_spaces(at);
      if (at < end && dict_[at] != ',') fail("'" + key + "' is not a tuple of counts");
      ++at;
    }
    return values;
  }
  [[noreturn]] void fail(const std::string& why) const {
    throw std::invalid_argument(where_ + ": the .npy header does not parse: " + why + " in " + std::string(dict_));
  }

 private:
  std::size_t skip_spaces(std::size_t i) const {
    while (i < dict_.size() && dict_[i] == ' ') ++i;
    return i;
  }
  std::string_view dict_;
  const std::string& where_;
};

// The size of one element of a simple dtype such as "<f4", "|S10", "<U3" (4 bytes a
// character) or "<M8[ns]".
std::uint64_t item_bytes_of(const std::string& descr, const dict_reader& dict, const std::string& where) {
  std::size_t i = descr.find_first_of("<>|=") == 0 ? 1 : 0;
  if (i >= descr.size() || !std::isalpha(static_cast<unsigned char>(descr[i]))) dict.fail("descr " + descr);
  const char kind = descr[i++];
  if (kind == 'O') {
    throw std::invalid_argument(where + " holds Python objects (descr " + descr +
                                "): pointers, not data; the tool stages numbers and strings");
  }
  const std::size_t digits = i;
  std::uint64_t count = 0;
  for (; i < descr.size() && std::isdigit(static_cast<unsigned char>(descr[i])); ++i)
    count = count * 10 + static_cast<std::uint64_t>(descr[i] - '0');
  const bool unit = (kind == 'M' || kind == 'm') && i < descr.size() && descr[i] == '[' && descr.back() == ']';
  if (i == digits || (i != descr.size() && !unit) || i - digits > 9) dict.fail("descr " + descr);
  return kind == 'U' ? 4 * count : count;
}

}  // namespace

std::uint64_t npy_header::data_bytes() const {
  std::uint64_t n = item_bytes;
  for (const std::uint64_t d : shape) n *= d;
  return n;
}

std::string npy_header::shape_text() const {
  std::string s = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

std::uint64_t npy_header_length(std::string_view first, const std::string& where) {
  if (first.substr(0, magic.size()) != magic || first.size() < 10) {
    throw std::invalid_argument(where + " holds no staged array or .npy file: it starts with " + shown(first) +
                                ", not " + shown(magic));
  }
  const int major = static_cast<unsigned char>(first[6]);
  const int minor = static_cast<unsigned char>(first[7]);
  if ((major != 1 && major != 2) || minor != 0) {
    throw std::invalid_argument(where + " is a .npy header of format " + std::to_string(major) + "." +
                                std::to_string(minor) + "; the tool reads 1.0 and 2.0");
  }
  const std::uint64_t prefix = prefix_bytes(major);
  if (first.size() < prefix) throw std::invalid_argument(where + ": the .npy header is cut short");
  return prefix + little_endian(first.substr(8, prefix - 8));
}

npy_header parse_npy_header(std::string_view bytes, const std::string& where) {
  npy_header h;
  h.header_bytes = npy_header_length(bytes, where);
  if (bytes.size() < h.header_bytes) {
    throw std::invalid_argument(where + ": the .npy header is " + std::to_string(h.header_bytes) +
                                " bytes long, but only " + std::to_string(bytes.size()) + " are there");
  }
  std::string_view text = bytes.substr(prefix_bytes(bytes[6]), h.header_bytes - prefix_bytes(bytes[6]));
  while (!text.empty() && (text.back() == ' ' || text.back() == '\n')) text.remove_suffix(1);
  h.dict = std::string(text);
  const dict_reader dict(h.dict, where);
  if (h.dict.empty() || h.dict.front() != '{' || h.dict.back() != '}') dict.fail("it is not a dict");
  h.descr = dict.quoted(dict.value_of("descr"), "descr");
  h.item_bytes = item_bytes_of(h.descr, dict, where);
  if (dict.boolean(dict.value_of("fortran_order"), "fortran_order")) {
    throw std::invalid_argument(where +
                                " holds an array in Fortran order; agio reads rows in C order: save it with "
                                "numpy.save(path, numpy.ascontiguousarray(a))");
  }
  h.shape = dict.tuple(dict.value_of("shape"), "shape");
  std::uint64_t n = h.item_bytes;
  for (const std::uint64_t d : h.shape) {
    if (d != 0 && n > UINT64_MAX / d) dict.fail("the array's size overflows");
    n *= d;
  }
  return h;
}

std::string padded_npy_header(const npy_header& h, std::uint64_t align) {
  for (const int major : {1, 2}) {
    const std::uint64_t prefix = prefix_bytes(major);
    const std::uint64_t total = (prefix + h.dict.size() + 1 + align - 1) / align * align;
    const std::uint64_t text = total - prefix;
    if (major == 1 && text > 0xFFFF) continue;
    std::string out(magic);
    out += static_cast<char>(major);
    out += '\0';
    for (std::uint64_t i = 0; i < prefix - 8; ++i) out += static_cast<char>(text >> (8 * i) & 0xFF);
    out += h.dict;
    out.append(text - h.dict.size() - 1, ' ');
    return out + '\n';
  }
  throw std::invalid_argument("the .npy header of " + h.descr + " " + h.shape_text() + " is too long");
}

}  // namespace agio::tools
