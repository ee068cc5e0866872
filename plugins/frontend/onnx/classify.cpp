// Stored tensors: trainable parameters vs buffers, then the experiment's frozen / trainable globs.
#include "conversion.hpp"

#include <fnmatch.h>

#include "monet/util/strings.hpp"

namespace monet::onnx_frontend {

template <class F>
void Converter::apply_globs(const std::vector<std::string>& globs, const SourceLocation& where, const char* what,
                            F&& f) {
  for (const std::string& glob : globs) {
    std::size_t matched = 0;
    for (const Value& v : values_) {
      if (v.ir == kNone || (v.kind != ValueKind::initializer && v.kind != ValueKind::constant)) continue;
      if (fnmatch(glob.c_str(), v.name.c_str(), 0) == 0 && f(builder_.tensor(v.ir))) ++matched;
    }
    if (matched == 0) {
      std::vector<std::string> names;
      for (const Value& v : values_) {
        if (v.ir != kNone && v.kind == ValueKind::initializer) names.push_back(v.name);
      }
      throw UserError(where, std::string(what) + ": '" + glob + "' matches no stored tensor of " + file_ +
                                 did_you_mean(glob, names));
    }
  }
}

void Converter::classify() {
  std::set<TensorId> buffers;
  for (int v : bn_statistics_) buffers.insert(value(v).ir);
  for (int v : mask_values_) {
    // The mask and every stored tensor it is computed from (through views) are buffers.
    std::vector<std::string> stack{value(v).name};
    while (!stack.empty()) {
      const std::string name = stack.back();
      stack.pop_back();
      const int id = find(name);
      if (id >= 0 && value(id).ir != kNone) buffers.insert(value(id).ir);
      const int p = producer(name);
      if (p < 0) continue;
      for (const auto& input : g_.node(p).input()) {
        if (!input.empty()) stack.push_back(input);
      }
    }
  }
  for (const Value& v : values_) {
    if (v.ir == kNone || v.kind != ValueKind::initializer) continue;
    Tensor& t = builder_.tensor(v.ir);
    const bool integer = t.dtype == ElementType::int64 || t.dtype == ElementType::int32 ||
                         t.dtype == ElementType::int16 || t.dtype == ElementType::boolean;
    if (integer || buffers.contains(v.ir)) t.role = TensorRole::buffer;
  }
  for (TensorId id : buffers) {
    Tensor& t = builder_.tensor(id);
    if (t.role == TensorRole::weight) t.role = TensorRole::buffer;
  }
  apply_globs(options_.frozen, options_.frozen_where, "frozen", [](Tensor& t) {
    if (t.role != TensorRole::weight || t.producer != kNone) return false;
    t.frozen = true;
    return true;
  });
  apply_globs(options_.trainable, options_.trainable_where, "trainable", [](Tensor& t) {
    if (t.role != TensorRole::weight && t.role != TensorRole::buffer) return false;
    t.role = TensorRole::weight;
    t.frozen = false;
    return true;
  });
}

}  // namespace monet::onnx_frontend
