// Nodes that compute on constants only are evaluated at import: shape subgraphs, masks, position ids, pad
// amounts. Shapes always; values while they are small (at most 65,536 elements) and the op is one evaluated
// here; otherwise the result is a constant of known shape and unknown values.
#include "conversion.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "monet/ir/ops.hpp"

namespace monet::onnx_frontend {

namespace {

constexpr std::size_t kMaxFoldedElements = 1 << 16;

std::vector<std::int64_t> unravel(std::size_t flat, const Shape& shape) {
  std::vector<std::int64_t> c(shape.size());
  for (std::size_t a = shape.size(); a-- > 0;) {
    c[a] = static_cast<std::int64_t>(flat % static_cast<std::size_t>(shape[a]));
    flat /= static_cast<std::size_t>(shape[a]);
  }
  return c;
}

std::size_t ravel(const std::vector<std::int64_t>& c, const Shape& shape) {
  std::size_t flat = 0;
  for (std::size_t a = 0; a < shape.size(); ++a) flat = flat * static_cast<std::size_t>(shape[a]) + static_cast<std::size_t>(c[a]);
  return flat;
}

/// The values of a tensor of shape `out` whose element at coordinates c is source(c) (nullopt: unknown).
template <class F>
std::optional<std::vector<double>> remap(const Shape& out, F&& source) {
  const auto count = static_cast<std::size_t>(element_count(out));
  if (count > kMaxFoldedElements) return std::nullopt;
  std::vector<double> r(count);
  for (std::size_t k = 0; k < count; ++k) {
    const std::optional<double> v = source(unravel(k, out));
    if (!v) return std::nullopt;
    r[k] = *v;
  }
  return r;
}

std::int64_t wrap(std::int64_t i, std::int64_t n) { return i < 0 ? i + n : i; }

bool is_integer(ElementType t) {
  return t == ElementType::int64 || t == ElementType::int32 || t == ElementType::int16 || t == ElementType::int8 ||
         t == ElementType::uint8;
}

}  // namespace

bool Converter::fold(int i, const std::vector<int>& in) {
  const auto& n = g_.node(i);
  const std::string& op = n.op_type();
  const OpRule* rule = op_rule(op);
  // Reads an input's values (nullopt when unknown).
  auto data = [&](int k) -> const std::optional<std::vector<double>>& {
    static const std::optional<std::vector<double>> none;
    return k < static_cast<int>(in.size()) && in[static_cast<std::size_t>(k)] >= 0
               ? value(in[static_cast<std::size_t>(k)]).data : none;
  };
  const Value& x = value(in[0]);
  auto element = [&](const std::vector<std::int64_t>& c) -> std::optional<double> {
    if (!x.data) return std::nullopt;
    return (*x.data)[ravel(c, x.shape)];
  };
  switch (rule->treatment) {
    case Treatment::view: {
      const auto shapes = view_shapes(i, in);
      for (std::size_t k = 0; k < shapes.size(); ++k) {
        const Shape& out = shapes[k];
        std::optional<std::vector<double>> d;
        if (op == "Reshape" || op == "Flatten" || op == "Squeeze" || op == "Unsqueeze" || op == "Identity") {
          d = x.data;
        } else if (op == "Transpose") {
          std::vector<std::int64_t> perm = attr_ints(n, "perm").value_or(std::vector<std::int64_t>{});
          if (perm.empty()) {
            for (std::size_t a = out.size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
          }
          d = remap(out, [&](const std::vector<std::int64_t>& c) {
            std::vector<std::int64_t> src(c.size());
            for (std::size_t a = 0; a < c.size(); ++a) src[static_cast<std::size_t>(perm[a])] = c[a];
            return element(src);
          });
        } else if (op == "Slice") {
          const SliceParams sp = slice_params(i, in);
          d = remap(out, [&](const std::vector<std::int64_t>& c) {
            std::vector<std::int64_t> src(c.size());
            for (std::size_t a = 0; a < c.size(); ++a) src[a] = sp.start[a] + c[a] * sp.step[a];
            return element(src);
          });
        } else if (op == "Split") {
          const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), x.shape.size());
          std::int64_t offset = 0;
          for (std::size_t j = 0; j < k; ++j) offset += shapes[j][axis];
          d = remap(out, [&](std::vector<std::int64_t> c) {
            c[axis] += offset;
            return element(c);
          });
        } else if (op == "Expand") {
          d = remap(out, [&](const std::vector<std::int64_t>& c) {
            std::vector<std::int64_t> src(x.shape.size());
            for (std::size_t a = 0; a < src.size(); ++a) src[a] = x.shape[a] == 1 ? 0 : c[out.size() - src.size() + a];
            return element(src);
          });
        } else if (op == "Concat") {
          const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), x.shape.size());
          d = remap(out, [&](std::vector<std::int64_t> c) -> std::optional<double> {
            for (int v : in) {
              if (v < 0) continue;
              const Value& part = value(v);
              if (c[axis] < part.shape[axis]) {
                if (!part.data) return std::nullopt;
                return (*part.data)[ravel(c, part.shape)];
              }
              c[axis] -= part.shape[axis];
            }
            return std::nullopt;
          });
        } else if (op == "Gather") {
          const auto axis = axis_of(i, attr_int(n, "axis").value_or(0), x.shape.size());
          const Value& idx = value(in[1]);
          d = remap(out, [&](const std::vector<std::int64_t>& c) -> std::optional<double> {
            if (!idx.data) return std::nullopt;
            std::vector<std::int64_t> ic(c.begin() + static_cast<std::ptrdiff_t>(axis),
                                         c.begin() + static_cast<std::ptrdiff_t>(axis + idx.shape.size()));
            std::vector<std::int64_t> src(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(axis));
            const std::int64_t k = wrap(static_cast<std::int64_t>((*idx.data)[ravel(ic, idx.shape)]), x.shape[axis]);
            if (k < 0 || k >= x.shape[axis]) fail(i, "index " + std::to_string(k) + " is out of range for axis " + std::to_string(axis));
            src.push_back(k);
            src.insert(src.end(), c.begin() + static_cast<std::ptrdiff_t>(axis + idx.shape.size()), c.end());
            return element(src);
          });
        }
        define(i, n.output(static_cast<int>(k)), out, x.dtype, ValueKind::constant, d);
      }
      return true;
    }
    case Treatment::copy: {
      const Shape out = copy_shape(i, in);
      std::optional<std::vector<double>> d;
      if (op == "Pad") {
        const auto p = pad_amounts(i, in);
        const auto* m = attr(n, "mode");
        const std::string mode = m ? m->s() : "constant";
        const double fill = data(2) && !data(2)->empty() ? data(2)->at(0) : 0.0;
        const std::size_t rank = out.size();
        d = remap(out, [&](const std::vector<std::int64_t>& c) -> std::optional<double> {
          std::vector<std::int64_t> src(rank);
          for (std::size_t a = 0; a < rank; ++a) {
            std::int64_t s = c[a] - p[a];
            const std::int64_t len = x.shape[a];
            if (s < 0 || s >= len) {
              if (mode == "constant") return fill;
              if (mode == "edge") s = std::clamp<std::int64_t>(s, 0, len - 1);
              else if (len > 1) {  // reflect
                const std::int64_t period = 2 * (len - 1);
                s = ((s % period) + period) % period;
                if (s >= len) s = period - s;
              } else {
                s = 0;
              }
            }
            src[a] = s;
          }
          return element(src);
        });
      } else if (op == "Tile") {
        d = remap(out, [&](std::vector<std::int64_t> c) {
          for (std::size_t a = 0; a < c.size(); ++a) c[a] %= x.shape[a];
          return element(c);
        });
      } else if (op == "ScatterND" && x.data && data(1) && data(2)) {
        // Swin's shifted-window masks: updates written at index tuples into a copy of the data.
        std::vector<double> r = *x.data;
        const Shape& is = value(in[1]).shape;
        const auto depth = static_cast<std::size_t>(is.back());
        const std::size_t tuples = static_cast<std::size_t>(element_count(is)) / depth;
        if (depth > x.shape.size()) fail(i, "index tuples of " + std::to_string(depth) + " for rank " + std::to_string(x.shape.size()));
        const std::size_t slice = r.size() / static_cast<std::size_t>(element_count(Shape(x.shape.begin(), x.shape.begin() + static_cast<std::ptrdiff_t>(depth))));
        if (data(2)->size() < tuples * slice) fail(i, "fewer updates than the indices address");
        for (std::size_t t = 0; t < tuples; ++t) {
          std::size_t base_index = 0;
          for (std::size_t a = 0; a < depth; ++a) {
            const std::int64_t k = wrap(static_cast<std::int64_t>((*data(1))[t * depth + a]), x.shape[a]);
            if (k < 0 || k >= x.shape[a]) fail(i, "index " + std::to_string(k) + " is out of range for axis " + std::to_string(a));
            base_index = base_index * static_cast<std::size_t>(x.shape[a]) + static_cast<std::size_t>(k);
          }
          for (std::size_t e = 0; e < slice; ++e) r[base_index * slice + e] = (*data(2))[t * slice + e];
        }
        d = std::move(r);
      } else if (op == "Gather") {
        return false;  // handled as a view above; never reached
      }
      define(i, n.output(0), out, op == "OneHot" ? value(in.at(2)).dtype : x.dtype, ValueKind::constant, d);
      return true;
    }
    case Treatment::reduction: {
      const std::vector<std::size_t> axes = reduce_axes(i, in);
      const bool keepdims = attr_int(n, "keepdims").value_or(1) != 0;
      Shape out, kept;
      for (std::size_t a = 0; a < x.shape.size(); ++a) {
        const bool r = std::find(axes.begin(), axes.end(), a) != axes.end();
        kept.push_back(r ? 1 : x.shape[a]);
        if (!r) out.push_back(x.shape[a]);
        else if (keepdims) out.push_back(1);
      }
      const bool index = op == "ArgMax" || op == "ArgMin";
      std::optional<std::vector<double>> d;
      if (x.data && (op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax" || op == "ReduceMin" ||
                     op == "ReduceProd" || index)) {
        const auto count = static_cast<std::size_t>(element_count(kept));
        std::vector<double> acc(count, op == "ReduceMax" ? -INFINITY : op == "ReduceMin" ? INFINITY : op == "ReduceProd" ? 1.0 : 0.0);
        std::vector<double> best(count, op == "ArgMin" ? INFINITY : -INFINITY);
        std::vector<std::size_t> seen(count, 0);
        for (std::size_t k = 0; k < x.data->size(); ++k) {
          auto c = unravel(k, x.shape);
          const std::int64_t along = axes.empty() ? 0 : c[axes[0]];
          for (std::size_t a : axes) c[a] = 0;
          const std::size_t o = ravel(c, kept);
          const double v = (*x.data)[k];
          if (op == "ReduceSum" || op == "ReduceMean") acc[o] += v;
          else if (op == "ReduceMax") acc[o] = std::max(acc[o], v);
          else if (op == "ReduceMin") acc[o] = std::min(acc[o], v);
          else if (op == "ReduceProd") acc[o] *= v;
          else if ((op == "ArgMax" && v > best[o]) || (op == "ArgMin" && v < best[o])) {
            best[o] = v;
            acc[o] = static_cast<double>(along);
          }
          ++seen[o];
        }
        if (op == "ReduceMean") {
          for (std::size_t o = 0; o < count; ++o) acc[o] /= static_cast<double>(std::max<std::size_t>(seen[o], 1));
        }
        d = std::move(acc);
      }
      define(i, n.output(0), out, index ? ElementType::int64 : x.dtype, ValueKind::constant, d);
      return true;
    }
    case Treatment::elementwise: break;
    default: {
      // Matrix products of constants (rotary frequency tables: an outer product) are tables computed once;
      // other layers on constants stay operators.
      std::vector<Shape> shapes;
      for (int v : in) {
        if (v >= 0) shapes.push_back(value(v).shape);
      }
      Shape out;
      if (op == "MatMul" && shapes.size() == 2) {
        out = ops::matmul_output_shape(shapes[0], shapes[1], {}, SourceLocation{file_}, node_name(i));
      } else if (op == "Einsum" && attr(n, "equation")) {
        out = ops::einsum_output_shape(attr(n, "equation")->s(), shapes, SourceLocation{file_}, node_name(i));
      } else {
        return false;
      }
      define(i, n.output(0), out, x.dtype, ValueKind::constant);
      return true;
    }
  }
  // Pointwise on constants (broadcast).
  const std::vector<int> operands = pointwise_operands(i, in);
  const Shape shape = pointwise_shape(i, in);
  const ElementType dtype = pointwise_dtype(i, operands.empty() ? in : operands);
  std::optional<std::vector<double>> d;
  const auto count = static_cast<std::size_t>(element_count(shape));
  bool known = count <= kMaxFoldedElements && op.rfind("Random", 0) != 0 && op != "Bernoulli";
  for (int v : in) {
    if (v >= 0 && !value(v).data) known = false;
  }
  if (known) {
    std::vector<double> r(count);
    // Broadcast read of input k at output coordinates c.
    auto at = [&](std::size_t k, const std::vector<std::int64_t>& c) {
      const Value& v = value(in[k]);
      std::vector<std::int64_t> src(v.shape.size());
      for (std::size_t a = 0; a < src.size(); ++a) src[a] = v.shape[a] == 1 ? 0 : c[shape.size() - src.size() + a];
      return (*v.data)[ravel(src, v.shape)];
    };
    const bool integer = is_integer(dtype);
    const bool fmod = attr_int(n, "fmod").value_or(0) != 0;
    std::int64_t trilu_k = 0;
    if (op == "Trilu" && in.size() > 1 && in[1] >= 0) trilu_k = const_ints(i, in[1], "k").at(0);
    const bool upper = attr_int(n, "upper").value_or(1) != 0;
    std::int64_t cum_axis = 0;
    if (op == "CumSum") cum_axis = static_cast<std::int64_t>(axis_of(i, const_ints(i, in.at(1), "axis").at(0), shape.size()));
    for (std::size_t k = 0; k < count && known; ++k) {
      const auto c = unravel(k, shape);
      const double a = at(0, c);
      const double b = in.size() > 1 && in[1] >= 0 && op != "Trilu" && op != "CumSum" && op != "CastLike" ? at(1, c) : 0;
      double res = a;
      if (op == "Add") res = a + b;
      else if (op == "Sub") res = a - b;
      else if (op == "Mul") res = a * b;
      else if (op == "Div") res = integer ? std::trunc(a / b) : a / b;
      else if (op == "Mod") res = fmod ? std::fmod(a, b) : a - b * std::floor(a / b);
      else if (op == "Pow") res = std::pow(a, b);
      else if (op == "Equal") res = a == b;
      else if (op == "Less") res = a < b;
      else if (op == "LessOrEqual") res = a <= b;
      else if (op == "Greater") res = a > b;
      else if (op == "GreaterOrEqual") res = a >= b;
      else if (op == "And") res = a != 0 && b != 0;
      else if (op == "Or") res = a != 0 || b != 0;
      else if (op == "Xor") res = (a != 0) != (b != 0);
      else if (op == "Not") res = a == 0;
      else if (op == "Neg") res = -a;
      else if (op == "Abs") res = std::fabs(a);
      else if (op == "Sign") res = (a > 0) - (a < 0);
      else if (op == "Floor") res = std::floor(a);
      else if (op == "Ceil") res = std::ceil(a);
      else if (op == "Round") res = std::nearbyint(a);
      else if (op == "Sqrt") res = std::sqrt(a);
      else if (op == "Reciprocal") res = 1.0 / a;
      else if (op == "Exp") res = std::exp(a);
      else if (op == "Log") res = std::log(a);
      else if (op == "Cos") res = std::cos(a);
      else if (op == "Sin") res = std::sin(a);
      else if (op == "Tanh") res = std::tanh(a);
      else if (op == "Sigmoid") res = 1.0 / (1.0 + std::exp(-a));
      else if (op == "Relu") res = std::max(a, 0.0);
      else if (op == "Erf") res = std::erf(a);
      else if (op == "IsNaN") res = std::isnan(a);
      else if (op == "IsInf") res = std::isinf(a);
      else if (op == "Where") res = a != 0 ? b : at(2, c);
      else if (op == "Cast" || op == "CastLike") res = dtype == ElementType::boolean ? (a != 0) : is_integer(dtype) ? std::trunc(a) : a;
      else if (op == "Identity" || op == "Dropout") res = a;
      else if (op == "Clip") {
        if (in.size() > 1 && in[1] >= 0) res = std::max(res, at(1, c));
        if (in.size() > 2 && in[2] >= 0) res = std::min(res, at(2, c));
      } else if (op == "Max" || op == "Min" || op == "Sum" || op == "Mean") {
        for (std::size_t j = 1; j < in.size(); ++j) {
          const double v = at(j, c);
          res = op == "Max" ? std::max(res, v) : op == "Min" ? std::min(res, v) : res + v;
        }
        if (op == "Mean") res /= static_cast<double>(in.size());
      } else if (op == "Trilu") {
        const std::int64_t col = c.back();
        const std::int64_t row = c[c.size() - 2];
        if (!(upper ? col - row >= trilu_k : col - row <= trilu_k)) res = 0;
      } else if (op == "CumSum") {
        res = 0;
        const bool reverse = attr_int(n, "reverse").value_or(0) != 0;
        const bool exclusive = attr_int(n, "exclusive").value_or(0) != 0;
        auto src = c;
        const std::int64_t len = shape[static_cast<std::size_t>(cum_axis)];
        for (std::int64_t j = 0; j < len; ++j) {
          const std::int64_t here = c[static_cast<std::size_t>(cum_axis)];
          const bool take = reverse ? (exclusive ? j > here : j >= here) : (exclusive ? j < here : j <= here);
          if (!take) continue;
          src[static_cast<std::size_t>(cum_axis)] = j;
          res += at(0, src);
        }
      } else {
        known = false;
      }
      r[k] = res;
    }
    if (known) d = std::move(r);
  }
  define(i, n.output(0), shape, dtype, ValueKind::constant, d);
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
    for (const auto d : dims) {
      if (d < 0) fail(i, "the shape has a negative dimension (" + std::to_string(d) + ")");  // found by fuzz_onnx
    }
    const Shape s(dims.begin(), dims.end());
    std::optional<std::vector<double>> data;
    if (element_count(s) >= 0 && element_count(s) <= static_cast<std::int64_t>(kMaxFoldedElements)) {
      data = std::vector<double>(static_cast<std::size_t>(element_count(s)), fill);
    }
    define(i, out, s, dt, ValueKind::constant, data);
  } else if (op == "Range") {
    const double start = const_data(i, in[0], "start")[0];
    const double limit = const_data(i, in[1], "limit")[0];
    const double delta = const_data(i, in[2], "delta")[0];
    if (delta == 0) fail(i, "a range with step 0");
    const auto count = static_cast<std::int64_t>(std::max(0.0, std::ceil((limit - start) / delta)));
    std::vector<double> d(static_cast<std::size_t>(count));
    for (std::int64_t k = 0; k < count; ++k) d[static_cast<std::size_t>(k)] = start + static_cast<double>(k) * delta;
    define(i, out, {count}, value(in[0]).dtype, ValueKind::constant, d);
  } else if (op == "EyeLike") {
    const Shape& s = value(in[0]).shape;
    if (s.size() != 2) fail(i, "needs a 2-D input");
    const std::int64_t k = attr_int(n, "k").value_or(0);
    auto d = remap(s, [&](const std::vector<std::int64_t>& c) -> std::optional<double> { return c[1] - c[0] == k; });
    ElementType dt = value(in[0]).dtype;
    if (auto t = attr_int(n, "dtype")) dt = element_type_of(static_cast<int>(*t)).value_or(dt);
    define(i, out, s, dt, ValueKind::constant, d);
  }
}

}  // namespace monet::onnx_frontend
