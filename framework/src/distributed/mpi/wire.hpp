#pragma once
// The bytes of the messages between ranks: integers, doubles (their exact bits: results must be identical on
// every rank count), strings, design points and evaluations. All ranks run the same monet on the same
// architecture kind, so native byte order is fine.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "monet/search/space.hpp"
#include "monet/util/error.hpp"

namespace monet::detail {

class WireWriter {
 public:
  template <class T>
  void put(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  void put(const std::string& s) {
    put<std::uint64_t>(s.size());
    bytes_ += s;
  }
  void put(const DesignPoint& p) {
    put<std::uint64_t>(p.genes.size());
    bytes_.append(reinterpret_cast<const char*>(p.genes.data()), p.genes.size() * sizeof(std::int32_t));
  }
  void put(const Evaluation& e) {
    put(e.point);
    put<std::uint64_t>(e.objectives.size());
    bytes_.append(reinterpret_cast<const char*>(e.objectives.data()), e.objectives.size() * sizeof(double));
    put(e.violation);
    put(e.reason);
    put<std::uint64_t>(e.quality.size());
    if (!e.quality.empty()) bytes_.append(reinterpret_cast<const char*>(e.quality.data()), e.quality.size() * sizeof(double));
  }
  [[nodiscard]] const std::string& bytes() const { return bytes_; }

 private:
  std::string bytes_;
};

class WireReader {
 public:
  explicit WireReader(const std::string& bytes) : bytes_(bytes) {}
  template <class T>
  T get() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof v), sizeof v);
    return v;
  }
  std::string get_string() {
    const auto n = get<std::uint64_t>();
    return std::string(take(n), n);
  }
  DesignPoint get_point() {
    DesignPoint p;
    p.genes.resize(get<std::uint64_t>());
    std::memcpy(p.genes.data(), take(p.genes.size() * sizeof(std::int32_t)), p.genes.size() * sizeof(std::int32_t));
    return p;
  }
  Evaluation get_evaluation() {
    Evaluation e;
    e.point = get_point();
    e.objectives.resize(get<std::uint64_t>());
    std::memcpy(e.objectives.data(), take(e.objectives.size() * sizeof(double)), e.objectives.size() * sizeof(double));
    e.violation = get<double>();
    e.reason = get_string();
    e.quality.resize(get<std::uint64_t>());
    if (!e.quality.empty()) std::memcpy(e.quality.data(), take(e.quality.size() * sizeof(double)), e.quality.size() * sizeof(double));
    return e;
  }

 private:
  const char* take(std::size_t n) {
    ensure(at_ + n <= bytes_.size(), "a message between ranks is shorter than its content");
    const char* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  const std::string& bytes_;
  std::size_t at_ = 0;
};

}  // namespace monet::detail
