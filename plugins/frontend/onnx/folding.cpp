// Nodes that compute on constants only are evaluated at import: shape subgraphs, masks, position ids.
#include "conversion.hpp"

#include <algorithm>
#include <cmath>

#include "monet/ir/ops.hpp"
#include "op_table.hpp"

namespace monet::onnx_frontend {

bool Converter::fold(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  if (!kViewOps.contains(op) && !kPointwiseOps.contains(op)) return false;
  const std::string& out = n.output(0);
  auto dtype_of = [&]() { return value(in[0]).dtype; };
  if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Identity" ||
      op == "Expand" || op == "Transpose" || op == "Slice" || op == "Concat" || op == "Gather" || op == "Split") {
    const auto shapes = view_shapes(i, in);
    std::optional<std::vector<double>> data;
    const auto& x = value(in[0]).data;
    if (op == "Unsqueeze" || op == "Squeeze" || op == "Reshape" || op == "Flatten" || op == "Identity") {
      data = x;
    } else if (op == "Concat" && value(in[0]).shape.size() == 1) {
      std::vector<double> all;
      bool known = true;
      for (int v : in) {
        if (!value(v).data) known = false;
        else all.insert(all.end(), value(v).data->begin(), value(v).data->end());
      }
      if (known) data = all;
    } else if (op == "Gather" && x && in.size() == 2 && value(in[1]).data && value(in[0]).shape.size() == 1) {
      std::vector<double> g;
      for (double k : *value(in[1]).data) {
        auto idx = static_cast<std::int64_t>(k);
        if (idx < 0) idx += static_cast<std::int64_t>(x->size());
        g.push_back((*x)[static_cast<std::size_t>(idx)]);
      }
      data = g;
    } else if (op == "Slice" && x && value(in[0]).shape.size() == 1) {
      const auto starts = const_ints(i, in[1], "starts");
      const auto ends = const_ints(i, in[2], "ends");
      const std::int64_t dim = static_cast<std::int64_t>(x->size());
      std::int64_t s = starts[0] < 0 ? starts[0] + dim : std::min(starts[0], dim);
      std::int64_t e = ends[0] < 0 ? ends[0] + dim : std::min(ends[0], dim);
      data = std::vector<double>(x->begin() + std::max<std::int64_t>(s, 0), x->begin() + std::max(e, s));
    }
    for (std::size_t k = 0; k < shapes.size(); ++k) {
      define(i, n.output(static_cast<int>(k)), shapes[k], dtype_of(), ValueKind::constant,
             shapes.size() == 1 ? data : std::nullopt);
    }
    return true;
  }
  // Pointwise arithmetic on constants (broadcast).
  std::vector<Shape> shapes;
  for (int v : in) {
    if (v >= 0) shapes.push_back(value(v).shape);
  }
  const Shape shape = ops::broadcast_shapes(shapes, SourceLocation{file_}, node_name(i));
  ElementType dtype = kBooleanOps.contains(op) ? ElementType::boolean : dtype_of();
  if (op == "Cast") dtype = element_type_of(static_cast<int>(attr_int(n, "to").value_or(1))).value_or(dtype);
  std::optional<std::vector<double>> data;
  const std::size_t count = static_cast<std::size_t>(element_count(shape));
  bool known = count <= (1u << 16);
  for (int v : in) {
    if (v >= 0 && !value(v).data) known = false;
  }
  if (known) {
    std::vector<double> r(count);
    auto at = [&](int v, std::size_t flat) {
      // Broadcast read of value v at the flat index of the output.
      const Shape& s = value(v).shape;
      std::size_t idx = 0;
      std::size_t stride = 1;
      std::size_t rem = flat;
      std::vector<std::size_t> coord(shape.size());
      for (std::size_t a = shape.size(); a-- > 0;) {
        coord[a] = rem % static_cast<std::size_t>(shape[a]);
        rem /= static_cast<std::size_t>(shape[a]);
      }
      for (std::size_t a = s.size(); a-- > 0;) {
        const std::size_t oa = shape.size() - s.size() + a;
        const std::size_t c = s[a] == 1 ? 0 : coord[oa];
        idx += c * stride;
        stride *= static_cast<std::size_t>(s[a]);
      }
      return (*value(v).data)[idx];
    };
    for (std::size_t k = 0; k < count; ++k) {
      const double a = at(in[0], k);
      const double b = in.size() > 1 && in[1] >= 0 ? at(in[1], k) : 0;
      double res = a;
      if (op == "Add") res = a + b;
      else if (op == "Sub") res = a - b;
      else if (op == "Mul") res = a * b;
      else if (op == "Div") res = (dtype == ElementType::int64 || dtype == ElementType::int32) ? std::trunc(a / b) : a / b;
      else if (op == "Equal") res = a == b;
      else if (op == "Less") res = a < b;
      else if (op == "Greater") res = a > b;
      else if (op == "Not") res = a == 0;
      else if (op == "Neg") res = -a;
      else if (op == "Sqrt") res = std::sqrt(a);
      else if (op == "Pow") res = std::pow(a, b);
      else if (op == "Where") res = a != 0 ? b : at(in[2], k);
      else if (op == "Cast") res = dtype == ElementType::boolean ? (a != 0) : a;
      else if (op == "Max") res = std::max(a, b);
      else if (op == "Min") res = std::min(a, b);
      else if (op == "Identity") res = a;
      else known = false;
      r[k] = res;
    }
    if (known) data = std::move(r);
  }
  define(i, n.output(0), shape, dtype, ValueKind::constant, data);
  (void)out;
  return true;
}

void Converter::fold_constant_op(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  const std::string& out = n.output(0);
  if (op == "Constant") {
    if (const auto* a = attr(n, "value"); a && a->has_t()) {
      const auto& t = a->t();
      auto dt = element_type_of(t.data_type());
      if (!dt) fail(i, "unsupported element type");
      define(i, out, Shape(t.dims().begin(), t.dims().end()), *dt, ValueKind::constant, tensor_data(t));
    } else if (auto f = attr_float(n, "value_float")) {
      define(i, out, {}, ElementType::fp32, ValueKind::constant, std::vector<double>{*f});
    } else if (auto k = attr_int(n, "value_int")) {
      define(i, out, {}, ElementType::int64, ValueKind::constant, std::vector<double>{static_cast<double>(*k)});
    } else if (auto ks = attr_ints(n, "value_ints")) {
      define(i, out, {static_cast<std::int64_t>(ks->size())}, ElementType::int64, ValueKind::constant,
             std::vector<double>(ks->begin(), ks->end()));
    } else {
      fail(i, "Constant without a supported value attribute");
    }
  } else if (op == "Shape") {
    const Shape& s = value(in[0]).shape;
    std::int64_t start = normalize_axis(attr_int(n, "start").value_or(0), s.size());
    std::int64_t end = attr_int(n, "end") ? normalize_axis(*attr_int(n, "end"), s.size())
                                          : static_cast<std::int64_t>(s.size());
    start = std::clamp<std::int64_t>(start, 0, static_cast<std::int64_t>(s.size()));
    end = std::clamp<std::int64_t>(end, start, static_cast<std::int64_t>(s.size()));
    std::vector<double> d(s.begin() + start, s.begin() + end);
    define(i, out, {static_cast<std::int64_t>(d.size())}, ElementType::int64, ValueKind::constant, d);
  } else if (op == "Size") {
    define(i, out, {}, ElementType::int64, ValueKind::constant,
           std::vector<double>{static_cast<double>(element_count(value(in[0]).shape))});
  } else if (op == "ConstantOfShape") {
    const auto dims = const_ints(i, in[0], "shape");
    double fill = 0;
    ElementType dt = ElementType::fp32;
    if (const auto* a = attr(n, "value"); a && a->has_t()) {
      dt = element_type_of(a->t().data_type()).value_or(dt);
      if (auto d = tensor_data(a->t(), 1); d && !d->empty()) fill = (*d)[0];
    }
    const Shape s(dims.begin(), dims.end());
    std::optional<std::vector<double>> data;
    if (element_count(s) <= (1 << 16)) data = std::vector<double>(static_cast<std::size_t>(element_count(s)), fill);
    define(i, out, s, dt, ValueKind::constant, data);
  } else if (op == "Range") {
    const double start = const_data(i, in[0], "start")[0];
    const double limit = const_data(i, in[1], "limit")[0];
    const double delta = const_data(i, in[2], "delta")[0];
    const auto count = static_cast<std::int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    std::vector<double> d(static_cast<std::size_t>(count));
    for (std::int64_t k = 0; k < count; ++k) d[static_cast<std::size_t>(k)] = start + static_cast<double>(k) * delta;
    define(i, out, {count}, value(in[0]).dtype, ValueKind::constant, d);
  } else if (op == "Trilu") {
    const Value& x = value(in[0]);
    if (x.kind != ValueKind::constant) unknown(i);
    std::optional<std::vector<double>> data;
    if (x.data && x.shape.size() >= 2) {
      const bool upper = attr_int(n, "upper").value_or(1) != 0;
      const std::int64_t k = in.size() > 1 && in[1] >= 0 ? const_ints(i, in[1], "k")[0] : 0;
      const std::int64_t rows = x.shape[x.shape.size() - 2];
      const std::int64_t cols = x.shape.back();
      std::vector<double> d = *x.data;
      for (std::size_t idx = 0; idx < d.size(); ++idx) {
        const std::int64_t c = static_cast<std::int64_t>(idx) % cols;
        const std::int64_t r = (static_cast<std::int64_t>(idx) / cols) % rows;
        const bool keep = upper ? c - r >= k : c - r <= k;
        if (!keep) d[idx] = 0;
      }
      data = d;
    }
    define(i, out, x.shape, x.dtype, ValueKind::constant, data);
  }
}

}  // namespace monet::onnx_frontend
