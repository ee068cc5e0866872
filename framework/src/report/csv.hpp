#pragma once
// Writing CSV files fast (kernel-internal): shortest round-trip numbers, quoting only where needed.
#include <charconv>
#include <cstdint>
#include <string>
#include <string_view>

namespace monet::detail {

class CsvWriter {
 public:
  explicit CsvWriter(std::string header) : out_(std::move(header)) { out_ += '\n'; }

  CsvWriter& text(std::string_view s) {
    sep();
    if (s.find_first_of(",\"\n") == std::string_view::npos) {
      out_ += s;
      return *this;
    }
    out_ += '"';
    for (char c : s) {
      if (c == '"') out_ += '"';
      out_ += c;
    }
    out_ += '"';
    return *this;
  }
  CsvWriter& integer(std::int64_t v) { return put(v); }
  CsvWriter& number(double v) { return put(v); }  // the shortest text that reads back as the same double
  CsvWriter& end_row() {
    out_ += '\n';
    first_ = true;
    return *this;
  }
  [[nodiscard]] std::string take() { return std::move(out_); }

 private:
  template <class T>
  CsvWriter& put(T v) {
    sep();
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    out_.append(buf, r.ptr);
    return *this;
  }
  void sep() {
    if (!first_) out_ += ',';
    first_ = false;
  }
  std::string out_;
  bool first_ = true;
};

}  // namespace monet::detail
