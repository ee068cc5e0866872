// Conv dX: a transposed convolution in gather form, split into stride phases (no multiply on inserted zeros)
// and interleaved by a view.
#include "generator.hpp"

namespace monet::plugins::autodiff {

/// Conv dX as a transposed convolution in gather form. For stride s the input rows split into s phases
/// (iy = s·j + r); phase r only meets the kernel taps fy with (r + p − d·fy) ≡ 0 (mod s), which form an
/// arithmetic progression: each phase is a stride-1 convolution over its taps, and the s_y·s_x phases are
/// interleaved into dX by a view. No multiply touches an inserted zero; Σ phases = the forward MACs when
/// the input extent is s × the output extent.
void Generator::conv_dx(Instance& inst, const Operator& f, TensorId dy) {
  const Operand& xin = f.operands[1];
  const Operand& w = f.operands[2];
  const Shape x_shape = f_.tensor(xin.tensor).shape;
  const auto stride = f.attributes.at("strides");
  const auto dil = f.attributes.at("dilations");
  const auto pads = f.attributes.at("pads");
  const auto kernel = f.attributes.at("kernel_shape");
  const std::size_t axes = kernel.size();  // 1-, 2- or 3-D
  const int dG = f.dim_index("G");
  const int dB = f.dim_index("B");
  const int dK = f.dim_index("K");
  const int dC = f.dim_index("C");
  const std::int64_t K = f.dims[static_cast<std::size_t>(dK)].size;
  const std::int64_t C = f.dims[static_cast<std::size_t>(dC)].size;
  const auto o_names = ops::spatial_dim_names(axes, 'O');
  const auto f_names = ops::spatial_dim_names(axes, 'F');

  struct AxisPhase {
    std::int64_t rows = 0;   // output rows of the phase (j)
    std::int64_t taps = 0;   // kernel taps it uses (m)
    std::int64_t f0 = 0;     // first tap
    std::int64_t step = 1;   // tap stride
    std::int64_t e = 1;      // dO index change per tap
    std::int64_t c = 0;      // dO index offset
  };
  auto phases_of = [&](std::size_t a) {
    const std::int64_t s = stride[a];
    const std::int64_t d = dil[a];
    const std::int64_t p = pads[a];
    const std::int64_t F = kernel[a];
    const std::int64_t H = x_shape[2 + a];
    std::vector<AxisPhase> out;
    for (std::int64_t r = 0; r < s; ++r) {
      AxisPhase ph;
      ph.rows = (H - r + s - 1) / s;
      std::vector<std::int64_t> taps;
      for (std::int64_t fy = 0; fy < F; ++fy) {
        if (((r + p - d * fy) % s + s) % s == 0) taps.push_back(fy);
      }
      if (!taps.empty()) {
        ph.f0 = taps[0];
        ph.step = taps.size() > 1 ? taps[1] - taps[0] : 1;
        ph.taps = static_cast<std::int64_t>(taps.size());
        ph.e = d * ph.step / s;
        ph.c = (r + p - d * ph.f0) / s;
      }
      out.push_back(ph);
    }
    return out;
  };
  std::vector<std::vector<AxisPhase>> phases;
  std::size_t combinations = 1;
  for (std::size_t a = 0; a < axes; ++a) {
    phases.push_back(phases_of(a));
    combinations *= phases.back().size();
  }
  const bool single = combinations == 1;
  const std::string base = b_.op(inst.op[static_cast<std::size_t>(f.id)]).name;
  std::vector<TensorId> parts;
  for (std::size_t combo = 0; combo < combinations; ++combo) {
    // The phase of every axis (mixed radix over the axes' stride counts).
    std::vector<std::size_t> r(axes);
    std::size_t rest = combo;
    for (std::size_t a = axes; a-- > 0;) {
      r[a] = rest % phases[a].size();
      rest /= phases[a].size();
    }
    bool empty = false;
    for (std::size_t a = 0; a < axes; ++a) {
      const AxisPhase& ph = phases[a][r[a]];
      empty |= ph.rows <= 0 || ph.taps == 0;  // no gradient reaches these rows
    }
    if (empty) continue;
    std::string tag;
    if (!single) {
      tag = "[";
      for (std::size_t a = 0; a < axes; ++a) tag += (a ? "," : "") + std::to_string(r[a]);
      tag += "]";
    }
    Operator op = make_op(base + "/dX" + tag, OpKind::conv, f.type + ".dX", Phase::backward_dx,
                          inst.op[static_cast<std::size_t>(f.id)]);
    op.attributes = f.attributes;
    op.attributes["phase"] = std::vector<std::int64_t>(r.begin(), r.end());
    const int nB = static_cast<int>(op.dims.size());
    op.dims.push_back(f.dims[static_cast<std::size_t>(dB)]);
    int nG = -1;
    if (dG >= 0) {
      nG = static_cast<int>(op.dims.size());
      op.dims.push_back(f.dims[static_cast<std::size_t>(dG)]);
    }
    const int nC = static_cast<int>(op.dims.size());
    op.dims.push_back(LoopDim{"K", C});  // dX channels: the forward input channels
    const int nK = static_cast<int>(op.dims.size());
    op.dims.push_back(LoopDim{"C", K});  // reduced: the forward output channels
    std::vector<int> nY(axes), nF(axes);
    for (std::size_t a = 0; a < axes; ++a) {
      nY[a] = static_cast<int>(op.dims.size());
      op.dims.push_back(LoopDim{o_names[a], phases[a][r[a]].rows});
    }
    for (std::size_t a = 0; a < axes; ++a) {
      nF[a] = static_cast<int>(op.dims.size());
      op.dims.push_back(LoopDim{f_names[a], phases[a][r[a]].taps});
    }
    auto channel = [&](int d, std::int64_t per_group) {
      if (nG < 0) return AffineExpr::of_dim(d);
      return AffineExpr{{{nG, per_group}, {d, 1}}, 0};
    };
    // Taps flipped so every coefficient on the dO side is positive: m' = taps − 1 − m.
    auto dO_index = [](int j, int m, const AxisPhase& ph) {
      return AffineExpr{{{j, 1}, {m, ph.e}}, ph.c - ph.e * (ph.taps - 1)};
    };
    auto w_index = [](int m, const AxisPhase& ph) {
      return AffineExpr{{{m, -ph.step}}, ph.f0 + ph.step * (ph.taps - 1)};
    };
    Shape part_shape{x_shape[0], x_shape[1]};
    std::vector<AffineExpr> acc_part{AffineExpr::of_dim(nB), channel(nC, C)};
    std::vector<AffineExpr> acc_dy{AffineExpr::of_dim(nB), channel(nK, K)};
    std::vector<AffineExpr> acc_w{channel(nK, K), AffineExpr::of_dim(nC)};
    for (std::size_t a = 0; a < axes; ++a) {
      const AxisPhase& ph = phases[a][r[a]];
      part_shape.push_back(ph.rows);
      acc_part.push_back(AffineExpr::of_dim(nY[a]));
      acc_dy.push_back(dO_index(nY[a], nF[a], ph));
      acc_w.push_back(w_index(nF[a], ph));
    }
    const TensorId part = single ? grad_tensor(inst, xin.tensor)
                                 : new_tensor("d(" + b_.tensor(T(inst, xin.tensor)).name + ")" + tag, part_shape,
                                              b_.tensor(T(inst, xin.tensor)).dtype, TensorRole::gradient);
    op.operands.push_back(operand(part, OperandSlot::O, std::move(acc_part)));
    op.operands.push_back(operand(dy, OperandSlot::I1, std::move(acc_dy)));
    op.operands.push_back(operand(T(inst, w.tensor), OperandSlot::I2, std::move(acc_w)));
    b_.add_operator(std::move(op));
    parts.push_back(part);
  }
  if (parts.empty()) return;
  if (single) {
    add_piece(xin.tensor, parts[0]);
    return;
  }
  const TensorId dx = grad_tensor(inst, xin.tensor);
  Operator join = make_op(base + "/dX.interleave", OpKind::view, "Interleave", Phase::backward_dx,
                          inst.op[static_cast<std::size_t>(f.id)]);
  join.ops_per_iteration = 0;
  join.operands.push_back(operand(dx, OperandSlot::O, {}));
  for (TensorId p : parts) join.operands.push_back(operand(p, OperandSlot::I1, {}));
  b_.add_operator(std::move(join));
  add_piece(xin.tensor, dx);
}

}  // namespace monet::plugins::autodiff
