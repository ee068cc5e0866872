// Multi-node idioms of PyTorch exports recognised before conversion; each becomes one semantic operator
// that keeps the original node names, so that costs and saved tensors are those of the PyTorch function the
// nodes came from (GELU, SiLU, Mish, HardSwish, rsqrt, GroupNorm, LayerNorm before opset 17, linear = MatMul +
// bias Add, masked softmax, transposed weights feeding MatMul).
#include "conversion.hpp"

#include <cmath>
#include <algorithm>
#include <set>

namespace monet::onnx_frontend {

void Converter::find_patterns() {
  for (int i = 0; i < g_.node_size(); ++i) {
    if (absorbed_[static_cast<std::size_t>(i)]) continue;  // part of a pattern found earlier
    const std::string& op = g_.node(i).op_type();
    if (op == "ReduceMean") match_layer_norm(i);
    if (op == "Erf") match_gelu(i);
    if (op == "Tanh") match_gelu_tanh(i);
    if (op == "Sigmoid" || op == "HardSigmoid") match_sigmoid_gate(i);
    if (op == "Softplus") match_mish(i);
    if (op == "Sqrt") match_rsqrt(i);
    if (op == "InstanceNormalization") match_group_norm(i);
    if (op == "MatMul") match_linear(i);
    if (op == "Softmax") match_masked_softmax(i);
    if (op == "Transpose") match_transposed_weight(i);
  }
}

std::string Converter::other_input(int node, const std::string& input) const {
  const auto& n = g_.node(node);
  if (n.input_size() != 2) return {};
  if (n.input(0) == input) return n.input(1);
  if (n.input(1) == input) return n.input(0);
  return {};
}

bool Converter::scalar_is(const std::string& name, double v) const {
  const auto c = constant_scalar(name);
  return c && near(*c, v);
}

void Converter::add_activation(int last, Activation a) {
  for (int k : a.nodes) {
    if (k != last) absorbed_[static_cast<std::size_t>(k)] = true;
  }
  activation_[last] = std::move(a);
}

// x -> Div(x, √2) -> Erf -> Add(·, 1) -> Mul(x, ·) -> Mul(·, 0.5)   (PyTorch's exact GELU)
void Converter::match_gelu(int erf) {
  const auto& e = g_.node(erf);
  const int div = producer(e.input(0));
  if (div < 0 || single_consumer(e.input(0)) != erf) return;
  const auto& d = g_.node(div);
  std::string x;
  if ((d.op_type() == "Div" && scalar_is(d.input(1), std::sqrt(2.0))) ||
      (d.op_type() == "Mul" && scalar_is(d.input(1), 1.0 / std::sqrt(2.0)))) {
    x = d.input(0);
  } else {
    return;
  }
  const int add = single_consumer(e.output(0));
  if (!is_op(add, "Add") || !scalar_is(other_input(add, e.output(0)), 1.0)) return;
  const int mul = single_consumer(g_.node(add).output(0));
  if (!is_op(mul, "Mul") || other_input(mul, g_.node(add).output(0)) != x) return;
  const int half = single_consumer(g_.node(mul).output(0));
  if (!is_op(half, "Mul") || !scalar_is(other_input(half, g_.node(mul).output(0)), 0.5)) return;
  add_activation(half, Activation{"Gelu", x, {div, erf, add, mul, half}, erf, kGeluOps});
}

// GELU(approximate="tanh"): x·x -> ·x -> ·0.044715 -> x + · -> ·√(2/π) -> Tanh -> 1 + · -> x·· -> ·0.5
void Converter::match_gelu_tanh(int tanh) {
  const auto& t = g_.node(tanh);
  const int scale = producer(t.input(0));
  if (!is_op(scale, "Mul") || single_consumer(t.input(0)) != tanh) return;
  std::string inner;
  for (const auto& in : g_.node(scale).input()) {
    if (!scalar_is(in, std::sqrt(2.0 / M_PI))) inner = in;
  }
  const int sum = producer(inner);
  if (!is_op(sum, "Add") || single_consumer(inner) != scale) return;
  // One input of the Add is x, the other 0.044715·x³.
  for (int side = 0; side < 2; ++side) {
    const std::string x = g_.node(sum).input(side);
    const std::string cubic = g_.node(sum).input(1 - side);
    const int c = producer(cubic);
    if (!is_op(c, "Mul") || single_consumer(cubic) != sum) continue;
    std::string x3;
    for (const auto& in : g_.node(c).input()) {
      if (!scalar_is(in, 0.044715)) x3 = in;
    }
    const int m1 = producer(x3);
    if (!is_op(m1, "Mul") || single_consumer(x3) != c) continue;
    const std::string x2 = other_input(m1, x);
    const int m0 = producer(x2);
    if (!is_op(m0, "Mul") || single_consumer(x2) != m1 || g_.node(m0).input(0) != x || g_.node(m0).input(1) != x) continue;
    const int one = single_consumer(t.output(0));
    if (!is_op(one, "Add") || !scalar_is(other_input(one, t.output(0)), 1.0)) return;
    const int mul = single_consumer(g_.node(one).output(0));
    if (!is_op(mul, "Mul") || other_input(mul, g_.node(one).output(0)) != x) return;
    const int half = single_consumer(g_.node(mul).output(0));
    if (!is_op(half, "Mul") || !scalar_is(other_input(half, g_.node(mul).output(0)), 0.5)) return;
    add_activation(half, Activation{"Gelu", x, {m0, m1, c, sum, scale, tanh, one, mul, half}, tanh, kGeluTanhOps});
    return;
  }
}

// x -> Sigmoid -> Mul(x, ·): SiLU / Swish (EfficientNet, SwiGLU);  x -> HardSigmoid(1/6, 1/2) -> Mul(x, ·):
// HardSwish (opsets before 14).
void Converter::match_sigmoid_gate(int gate) {
  const auto& g = g_.node(gate);
  const std::string& x = g.input(0);
  const int mul = single_consumer(g.output(0));
  if (!is_op(mul, "Mul") || other_input(mul, g.output(0)) != x) return;
  if (g.op_type() == "Sigmoid") {
    add_activation(mul, Activation{"Silu", x, {gate, mul}, gate, kSiluOps});
    return;
  }
  const float alpha = attr_float(g, "alpha").value_or(0.2f);
  const float beta = attr_float(g, "beta").value_or(0.5f);
  if (near(alpha, 1.0 / 6.0) && near(beta, 0.5)) {
    add_activation(mul, Activation{"HardSwish", x, {gate, mul}, gate, op_rule("HardSwish")->ops});
  }
}

// x -> Softplus -> Tanh -> Mul(x, ·): Mish.
void Converter::match_mish(int softplus) {
  const auto& sp = g_.node(softplus);
  const std::string& x = sp.input(0);
  const int tanh = single_consumer(sp.output(0));
  if (!is_op(tanh, "Tanh")) return;
  const int mul = single_consumer(g_.node(tanh).output(0));
  if (!is_op(mul, "Mul") || other_input(mul, g_.node(tanh).output(0)) != x) return;
  add_activation(mul, Activation{"Mish", x, {softplus, tanh, mul}, softplus, kMishOps});
}

// x -> Sqrt -> Div(1, ·) or Reciprocal: torch.rsqrt (RMSNorm), which saves its result, not its input.
void Converter::match_rsqrt(int sqrt) {
  const auto& s = g_.node(sqrt);
  const int inv = single_consumer(s.output(0));
  const bool reciprocal = is_op(inv, "Reciprocal");
  const bool div = is_op(inv, "Div") && g_.node(inv).input(1) == s.output(0) && scalar_is(g_.node(inv).input(0), 1.0);
  if (!reciprocal && !div) return;
  add_activation(inv, Activation{"Rsqrt", s.input(0), {sqrt, inv}, sqrt, kRsqrtOps});
}

// x -> Reshape [N, G, -1] -> InstanceNormalization (unit scale, zero bias) -> Reshape to x's shape
// (-> Mul(·, Unsqueeze(weight)) -> Add(·, Unsqueeze(bias))): nn.GroupNorm as PyTorch exports it.
void Converter::match_group_norm(int norm) {
  const auto& n = g_.node(norm);
  const int r1 = producer(n.input(0));
  if (!is_op(r1, "Reshape") || single_consumer(n.input(0)) != norm) return;
  if (n.input_size() < 3 || !constant_value_.contains(n.input(1)) || !constant_value_.contains(n.input(2))) return;
  const int r2 = single_consumer(n.output(0));
  if (!is_op(r2, "Reshape")) return;
  GroupNormPattern p;
  p.x = g_.node(r1).input(0);
  p.instance_norm = norm;
  p.nodes = {r1, norm, r2};
  std::string out = g_.node(r2).output(0);
  // The affine part: a weight and a bias of shape [C], each unsqueezed to broadcast over positions.
  auto stored_through_unsqueeze = [&](const std::string& v) -> std::string {
    const int u = producer(v);
    if (!is_op(u, "Unsqueeze") || single_consumer(v) < 0) return {};
    const std::string& w = g_.node(u).input(0);
    return static_value_.contains(w) && !constant_value_.contains(w) ? w : std::string();
  };
  const int mul = single_consumer(out);
  if (is_op(mul, "Mul")) {
    const std::string wv = other_input(mul, out);
    const std::string w = stored_through_unsqueeze(wv);
    const int add = single_consumer(g_.node(mul).output(0));
    if (!w.empty() && is_op(add, "Add")) {
      const std::string bv = other_input(add, g_.node(mul).output(0));
      const std::string bias = stored_through_unsqueeze(bv);
      if (!bias.empty()) {
        p.scale = w;
        p.bias = bias;
        p.nodes.insert(p.nodes.end(), {producer(wv), mul, producer(bv), add});
      }
    }
  }
  p.groups = 0;  // known once the input's shape is (emit_group_norm_pattern)
  const int last = p.nodes.back();
  for (int k : p.nodes) {
    if (k != last) absorbed_[static_cast<std::size_t>(k)] = true;
  }
  group_norm_[last] = std::move(p);
}

void Converter::match_layer_norm(int mean) {
  const auto& m = g_.node(mean);
  const std::string& x = m.input(0);
  const int sub = single_consumer(m.output(0));
  if (!is_op(sub, "Sub") || g_.node(sub).input(0) != x || g_.node(sub).input(1) != m.output(0)) return;
  const std::string d = g_.node(sub).output(0);
  int pow = -1;
  int div = -1;
  for (int c : consumers(d)) {
    if (is_op(c, "Pow") && g_.node(c).input(0) == d && scalar_is(g_.node(c).input(1), 2.0)) pow = c;
    if (is_op(c, "Div") && g_.node(c).input(0) == d) div = c;
  }
  if (pow < 0 || div < 0 || consumers(d).size() != 2) return;
  const int var = single_consumer(g_.node(pow).output(0));
  if (!is_op(var, "ReduceMean") || attr_ints(g_.node(var), "axes") != attr_ints(m, "axes")) return;
  const int eps = single_consumer(g_.node(var).output(0));
  if (!is_op(eps, "Add") || !constant_scalar(other_input(eps, g_.node(var).output(0)))) return;
  const int sqrt = single_consumer(g_.node(eps).output(0));
  if (!is_op(sqrt, "Sqrt") || single_consumer(g_.node(sqrt).output(0)) != div || g_.node(div).input(1) != g_.node(sqrt).output(0)) return;
  const auto axes = attr_ints(m, "axes");
  if (!axes || axes->empty()) return;
  LayerNormPattern p;
  p.x = x;
  p.nodes = {mean, sub, pow, var, eps, sqrt, div};
  // Trailing axes only (negative as exported); the rank is checked at emission.
  std::int64_t first = 0;
  for (auto a : *axes) first = std::min(first, a);
  if (first >= 0 || static_cast<std::int64_t>(axes->size()) != -first) return;
  p.axis = static_cast<std::size_t>(-first);  // counted from the end until the rank is known
  auto stored = [&](const std::string& v) {
    return static_value_.contains(v) && !constant_value_.contains(v) ? v : std::string();
  };
  std::string out = g_.node(div).output(0);
  const int mul = single_consumer(out);
  if (is_op(mul, "Mul") && !stored(other_input(mul, out)).empty()) {
    p.scale = other_input(mul, out);
    p.nodes.push_back(mul);
    out = g_.node(mul).output(0);
    const int add = single_consumer(out);
    if (is_op(add, "Add") && !stored(other_input(add, out)).empty()) {
      p.bias = other_input(add, out);
      p.nodes.push_back(add);
    }
  }
  const int last = p.nodes.back();
  for (int k : p.nodes) {
    if (k != last) absorbed_[static_cast<std::size_t>(k)] = true;
  }
  layer_norm_[last] = std::move(p);
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
      if (static_value_.contains(mask) && !static_value_.contains(x) && !constant_scalar(mask) &&
          !looked_up_from_table(mask)) {
        masked_[sm] = MaskedSoftmax{p, x, mask, false};
        absorbed_[static_cast<std::size_t>(p)] = true;
        return;
      }
    }
  }
}

bool Converter::looked_up_from_table(const std::string& name) const {
  std::vector<std::string> stack{name};
  std::set<std::string> seen;
  while (!stack.empty()) {
    const std::string v = stack.back();
    stack.pop_back();
    if (!seen.insert(v).second) continue;
    const int p = producer(v);
    if (p < 0) continue;
    const auto& n = g_.node(p);
    if (n.op_type() == "Gather" && n.input_size() > 0) {
      for (const auto& t : g_.initializer()) {
        if (t.name() == n.input(0) && t.data_type() == onnx::TensorProto::FLOAT) return true;
      }
    }
    for (const auto& in : n.input()) {
      if (!in.empty()) stack.push_back(in);
    }
  }
  return false;
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
