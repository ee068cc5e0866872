#!/usr/bin/python3
"""One small module per saved-activation rule: exported to tests/data/pytorch_ops/<name>.onnx and measured
like the models (measure.py) into tests/data/pytorch_ops.json. Each module makes its input require grad
(x + a parameter) so that autograd saves what the operator under test needs.

    /usr/bin/python3 scripts/reference/pytorch_ops.py [NAME ...]
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision

import measure

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "tests", "data", "pytorch_ops")
JSON = os.path.join(ROOT, "tests", "data", "pytorch_ops.json")


class Op(nn.Module):
    """fn(x + p): the input of fn requires grad; `layers` are sub-modules fn may use."""

    def __init__(self, shape, fn, **layers):
        super().__init__()
        self.p = nn.Parameter(torch.zeros(shape[1:]))
        self.fn = fn
        for k, v in layers.items():
            setattr(self, k, v)

    def forward(self, x):
        return self.fn(self, x + self.p)


def op(shape, fn, **layers):
    return lambda: (Op(shape, fn, **layers), [torch.randn(shape)])


def mod(module, *shapes, long=False):
    return lambda: (module, [torch.randint(0, 50, s) if long else torch.randn(s) for s in shapes])


V = (2, 8, 16)        # [batch, tokens, features]
I = (2, 4, 8, 8)      # NCHW
L1 = (2, 4, 32)       # NCL
D3 = (1, 2, 4, 8, 8)  # NCDHW


def attention_qkv_split(s, x):  # nanoGPT: split + view (views of the packed projection)
    B, T, C = x.shape
    q, k, v = s.qkv(x).split(C, dim=2)
    q, k, v = (t.view(B, T, 2, C // 2).transpose(1, 2) for t in (q, k, v))
    att = F.softmax((q @ k.transpose(-2, -1)) / math.sqrt(C // 2), dim=-1)
    return (att @ v).transpose(1, 2).reshape(B, T, C)


OPS = {
    # activations
    "relu": op(V, lambda s, x: F.relu(x)),
    "leaky_relu": op(V, lambda s, x: F.leaky_relu(x, 0.1)),
    "prelu": op(I, lambda s, x: s.a(x), a=nn.PReLU(4)),
    "elu": op(V, lambda s, x: F.elu(x)),
    "selu": op(V, lambda s, x: F.selu(x)),
    "celu": op(V, lambda s, x: F.celu(x)),
    "relu6": op(V, lambda s, x: F.relu6(x)),
    "clamp": op(V, lambda s, x: torch.clamp(x, -1, 2)),
    "sigmoid": op(V, lambda s, x: torch.sigmoid(x)),
    "tanh": op(V, lambda s, x: torch.tanh(x)),
    "hardsigmoid": op(V, lambda s, x: F.hardsigmoid(x)),
    "hardswish": op(V, lambda s, x: F.hardswish(x)),
    "softplus": op(V, lambda s, x: F.softplus(x)),
    "gelu": op(V, lambda s, x: F.gelu(x)),
    "gelu_tanh": op(V, lambda s, x: F.gelu(x, approximate="tanh")),
    "silu": op(V, lambda s, x: F.silu(x)),
    "mish": op(V, lambda s, x: F.mish(x)),
    "swiglu": op(V, lambda s, x: F.silu(s.w1(x)) * s.w3(x), w1=nn.Linear(16, 16), w3=nn.Linear(16, 16)),
    # pointwise math
    "exp": op(V, lambda s, x: torch.exp(x)),
    "log": op(V, lambda s, x: torch.log(x.abs() + 1)),
    "sqrt": op(V, lambda s, x: torch.sqrt(x.abs() + 1)),
    "rsqrt": op(V, lambda s, x: torch.rsqrt(x.abs() + 1)),
    "reciprocal": op(V, lambda s, x: torch.reciprocal(x.abs() + 1)),
    "neg": op(V, lambda s, x: -x),
    "pow2": op(V, lambda s, x: x.pow(2)),
    "pow3": op(V, lambda s, x: x ** 3),
    "sin_cos": op(V, lambda s, x: torch.sin(x) + torch.cos(x)),
    "erf": op(V, lambda s, x: torch.erf(x)),
    "mul_scalar": op(V, lambda s, x: x * 3.0),
    "mul_param": op(V, lambda s, x: x * s.g, g=nn.Parameter(torch.ones(16))),
    "mul_tensors": op(V, lambda s, x: x * x.flip(0)),
    "div_tensors": op(V, lambda s, x: x / (x.flip(0).abs() + 1)),
    "add_broadcast": op(V, lambda s, x: x + x[:, :1]),
    "sub": op(V, lambda s, x: x - x.flip(0)),
    "maximum": op(V, lambda s, x: torch.maximum(x, x.flip(0))),
    "masked_fill": op(V, lambda s, x: x.masked_fill(torch.ones(8, 16).tril().bool(), 0.0)),
    "where": op(V, lambda s, x: torch.where(x > 0, x, x * 2)),
    "cumsum": op(V, lambda s, x: x.cumsum(1)),
    "tril": op(V, lambda s, x: x.tril()),
    # dropout (CPU: float masks)
    "dropout": op(V, lambda s, x: F.dropout(x, 0.1, True)),
    "dropout_p0": op(V, lambda s, x: F.dropout(x, 0.0, True) * 1.0),
    "stochastic_depth": op(I, lambda s, x: torchvision.ops.stochastic_depth(x, 0.2, "row", True)),
    # normalization
    "layer_norm": op(V, lambda s, x: s.n(x), n=nn.LayerNorm(16)),
    "batch_norm_1d": op(L1, lambda s, x: s.n(x), n=nn.BatchNorm1d(4)),
    "batch_norm_2d": op(I, lambda s, x: s.n(x), n=nn.BatchNorm2d(4)),
    "batch_norm_3d": op(D3, lambda s, x: s.n(x), n=nn.BatchNorm3d(2)),
    "group_norm": op(I, lambda s, x: s.n(x), n=nn.GroupNorm(2, 4)),
    "instance_norm": op(I, lambda s, x: s.n(x), n=nn.InstanceNorm2d(4, affine=True)),
    "rms_norm": op(V, lambda s, x: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * s.w,
                   w=nn.Parameter(torch.ones(16))),
    # (x + p) added right before a softmax would be read as an attention mask: scale it instead
    "softmax": op(V, lambda s, x: F.softmax(x * 2.0, -1)),
    "log_softmax": op(V, lambda s, x: F.log_softmax(x, -1)),
    # matrix products
    "linear_2d": op((4, 16), lambda s, x: s.l(x), l=nn.Linear(16, 8)),
    "linear_3d": op(V, lambda s, x: s.l(x), l=nn.Linear(16, 8)),
    "linear_transposed_input": op(V, lambda s, x: s.l(x.transpose(1, 2)), l=nn.Linear(8, 8)),
    "matmul_batched": op(V, lambda s, x: x @ x.transpose(1, 2)),
    "matmul_4d_permuted": op((2, 8, 3, 4, 4), lambda s, x: x.permute(2, 0, 3, 1, 4)[0] @ x.permute(2, 0, 3, 4, 1)[1]),
    "einsum_attention": op((2, 2, 8, 4), lambda s, x: torch.einsum("bhqd,bhkd->bhqk", x, x * 2)),
    "einsum_weight": op(V, lambda s, x: torch.einsum("btc,dc->btd", x, s.w), w=nn.Parameter(torch.randn(4, 16))),
    "qkv_split_view": op(V, attention_qkv_split, qkv=nn.Linear(16, 48)),
    "multihead_attention": op(V, lambda s, x: s.a(x, x, x, need_weights=False)[0],
                              a=nn.MultiheadAttention(16, 2, batch_first=True)),
    "multihead_cross_attention": op(V, lambda s, x: s.a(x, x.flip(1), x.flip(1), need_weights=False)[0],
                                    a=nn.MultiheadAttention(16, 2, dropout=0.1, batch_first=True)),
    # convolutions and pooling
    "conv1d": op(L1, lambda s, x: s.c(x), c=nn.Conv1d(4, 6, 5, stride=2, padding=1)),
    "conv2d_grouped_dilated": op(I, lambda s, x: s.c(x), c=nn.Conv2d(4, 8, 3, stride=2, padding=2, dilation=2, groups=2)),
    "conv3d": op(D3, lambda s, x: s.c(x), c=nn.Conv3d(2, 4, 3, stride=(1, 2, 2), padding=1)),
    "conv_transpose1d": op(L1, lambda s, x: s.c(x), c=nn.ConvTranspose1d(4, 3, 4, stride=2, padding=1)),
    "conv_transpose2d": op(I, lambda s, x: s.c(x), c=nn.ConvTranspose2d(4, 2, 2, stride=2)),
    "conv_transpose2d_padded": op(I, lambda s, x: s.c(x),
                                  c=nn.ConvTranspose2d(4, 4, 3, stride=2, padding=1, output_padding=1, groups=2)),
    "conv_transpose3d": op(D3, lambda s, x: s.c(x), c=nn.ConvTranspose3d(2, 2, 2, stride=2)),
    "max_pool1d": op(L1, lambda s, x: F.max_pool1d(x, 3, 2)),
    "max_pool2d": op(I, lambda s, x: F.max_pool2d(x, 3, 2, 1)),
    "max_pool3d": op(D3, lambda s, x: F.max_pool3d(x, 2)),
    "avg_pool1d": op(L1, lambda s, x: F.avg_pool1d(x, 4)),
    "avg_pool2d": op(I, lambda s, x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False)),
    "avg_pool3d": op(D3, lambda s, x: F.avg_pool3d(x, 2)),
    # count_include_pad (the default) with padding: exported as a zero Pad and an unpadded AveragePool; autograd
    # saves the unpadded input, here also the product's operand (Inception v3's pooling branches)
    "avg_pool2d_include_pad": op(I, lambda s, x: F.avg_pool2d(x, 3, 2, 1)),
    "avg_pool2d_include_pad_shared": op(I, lambda s, x: F.avg_pool2d(x, 3, 1, 1) * x),
    # a pad of the model's own that another operator reads too: the padded tensor is what is saved
    "pad_then_avg_pool": op(I, lambda s, x: (lambda p: F.avg_pool2d(p, 3, 1, count_include_pad=False) *
                                                       p[..., 1:-1, 1:-1])(F.pad(x, (1, 1, 1, 1)))),
    "adaptive_avg_pool": op(I, lambda s, x: F.adaptive_avg_pool2d(x, 1)),
    "mean_spatial": op(I, lambda s, x: x.mean([2, 3])),
    # reductions
    "sum_dim": op(V, lambda s, x: x.sum(-1, keepdim=True) * x),
    "amax": op(V, lambda s, x: x.amax(-1, keepdim=True) * x),
    "norm": op(V, lambda s, x: x.norm(dim=-1, keepdim=True) * x),
    "logsumexp": op(V, lambda s, x: x.logsumexp(-1, keepdim=True) * x),
    # data movement
    "pad_constant": op(I, lambda s, x: F.pad(x, (1, 2, 0, 3))),
    "pad_reflect": op(I, lambda s, x: F.pad(x, (1, 1, 2, 2), mode="reflect")),
    "interpolate_nearest": op(I, lambda s, x: F.interpolate(x, scale_factor=2, mode="nearest")),
    "interpolate_bilinear": op(I, lambda s, x: F.interpolate(x, size=(12, 12), mode="bilinear", align_corners=False)),
    "repeat": op(V, lambda s, x: x.repeat(1, 2, 1)),
    "expand": op((2, 1, 16), lambda s, x: x.expand(2, 8, 16) * 1.0),
    "concat": op(V, lambda s, x: torch.cat((x, x * 2), dim=1)),
    "open_slice": op(V, lambda s, x: torch.cat((-x[..., 8:], x[..., :8]), dim=-1)),
    "transpose_reshape": op(V, lambda s, x: x.transpose(1, 2).reshape(2, 128) @ s.w, w=nn.Parameter(torch.randn(128, 4))),
    "chunk_contiguous": op(V, lambda s, x: x.chunk(2, dim=-1)[1].contiguous().view(2, 64) * 2),
    "index_select": op(V, lambda s, x: x[:, torch.tensor([0, 2, 5])]),
    "pixel_shuffle": op((2, 8, 4, 4), lambda s, x: F.pixel_shuffle(x, 2)),
    # older opsets: LayerNorm decomposed (before 17), HardSwish as x·HardSigmoid(x) (before 14), axes and split
    # sizes as inputs (13)
    "layer_norm_opset13": op(V, lambda s, x: s.n(x), n=nn.LayerNorm(16)),
    "hardswish_opset13": op(V, lambda s, x: F.hardswish(x)),
    "sum_dim_opset13": op(V, lambda s, x: x.sum(-1, keepdim=True) * x),
    "qkv_split_view_opset13": op(V, attention_qkv_split, qkv=nn.Linear(16, 48)),
    "multihead_attention_opset13": op(V, lambda s, x: s.a(x, x, x, need_weights=False)[0],
                                      a=nn.MultiheadAttention(16, 2, batch_first=True)),
    # embeddings
    "embedding_ids": mod(nn.Embedding(50, 16), (2, 8), long=True),
    "embedding_positions": op(V, lambda s, x: x + s.e(torch.arange(8)), e=nn.Embedding(8, 16)),
}


def main(argv):
    names = [a for a in argv if not a.startswith("--")] or list(OPS)
    description = (
        "One small module per saved-activation rule, made by scripts/reference/pytorch_ops.py (PyTorch {}, CPU, "
        "fp32, training mode; opset 17 unless the name says otherwise); measured as the models are (see "
        "pytorch_models.json), loss included: cross-entropy on the output (classes on axis 1 from rank 4 on, else "
        "the last axis).").format(torch.__version__)
    entries = {}
    for name in names:
        torch.manual_seed(0)
        model, inputs = OPS[name]()
        model.train()
        out = model(*inputs)
        class_axis = 1 if out.dim() >= 4 else -1
        path = os.path.join("tests", "data", "pytorch_ops", name + ".onnx")
        opset = int(name.rsplit("_opset", 1)[1]) if "_opset" in name else 17
        measure.export(model, inputs, ["input"], os.path.join(ROOT, path), opset)
        details = {}
        entries[name] = {
            "file": path,
            "params_trainable": measure.trainable_parameters(model),
            "forward_macs": measure.forward_macs(model, inputs),
            "saved_activation_bytes": measure.saved_activation_bytes(
                model, inputs, lambda o: measure.cross_entropy(o, class_axis), details),
        }
        print(name, entries[name]["saved_activation_bytes"], flush=True)
        if "--details" in argv:
            measure.print_details(details)
    measure.update_json(JSON, "ops", description, entries)


if __name__ == "__main__":
    main(sys.argv[1:])
