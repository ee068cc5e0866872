// Einsum: an equation of one or two operands as one loop nest, its dims named like a matrix product's.
#include <algorithm>
#include <cctype>
#include <map>

#include "monet/ir/ops.hpp"
#include "ops_detail.hpp"

namespace monet::ops {

using detail::add_dim;
using detail::dim;
using detail::fail;

namespace {

/// The equation with every ellipsis replaced by letters of its own ('0', '1', ... for the broadcast axes,
/// right-aligned across operands) and the output made explicit.
struct Equation {
  std::vector<std::string> inputs;  // one label string per operand, one label per axis
  std::string output;
  std::map<char, std::int64_t> size;
};

Equation parse(const std::string& text, const std::vector<Shape>& shapes, const SourceLocation& where,
               const std::string& name) {
  auto bad = [&](const std::string& why) { fail(where, name, "einsum '" + text + "': " + why); };
  std::string eq;
  for (char c : text) {
    if (c != ' ') eq += c;
  }
  const auto arrow = eq.find("->");
  const std::string lhs = eq.substr(0, arrow);
  std::vector<std::string> terms;
  for (std::size_t start = 0;;) {
    const auto comma = lhs.find(',', start);
    terms.push_back(lhs.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (terms.size() != shapes.size()) {
    bad(std::to_string(terms.size()) + " operand terms for " + std::to_string(shapes.size()) + " inputs");
  }
  // How many axes the ellipsis stands for: the most any operand needs.
  std::size_t ellipsis = 0;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const auto dots = terms[k].find("...");
    const std::size_t letters = terms[k].size() - (dots == std::string::npos ? 0 : 3);
    if (dots == std::string::npos && letters != shapes[k].size()) {
      bad("operand " + std::to_string(k + 1) + " has rank " + std::to_string(shapes[k].size()) + " but " +
          std::to_string(letters) + " labels");
    }
    if (dots != std::string::npos) {
      if (shapes[k].size() < letters) bad("operand " + std::to_string(k + 1) + " has too few axes");
      ellipsis = std::max(ellipsis, shapes[k].size() - letters);
    }
  }
  if (ellipsis > 10) bad("the ellipsis stands for more than 10 axes");
  auto expand = [&](const std::string& term, std::size_t count) {
    const auto dots = term.find("...");
    if (dots == std::string::npos) return term;
    std::string labels;
    for (std::size_t j = ellipsis - count; j < ellipsis; ++j) labels += static_cast<char>('0' + j);
    return term.substr(0, dots) + labels + term.substr(dots + 3);
  };
  Equation e;
  for (std::size_t k = 0; k < terms.size(); ++k) {
    const auto dots = terms[k].find("...");
    const std::size_t count = dots == std::string::npos ? 0 : shapes[k].size() - (terms[k].size() - 3);
    e.inputs.push_back(expand(terms[k], count));
    for (char c : e.inputs.back()) {
      if (!std::isalpha(static_cast<unsigned char>(c)) && !std::isdigit(static_cast<unsigned char>(c))) {
        bad(std::string("'") + c + "' is not a label");
      }
    }
    for (std::size_t a = 0; a < e.inputs.back().size(); ++a) {
      const char c = e.inputs.back()[a];
      const std::int64_t n = shapes[k][a];
      auto [it, fresh] = e.size.emplace(c, n);
      if (!fresh && it->second != n) {
        if (it->second == 1) it->second = n;  // broadcast (an ellipsis axis of size 1)
        else if (n != 1 || !std::isdigit(static_cast<unsigned char>(c))) {
          bad(std::string("label '") + c + "' has sizes " + std::to_string(it->second) + " and " + std::to_string(n));
        }
      }
    }
  }
  if (arrow != std::string::npos) {
    const std::string rhs = eq.substr(arrow + 2);
    e.output = rhs.find("...") == std::string::npos ? rhs : expand(rhs, ellipsis);
  } else {  // implicit: the ellipsis, then every label used once, alphabetically
    std::map<char, int> count;
    for (const auto& t : e.inputs) {
      for (char c : t) ++count[c];
    }
    for (std::size_t j = 0; j < ellipsis; ++j) e.output += static_cast<char>('0' + j);
    for (const auto& [c, n] : count) {
      if (n == 1 && std::isalpha(static_cast<unsigned char>(c))) e.output += c;
    }
  }
  for (char c : e.output) {
    if (!e.size.contains(c)) bad(std::string("output label '") + c + "' is in no operand");
    if (std::count(e.output.begin(), e.output.end(), c) > 1) bad(std::string("output label '") + c + "' repeats");
  }
  return e;
}

bool has(const std::string& s, char c) { return s.find(c) != std::string::npos; }

}  // namespace

Shape einsum_output_shape(const std::string& equation, const std::vector<Shape>& operands, const SourceLocation& where,
                          const std::string& name) {
  if (operands.empty() || operands.size() > 2) {
    fail(where, name, "einsum of " + std::to_string(operands.size()) +
                          " operands: only one or two are supported (contract longer chains pairwise)");
  }
  const Equation e = parse(equation, operands, where, name);
  Shape out;
  for (char c : e.output) out.push_back(e.size.at(c));
  return out;
}

OperatorId einsum(GraphBuilder& b, Operator op, const std::string& equation, const std::vector<TensorId>& inputs,
                  TensorId output) {
  std::vector<Shape> shapes;
  for (TensorId t : inputs) shapes.push_back(b.tensor(t).shape);
  const Shape expected = einsum_output_shape(equation, shapes, op.origin, op.name);
  if (b.tensor(output).shape != expected) {
    fail(op.origin, op.name, "output shape " + to_string(b.tensor(output).shape) + " should be " + to_string(expected));
  }
  const Equation e = parse(equation, shapes, op.origin, op.name);
  const std::string& a = e.inputs[0];
  const std::string bl = inputs.size() > 1 ? e.inputs[1] : std::string();
  // Roles: batch (both operands and the output), rows (first operand and the output), columns (second operand
  // and the output), summed (in no output).
  std::string batch, rows, cols, summed;
  for (char c : e.output) {
    const bool in_a = has(a, c);
    const bool in_b = has(bl, c);
    (in_a && in_b ? batch : in_a ? rows : cols) += c;
  }
  for (const std::string* t : {&a, &bl}) {
    for (char c : *t) {
      if (!has(e.output, c) && !has(summed, c)) summed += c;
    }
  }
  std::map<char, int> dim_of;
  auto numbered = [](const char* base, std::size_t i) { return i == 0 ? std::string(base) : base + std::to_string(i + 1); };
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::string n = batch.size() == 1 ? "B" : (i + 1 == batch.size() ? "H" : (i == 0 ? "B" : "B" + std::to_string(i)));
    dim_of[batch[i]] = add_dim(op, n, e.size.at(batch[i]));
  }
  for (std::size_t i = 0; i < rows.size(); ++i) dim_of[rows[i]] = add_dim(op, numbered("D", i), e.size.at(rows[i]));
  for (std::size_t i = 0; i < cols.size(); ++i) dim_of[cols[i]] = add_dim(op, numbered("K", i), e.size.at(cols[i]));
  for (std::size_t i = 0; i < summed.size(); ++i) dim_of[summed[i]] = add_dim(op, numbered("C", i), e.size.at(summed[i]));
  auto access = [&](const std::string& labels, const Shape& shape) {
    std::vector<AffineExpr> acc;
    for (std::size_t x = 0; x < labels.size(); ++x) {
      const int d = dim_of.at(labels[x]);
      acc.push_back(shape[x] == 1 && op.dims[static_cast<std::size_t>(d)].size != 1 ? AffineExpr::constant(0) : dim(d));
    }
    return acc;
  };
  op.operands.push_back(operand(b, output, OperandSlot::O, access(e.output, expected)));
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    op.operands.push_back(operand(b, inputs[k], k == 0 ? OperandSlot::I1 : OperandSlot::I2, access(e.inputs[k], shapes[k])));
  }
  if (inputs.size() == 1) {
    op.kind = summed.empty() ? OpKind::copy : OpKind::reduction;
    op.ops_per_iteration = summed.empty() ? 0 : 1;
  } else if (op.kind != OpKind::gemm) {
    op.kind = OpKind::matmul;
  }
  if (op.type.empty()) op.type = "Einsum";
  return b.add_operator(std::move(op));
}

}  // namespace monet::ops
