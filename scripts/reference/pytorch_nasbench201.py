#!/usr/bin/python3
"""Measures NAS-Bench-201 networks (Dong & Yang, ICLR 2020) with PyTorch into tests/data/pytorch_nasbench201.json:
the independent reference for monet's `nasbench201` workload generator (docs/workloads.md#nas-bench-201).

    /usr/bin/python3 scripts/reference/pytorch_nasbench201.py

The modules are NAS-Bench-201's own (D-X-Y/AutoDL-Projects, xautodl/models/cell_infers/tiny_network.py TinyNetwork,
cells.py InferCell, cell_operations.py ReLUConvBN / POOLING / ResNetBasicblock / Zero / Identity), written out here
with the same module names: stem.{0,1}, cells.{0..16} (cells.5 and cells.11 the ResNet reduction blocks), a cell's
edges as cells.k.layers.e in the order of the architecture string, lastact.{0,1}, global_pooling, classifier;
`none` is the benchmark's Zero, x.mul(0.), and a node is Python's sum() of its edges, as in InferCell. (monet's
generator leaves out the Zeros that connect nothing — out of a node that reaches the output otherwise, into a node
with other inputs —: a multiply by a scalar saves nothing for the backward pass and counts no MAC.)

Measured per sampled cell (training mode, fp32, CPU, batch BATCH, CIFAR-10's 3 x 32 x 32), all exact integers:
trainable parameters, forward MACs (convolutions and the classifier, measure.MacCounter), the MACs of loss.backward()
(convolution_backward's input and weight gradients as its output_mask asks for them, the classifier's two mm: BackwardMacs)
and saved activation bytes (measure.saved_activation_bytes: saved_tensors_hooks, distinct storages, forward +
cross-entropy loss).
"""
import csv
import os

import torch
import torch.nn as nn
from torch.utils._python_dispatch import TorchDispatchMode

import measure

aten = torch.ops.aten

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSON = os.path.join(ROOT, "tests", "data", "pytorch_nasbench201.json")
CSV = os.path.join(ROOT, "workloads", "nasbench201", "accuracy_cifar10.csv")
BATCH = 2
# Benchmark indices: the best cell (6111), all skip_connect (1835), cells with `none` edges (3: node 1, an
# avg_pool, reaches nothing; 9497: node 1 has no incoming edge, a zero tensor; 15605: node 1, a conv 3x3, reaches
# nothing, yet runs and saves its tensors), all nor_conv_3x3 (1462: the costliest) and a mix (0).
SAMPLES = ["6111", "1835", "3", "9497", "15605", "1462", "0"]


class ReLUConvBN(nn.Module):
    def __init__(self, c_in, c_out, kernel, stride, padding):
        super().__init__()
        self.op = nn.Sequential(nn.ReLU(inplace=False),
                                nn.Conv2d(c_in, c_out, kernel, stride=stride, padding=padding, bias=False),
                                nn.BatchNorm2d(c_out))

    def forward(self, x):
        return self.op(x)


class Pooling(nn.Module):  # cell_operations.POOLING with C_in == C_out: no preprocess
    def __init__(self):
        super().__init__()
        self.op = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)

    def forward(self, x):
        return self.op(x)


def edge_op(name, c):
    return {"skip_connect": lambda: nn.Identity(),
            "nor_conv_1x1": lambda: ReLUConvBN(c, c, 1, 1, 0),
            "nor_conv_3x3": lambda: ReLUConvBN(c, c, 3, 1, 1),
            "avg_pool_3x3": lambda: Pooling()}[name]()


def parse(arch):
    """[[(op, from), ...] for nodes 1, 2, 3] of an architecture string."""
    return [[(e.split("~")[0], int(e.split("~")[1])) for e in g.strip("|").split("|")] for g in arch.split("+")]


class Zero(nn.Module):  # cell_operations.Zero with C_in == C_out, stride 1
    def forward(self, x):
        return x.mul(0.)


class InferCell(nn.Module):
    def __init__(self, arch, c):
        super().__init__()
        self.layers = nn.ModuleList()
        self.edges = []  # (node, from, layer index)
        for j, group in enumerate(parse(arch), start=1):
            for op, i in group:
                self.edges.append((j, i, len(self.layers)))
                self.layers.append(Zero() if op == "none" else edge_op(op, c))

    def forward(self, x):
        nodes = [x]
        for j in (1, 2, 3):
            nodes.append(sum(self.layers[k](nodes[i]) for (n, i, k) in self.edges if n == j))
        return nodes[3]


class ResNetBasicblock(nn.Module):
    def __init__(self, c_in, c_out):
        super().__init__()
        self.conv_a = ReLUConvBN(c_in, c_out, 3, 2, 1)
        self.conv_b = ReLUConvBN(c_out, c_out, 3, 1, 1)
        self.downsample = nn.Sequential(nn.AvgPool2d(kernel_size=2, stride=2, padding=0),
                                        nn.Conv2d(c_in, c_out, kernel_size=1, stride=1, padding=0, bias=False))

    def forward(self, x):
        return self.downsample(x) + self.conv_b(self.conv_a(x))


class TinyNetwork(nn.Module):
    def __init__(self, arch, c=16, n=5, classes=10):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, c, kernel_size=3, padding=1, bias=False), nn.BatchNorm2d(c))
        channels = [c] * n + [2 * c] + [2 * c] * n + [4 * c] + [4 * c] * n
        reductions = [False] * n + [True] + [False] * n + [True] + [False] * n
        self.cells = nn.ModuleList()
        prev = c
        for cur, red in zip(channels, reductions):
            self.cells.append(ResNetBasicblock(prev, cur) if red else InferCell(arch, cur))
            prev = cur
        self.lastact = nn.Sequential(nn.BatchNorm2d(prev), nn.ReLU(inplace=True))
        self.global_pooling = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Linear(prev, classes)

    def forward(self, x):
        f = self.stem(x)
        for cell in self.cells:
            f = cell(f)
        out = self.global_pooling(self.lastact(f))
        return self.classifier(out.view(out.size(0), -1))


class BackwardMacs(TorchDispatchMode):
    """MACs of the input (dx) and weight (dw) gradients of convolutions and matrix products in a backward pass."""

    def __init__(self, weight_shapes):
        super().__init__()
        self.weight_shapes = weight_shapes
        self.dx = self.dw = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        p = func.overloadpacket
        if p is aten.convolution_backward:
            grad, w, mask = args[0], args[2], args[10]
            taps = 1
            for d in w.shape[2:]:
                taps *= d
            macs = grad.numel() * w.shape[1] * taps
            self.dx += macs if mask[0] else 0
            self.dw += macs if mask[1] else 0
        elif p is aten.mm:
            a, b = args[0], args[1]
            macs = a.shape[0] * a.shape[1] * b.shape[1]
            if tuple(out.shape) in self.weight_shapes:
                self.dw += macs
            else:
                self.dx += macs
        return out


def backward_macs(model, x):
    loss = measure.cross_entropy(model(x), 1)
    counter = BackwardMacs({tuple(p.shape) for p in model.parameters() if p.dim() == 2})
    with counter:
        loss.backward()
    return counter.dx, counter.dw


def main():
    with open(CSV) as f:
        archs = {row["index"]: row["arch"] for row in csv.DictReader(f)}
    torch.manual_seed(0)
    entries = {}
    for key in SAMPLES:
        arch = archs[key]
        model = TinyNetwork(arch).train()
        x = torch.randn(BATCH, 3, 32, 32)
        macs = measure.forward_macs(model, [x])
        saved = measure.saved_activation_bytes(model, [x], lambda out: measure.cross_entropy(out, 1))
        dx, dw = backward_macs(model, x)
        entries[key] = {"arch": arch, "batch": BATCH, "params_trainable": measure.trainable_parameters(model),
                        "forward_macs": macs, "backward_dx_macs": dx, "backward_dw_macs": dw,
                        "saved_activation_bytes": saved}
        print(key, entries[key])
    measure.update_json(JSON, "cells", "NAS-Bench-201 networks measured by scripts/reference/pytorch_nasbench201.py "
                        "(torch " + torch.__version__ + ", training mode, fp32, CIFAR-10 input 3x32x32)", entries)


if __name__ == "__main__":
    main()
