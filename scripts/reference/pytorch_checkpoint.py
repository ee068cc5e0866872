#!/usr/bin/python3
"""Measures activation checkpointing with PyTorch into tests/data/pytorch_checkpoint.json: the bytes that stay
saved after the forward pass and the multiply-accumulates recomputed in the backward pass, for ResNet-18 (torchvision,
ImageNet 224x224, batch 1, training mode: the model of workloads/onnx/resnet18.onnx) under
torch.utils.checkpoint.checkpoint_sequential with 1, 2 and 4 segments and checkpoint(layerN, x) per top-level layer.

    /usr/bin/python3 scripts/reference/pytorch_checkpoint.py

The network is the nn.Sequential of the modules its forward calls, in order (conv1, bn1, relu, maxpool, layer1..4,
avgpool, Flatten, fc: 11 items; torch.flatten is the ONNX export's /Flatten), which is what monet sees as the
top-level items of resnet18.onnx.

Both checkpoint implementations of torch 1.13 are measured:
* reentrant (checkpoint_sequential itself): the region runs under no_grad and saves its input with
  save_for_backward, which saved_tensors_hooks see (the image needs requires_grad, else no gradient would reach
  the first segment's parameters: PyTorch's known pitfall; it changes no saved byte);
* non-reentrant (the same split, checkpoint(..., use_reentrant=False)): the region's saved tensors become empty
  holders; its input is kept by the recomputation closure, so it is added to the hooks' storages.
saved bytes: distinct storages, parameters, buffers and 0-dim tensors left out (as measure.py). recompute MACs:
convolutions and linear layers (module forward hooks) that run during loss.backward().
"""
import json
import os

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSON = os.path.join(ROOT, "tests", "data", "pytorch_checkpoint.json")


def resnet18_sequential():
    torch.manual_seed(0)
    m = torchvision.models.resnet18(weights=None)
    m.train()
    # Out-of-place ReLUs: the reentrant checkpoint refuses an in-place op on a region's (leaf) input, and an
    # in-place ReLU's output shares its input's storage, which no rule here saves twice: no saved byte changes.
    for mod in m.modules():
        if isinstance(mod, nn.ReLU):
            mod.inplace = False
    return nn.Sequential(m.conv1, m.bn1, m.relu, m.maxpool, m.layer1, m.layer2, m.layer3, m.layer4, m.avgpool,
                         nn.Flatten(1), m.fc)


class Measure:
    """Saved storages (saved_tensors_hooks) and MACs of convolutions and linear layers, by phase."""

    def __init__(self, model):
        self.stored = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
        self.saved = {}
        self.backward = False
        self.recompute_macs = 0
        for mod in model.modules():
            if isinstance(mod, (nn.Conv2d, nn.Linear)):
                mod.register_forward_hook(self.count)

    def count(self, mod, inputs, out):
        if not self.backward:
            return
        if isinstance(mod, nn.Conv2d):
            self.recompute_macs += out.numel() * mod.weight.shape[1] * mod.weight.shape[2] * mod.weight.shape[3]
        else:
            self.recompute_macs += out.numel() * mod.in_features

    def keep(self, t):
        if t.dim() > 0 and t.storage().data_ptr() not in self.stored:
            self.saved[t.storage().data_ptr()] = t.storage().nbytes()

    def pack(self, t):
        self.keep(t)
        return t


def run(kind, segments, modules=False):
    model = resnet18_sequential()
    meas = Measure(model)
    x = torch.randn(1, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    labels = torch.zeros(1, dtype=torch.long)
    if kind == "reentrant":
        x.requires_grad_(True)
    items = list(model.children())
    with torch.autograd.graph.saved_tensors_hooks(meas.pack, lambda t: t):
        if modules:  # checkpoint(layerN, x) for layer1..layer4
            h = x
            for i, f in enumerate(items):
                if 4 <= i <= 7:
                    if kind == "nonreentrant":
                        meas.keep(h)
                    h = checkpoint(f, h, use_reentrant=(kind == "reentrant"))
                else:
                    h = f(h)
            out = h
        elif kind == "reentrant":
            out = checkpoint_sequential(model, segments, x)
        else:  # checkpoint_sequential's split with the non-reentrant checkpoint
            size = len(items) // segments
            h, end = x, -1
            for start in range(0, size * (segments - 1), size):
                end = start + size - 1
                fs = items[start:end + 1]
                meas.keep(h)
                h = checkpoint(lambda y, fs=fs: nn.Sequential(*fs)(y), h, use_reentrant=False)
            for f in items[end + 1:]:
                h = f(h)
            out = h
        loss = F.cross_entropy(out, labels)
    meas.backward = True
    loss.backward()
    return {"saved_activation_bytes": sum(meas.saved.values()), "recompute_macs": meas.recompute_macs}


def main():
    cases = {}
    for kind in ("reentrant", "nonreentrant"):
        for k in (1, 2, 4):
            cases.setdefault("segments=%d" % k, {})[kind] = run(kind, k)
        cases.setdefault("modules=layer*", {})[kind] = run(kind, 0, modules=True)
    data = {
        "description": (
            "Measured with scripts/reference/pytorch_checkpoint.py (PyTorch %s, torchvision %s, CPU, fp32): "
            "torchvision resnet18, input [1, 3, 224, 224], training mode, cross-entropy loss, under "
            "checkpoint_sequential (segments=K) or checkpoint(layerN, x) (modules=layer*), with the reentrant and "
            "the non-reentrant checkpoint. saved_activation_bytes: distinct storages kept after the forward pass "
            "(incl. the image and the labels; parameters, buffers and 0-dim tensors left out). recompute_macs: "
            "convolution and linear MACs run again during backward." % (torch.__version__, torchvision.__version__)),
        "model": "workloads/onnx/resnet18.onnx",
        "cases": cases,
    }
    with open(JSON, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(json.dumps(cases, indent=1))


if __name__ == "__main__":
    main()
