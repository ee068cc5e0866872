// Multi-node idioms of PyTorch exports recognised before conversion; each becomes one semantic operator
// that keeps the original node names (GELU from its erf formula, linear = MatMul + bias Add, masked softmax,
// transposed weights feeding MatMul).
#include "conversion.hpp"

#include <cmath>

namespace monet::onnx_frontend {

void Converter::find_patterns() {
  for (int i = 0; i < g_.node_size(); ++i) {
    const auto& n = g_.node(i);
    if (n.op_type() == "Erf") match_gelu(i);
    if (n.op_type() == "MatMul") match_linear(i);
    if (n.op_type() == "Softmax") match_masked_softmax(i);
    if (n.op_type() == "Transpose") match_transposed_weight(i);
  }
}

// x -> Div(x, √2) -> Erf -> Add(·, 1) -> Mul(x, ·) -> Mul(·, 0.5)   (PyTorch's exact GELU)
void Converter::match_gelu(int erf) {
  const auto& e = g_.node(erf);
  const int div = producer(e.input(0));
  if (div < 0 || single_consumer(e.input(0)) != erf) return;
  const auto& d = g_.node(div);
  std::string x;
  if (d.op_type() == "Div" && constant_scalar(d.input(1)) && near(*constant_scalar(d.input(1)), std::sqrt(2.0))) {
    x = d.input(0);
  } else if (d.op_type() == "Mul" && constant_scalar(d.input(1)) &&
             near(*constant_scalar(d.input(1)), 1.0 / std::sqrt(2.0))) {
    x = d.input(0);
  } else {
    return;
  }
  const int add = single_consumer(e.output(0));
  if (!is_op(add, "Add")) return;
  const auto& a = g_.node(add);
  const std::string& one = a.input(0) == e.output(0) ? a.input(1) : a.input(0);
  if (!constant_scalar(one) || !near(*constant_scalar(one), 1.0)) return;
  const int mul = single_consumer(a.output(0));
  if (!is_op(mul, "Mul")) return;
  const auto& m = g_.node(mul);
  const std::string& other = m.input(0) == a.output(0) ? m.input(1) : m.input(0);
  if (other != x) return;
  const int half = single_consumer(m.output(0));
  if (!is_op(half, "Mul")) return;
  const auto& h = g_.node(half);
  const std::string& c = h.input(0) == m.output(0) ? h.input(1) : h.input(0);
  if (!constant_scalar(c) || !near(*constant_scalar(c), 0.5)) return;
  gelu_[half] = Gelu{div, x, {div, erf, add, mul, half}};
  for (int k : {div, erf, add, mul}) absorbed_[static_cast<std::size_t>(k)] = true;
}

// MatMul(x, W) -> Add(b, ·) with b a 1-D initializer: one linear layer with bias.
void Converter::match_linear(int mm) {
  const auto& m = g_.node(mm);
  const std::string& b = m.input(1);
  if (!static_value_.contains(b) || constant_value_.contains(b)) return;  // weights, not activations
  const int add = single_consumer(m.output(0));
  if (!is_op(add, "Add")) return;
  const auto& a = g_.node(add);
  const std::string& bias = a.input(0) == m.output(0) ? a.input(1) : a.input(0);
  bool is_initializer = false;
  for (const auto& t : g_.initializer()) {
    if (t.name() == bias && t.dims_size() == 1) is_initializer = true;
  }
  if (!is_initializer) return;
  linear_[mm] = Linear{add, bias};
  absorbed_[static_cast<std::size_t>(add)] = true;
}

// Where(mask, -inf, x) -> Softmax   or   Add(x, mask) -> Softmax, the mask depending on no input.
void Converter::match_masked_softmax(int sm) {
  const auto& s = g_.node(sm);
  const int p = producer(s.input(0));
  if (p < 0 || single_consumer(s.input(0)) != sm) return;
  const auto& n = g_.node(p);
  if (n.op_type() == "Where" && n.input_size() == 3) {
    const auto fill = constant_scalar(n.input(1));
    if (static_value_.contains(n.input(0)) && fill && (std::isinf(*fill) || *fill < -1e4) &&
        !static_value_.contains(n.input(2))) {
      masked_[sm] = MaskedSoftmax{p, n.input(2), n.input(0), true};
      absorbed_[static_cast<std::size_t>(p)] = true;
    }
  } else if (n.op_type() == "Add" && n.input_size() == 2) {
    for (int k = 0; k < 2; ++k) {
      const std::string& mask = n.input(k);
      const std::string& x = n.input(1 - k);
      if (static_value_.contains(mask) && !static_value_.contains(x) && !constant_scalar(mask)) {
        masked_[sm] = MaskedSoftmax{p, x, mask, false};
        absorbed_[static_cast<std::size_t>(p)] = true;
        return;
      }
    }
  }
}

// Transpose(W, perm=[1,0]) of a 2-D initializer used only as MatMul's B: MatMul reads W transposed.
void Converter::match_transposed_weight(int tr) {
  const auto& t = g_.node(tr);
  const auto perm = attr_ints(t, "perm");
  if (!perm || *perm != std::vector<std::int64_t>{1, 0}) return;
  bool two_d_initializer = false;
  for (const auto& init : g_.initializer()) {
    if (init.name() == t.input(0) && init.dims_size() == 2) two_d_initializer = true;
  }
  if (!two_d_initializer) return;
  const auto& users = consumers(t.output(0));
  if (users.empty()) return;
  for (int u : users) {
    const auto& un = g_.node(u);
    if (un.op_type() != "MatMul" || un.input(1) != t.output(0) || un.input(0) == t.output(0)) return;
  }
  transposed_[t.output(0)] = tr;
}

}  // namespace monet::onnx_frontend
