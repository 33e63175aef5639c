#pragma once
// A minimal JSON writer for benchmark results: objects of numbers, strings and arrays. Every
// agio benchmark writes one document of this shape:
//   {"benchmark": NAME, "device": ..., "date": ..., "command": ..., "commit": ..., "driver": ...,
//    "config": {...}, "points": [...]}
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "harness/run_info.hpp"

namespace agio::bench {

class json_object {
 public:
  using value = std::variant<double, std::int64_t, std::string, bool>;
  json_object& set(const std::string& key, value v) {
    fields_.emplace_back(key, std::move(v));
    return *this;
  }
  std::string str() const {
    std::ostringstream out;
    out << '{';
    for (std::size_t i = 0; i < fields_.size(); ++i) {
      if (i) out << ", ";
      out << quote(fields_[i].first) << ": ";
      std::visit([&out](const auto& v) { write(out, v); }, fields_[i].second);
    }
    out << '}';
    return out.str();
  }
  static std::string quote(const std::string& s) {
    std::string q = "\"";
    for (char c : s) {
      if (c == '"' || c == '\\') q += '\\';
      if (c == '\n') {
        q += "\\n";
        continue;
      }
      q += c;
    }
    return q + "\"";
  }

 private:
  static void write(std::ostringstream& out, double v) { out << v; }
  static void write(std::ostringstream& out, std::int64_t v) { out << v; }
  static void write(std::ostringstream& out, bool v) { out << (v ? "true" : "false"); }
  static void write(std::ostringstream& out, const std::string& v) { out << quote(v); }
  std::vector<std::pair<std::string, value>> fields_;
};

// The document: header fields, a config object and the measured points.
struct result_document {
  json_object header;
  json_object config;
  std::vector<json_object> points;

  std::string str() const {
    std::string h = header.str();
    h.pop_back();
    std::string s = h + ", \"config\": " + config.str() + ", \"points\": [\n";
    for (std::size_t i = 0; i < points.size(); ++i)
      s += "  " + points[i].str() + (i + 1 < points.size() ? ",\n" : "\n");
    return s + "]}\n";
  }

  // Fills the header every benchmark writes: its name, the device, the date, the command, the
  // source commit and the GPU driver.
  void set_header(const std::string& benchmark, const std::string& device, int argc, char** argv) {
    std::time_t t = std::time(nullptr);
    char date[32];
    std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
    std::string command;
    for (int i = 0; i < argc; ++i) {
      if (i != 0) command += ' ';
      command += argv[i];
    }
    header.set("benchmark", benchmark).set("device", device).set("date", std::string(date)).set("command", command);
    header.set("commit", source_commit()).set("driver", driver_version());
  }

  // Writes the document to `path`, creating its folder.
  void save(const std::string& path) const {
    const std::filesystem::path out(path);
    if (out.has_parent_path()) std::filesystem::create_directories(out.parent_path());
    std::ofstream(out) << str();
  }
};

}  // namespace agio::bench
