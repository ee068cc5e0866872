"""PyTorch-side measurements shared by the reference scripts (Debian's torch 1.13, CPU, fp32).

* parameters: trainable elements, shared tensors once;
* forward MACs: convolutions (transposed too: every input element meets every tap), mm/addmm/bmm/baddbmm,
  counted under a TorchDispatchMode, i.e. after autograd decomposed linear, matmul and einsum;
* saved activation bytes: torch.autograd.graph.saved_tensors_hooks sees every tensor autograd saves for the
  backward pass; the sum over their distinct storages, leaving out parameters and buffers and 0-dim tensors
  (wrapped Python scalars and nll_loss's total_weight: bytes, not activation memory). Dropout masks are
  float on CPU (4 B per element in fp32; CUDA saves 1 B booleans).
* export: the settings of workloads/onnx's first models — training mode, no constant folding, opset 17,
  initializers without data, shapes inferred by onnx.
"""
import io
import json
import os
import warnings

import onnx
import torch
import torch.nn.functional as F
from torch.onnx import symbolic_helper
from torch.utils._python_dispatch import TorchDispatchMode

warnings.filterwarnings("ignore")
aten = torch.ops.aten


def _bernoulli(g, input, p, generator=None):
    # torch 1.13 maps bernoulli_(p)'s float p to the exporter's `out` parameter and refuses it; torchvision's
    # stochastic depth (EfficientNet, ConvNeXt, Swin) needs it. Uniform noise < p, as float.
    u = g.op("RandomUniformLike", input, dtype_i=1)
    pv = g.op("Constant", value_t=torch.tensor(symbolic_helper._maybe_get_const(p, "f"), dtype=torch.float))
    return g.op("Cast", g.op("Less", u, pv), to_i=1)


torch.onnx.register_custom_op_symbolic("aten::bernoulli", _bernoulli, 15)


class MacCounter(TorchDispatchMode):
    """Multiply-accumulates of convolutions and matrix products run while it is active."""

    def __init__(self):
        super().__init__()
        self.macs = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        p = func.overloadpacket
        if p in (aten.convolution, aten._convolution):
            x, w, transposed = args[0], args[1], args[6]
            taps = 1
            for d in w.shape[2:]:
                taps *= d
            # weight [C_out, C_in/g, ...] (transposed: [C_in, C_out/g, ...])
            self.macs += (x.numel() if transposed else out.numel()) * w.shape[1] * taps
        elif p in (aten.mm, aten.addmm):
            a, b = (args[1], args[2]) if p is aten.addmm else (args[0], args[1])
            self.macs += a.shape[0] * a.shape[1] * b.shape[1]
        elif p in (aten.bmm, aten.baddbmm):
            a, b = (args[1], args[2]) if p is aten.baddbmm else (args[0], args[1])
            self.macs += a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
        return out


def trainable_parameters(model):
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def forward_macs(model, inputs):
    with torch.no_grad(), MacCounter() as counter:
        model(*inputs)
    return counter.macs


def cross_entropy(logits, class_axis):
    """PyTorch's CrossEntropyLoss with the class axis where the model puts it (labels: all zeros)."""
    if class_axis == -1:  # token logits [..., V]: flattened, as language models do
        logits = logits.reshape(-1, logits.shape[-1])
    labels = torch.zeros(logits.shape[:1] + logits.shape[2:], dtype=torch.long)
    return F.cross_entropy(logits, labels)


def saved_activation_bytes(model, inputs, loss=None, details=None):
    """Bytes of the distinct storages autograd saves in one forward (+ loss) pass; see the module doc."""
    stored = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
    saved = {}

    def pack(t):
        if t.dim() > 0:
            st = t.storage()
            if st.data_ptr() not in stored:
                saved[st.data_ptr()] = st.nbytes()
                if details is not None:
                    details.setdefault(st.data_ptr(), (tuple(t.shape), str(t.dtype), type(t.grad_fn).__name__))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = model(*inputs)
        if loss is not None:
            loss(out)
    return sum(saved.values())


def export(model, inputs, input_names, path, opset=17, dynamic_axes=None):
    """The model as workloads/onnx's exports are: training mode, opset 17, weights without data."""
    f = io.BytesIO()
    torch.onnx.export(model, tuple(inputs), f, training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=opset, input_names=input_names,
                      output_names=["logits"], dynamic_axes=dynamic_axes)
    m = onnx.load_from_string(f.getvalue())
    for t in m.graph.initializer:
        t.ClearField("raw_data")
    m = onnx.shape_inference.infer_shapes(m)
    onnx.save(m, path)
    return m


def print_details(details):
    """The saved storages of one measurement: the autograd node that made each, its shape and type."""
    for shape, dtype, fn in details.values():
        print("   ", fn, shape, dtype)


def update_json(path, key, description, entries):
    """Merges measured entries into the reference file (other entries stay), sorted by name."""
    data = {key: {}}
    if os.path.exists(path):
        with open(path) as f:
            data = json.load(f)
    data["description"] = description
    data[key] = dict(sorted({**data.get(key, {}), **entries}.items()))
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
