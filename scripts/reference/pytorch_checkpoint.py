#!/usr/bin/python3
"""Measures activation checkpointing with PyTorch into tests/data/pytorch_checkpoint.json, for the models monet
reads from workloads/onnx/: ResNet-18 (torchvision, ImageNet 224x224, training mode; resnet18.onnx) at batch 1 and 2
under torch.utils.checkpoint.checkpoint_sequential (segments = K) and checkpoint(layerN, x) per top-level layer, and
a 4-layer nanoGPT (d = 512, T = 256, 8 heads; exported here as nanogpt_L4_d512_T256.onnx) with checkpoint(block, x)
per block.

    /usr/bin/python3 scripts/reference/pytorch_checkpoint.py [--no-export]

ResNet-18 is the nn.Sequential of the modules its forward calls, in order (conv1, bn1, relu, maxpool, layer1..4,
avgpool, Flatten, fc: 11 items; torch.flatten is the ONNX export's /Flatten), which is what monet sees as the
top-level items of resnet18.onnx.

Both checkpoint implementations of torch 1.13 are measured. In both, a checkpointed function runs again WHOLE in
the backward pass (1.13 has no early stop):
* reentrant (checkpoint_sequential itself): the region runs under no_grad and saves its input with
  save_for_backward; in backward it runs again with grad and its backward runs at once (the image needs
  requires_grad, else no gradient would reach the first segment's parameters: PyTorch's known pitfall; it changes
  no saved byte);
* non-reentrant (checkpoint(..., use_reentrant=False)): the region's saved tensors become empty holders; its input
  is kept by the recomputation closure; the first unpack of a holder reruns the function and keeps a detached copy
  of every tensor it saves, each freed as soon as the node that saved it has run.

Figures, per case:
* saved_activation_bytes: distinct storages kept after the forward pass (incl. the image and the labels;
  parameters, buffers and 0-dim tensors left out, as measure.py);
* recompute_macs: convolution and matrix-product MACs (module forward hooks: Conv2d, Linear, the attention's two
  products) that run during loss.backward();
* backward_peak_bytes: the largest sum of distinct live saved storages at any time of loss.backward(): what the
  forward pass saved until the node that saved it has run, plus what recomputation saves (reentrant: through the
  same hooks; non-reentrant: its stored copies), plus non-reentrant regions' inputs while their closure lives.
"""
import json
import os
import sys
import weakref

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.utils.checkpoint as tuc
import torchvision
from torch.utils.checkpoint import checkpoint, checkpoint_sequential

sys.path.insert(0, os.path.dirname(__file__))
import measure  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSON = os.path.join(ROOT, "tests", "data", "pytorch_checkpoint.json")
GPT_ONNX = os.path.join("workloads", "onnx", "nanogpt_L4_d512_T256.onnx")


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


class MatMul(nn.Module):
    """a @ b as a module, so that a forward hook counts the attention's products (the export is torch.matmul's)."""

    def forward(self, a, b):
        return a @ b


class Block(nn.Module):
    """A pre-LayerNorm GPT block as nanoGPT writes it: packed q/k/v projection, causal softmax attention, GELU MLP."""

    def __init__(self, d, heads, T):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(d)
        self.c_attn = nn.Linear(d, 3 * d)
        self.scores = MatMul()
        self.mix = MatMul()
        self.c_proj = nn.Linear(d, d)
        self.ln_2 = nn.LayerNorm(d)
        self.c_fc = nn.Linear(d, 4 * d)
        self.gelu = nn.GELU()
        self.mlp_proj = nn.Linear(4 * d, d)
        self.register_buffer("mask", torch.tril(torch.ones(T, T, dtype=torch.bool)).view(1, 1, T, T))

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(C, dim=2)
        q = q.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        k = k.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        v = v.view(B, T, self.heads, C // self.heads).transpose(1, 2)
        att = self.scores(q, k.transpose(-2, -1)) * (1.0 / (C // self.heads) ** 0.5)
        att = F.softmax(att.masked_fill(~self.mask[:, :, :T, :T], float("-inf")), dim=-1)
        y = self.mix(att, v).transpose(1, 2).contiguous().view(B, T, C)
        x = x + self.c_proj(y)
        return x + self.mlp_proj(self.gelu(self.c_fc(self.ln_2(x))))


class NanoGpt(nn.Module):
    def __init__(self, vocab=1024, d=512, layers=4, heads=8, T=256):
        super().__init__()
        self.wte = nn.Embedding(vocab, d)
        self.wpe = nn.Embedding(T, d)
        self.blocks = nn.ModuleList([Block(d, heads, T) for _ in range(layers)])
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.checkpoint = None  # None, "reentrant" or "nonreentrant": checkpoint(block, x) per block

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]).unsqueeze(0))
        for b in self.blocks:
            x = b(x) if self.checkpoint is None else checkpoint(b, x, use_reentrant=self.checkpoint == "reentrant")
        return self.head(self.ln_f(x))


def nanogpt():
    torch.manual_seed(0)
    m = NanoGpt()
    m.train()
    return m


class Measure:
    """Live saved storages (saved_tensors_hooks, counted once per storage while any holder lives) and the MACs of
    convolutions, linear layers and attention products run in the backward pass."""

    def __init__(self, model):
        self.stored = {t.storage().data_ptr() for t in list(model.parameters()) + list(model.buffers())}
        self.refs = {}   # storage -> live holders
        self.size = {}   # storage -> bytes
        self.live = 0
        self.peak = 0
        self.backward = False
        self.recompute_macs = 0
        ACTIVE[0] = self
        for mod in model.modules():
            if isinstance(mod, (nn.Conv2d, nn.Linear, MatMul)):
                mod.register_forward_hook(self.count)

    def count(self, mod, inputs, out):
        if not self.backward:
            return
        if isinstance(mod, nn.Conv2d):
            self.recompute_macs += out.numel() * mod.weight.shape[1] * mod.weight.shape[2] * mod.weight.shape[3]
        elif isinstance(mod, nn.Linear):
            self.recompute_macs += out.numel() * mod.in_features
        else:
            self.recompute_macs += out.numel() * inputs[0].shape[-1]

    def hold(self, t, owner):
        """Counts t's storage while `owner` lives."""
        if t.dim() == 0:
            return
        ptr = t.storage().data_ptr()
        if ptr in self.stored:
            return
        self.size[ptr] = t.storage().nbytes()
        self.refs[ptr] = self.refs.get(ptr, 0) + 1
        if self.refs[ptr] == 1:
            self.live += self.size[ptr]
            self.peak = max(self.peak, self.live)
        weakref.finalize(owner, self.release, ptr)

    def release(self, ptr):
        self.refs[ptr] -= 1
        if self.refs[ptr] == 0:
            self.live -= self.size[ptr]

    def pack(self, t):
        holder = Held(t)
        self.hold(t, holder)
        return holder


class Held:
    def __init__(self, t):
        self.t = t


ACTIVE = [None]  # the Measure of the run in progress


class Stored(weakref.WeakKeyDictionary):
    """The non-reentrant checkpoint keeps the copies it recomputes in a WeakKeyDictionary keyed by each
    SavedVariable's holder: each copy is counted until its holder dies."""

    def __setitem__(self, holder, value):
        ACTIVE[0].hold(value, holder)
        super().__setitem__(holder, value)


class WeakrefWithStored:
    WeakKeyDictionary = Stored
    ref = weakref.ref


tuc.weakref = WeakrefWithStored


def region_input(meas, h, kind):
    """A non-reentrant region's input, kept by its recomputation closure (the tensor object dies with it)."""
    if kind == "nonreentrant":
        meas.hold(h, h)


def run_resnet(kind, batch, segments, modules=False):
    model = resnet18_sequential()
    meas = Measure(model)
    x = torch.randn(batch, 3, 224, 224, generator=torch.Generator().manual_seed(0))
    labels = torch.zeros(batch, dtype=torch.long)
    if kind == "reentrant":
        x.requires_grad_(True)
    items = list(model.children())
    with torch.autograd.graph.saved_tensors_hooks(meas.pack, lambda p: p.t):
        if modules:  # checkpoint(layerN, x) for layer1..layer4
            h = x
            for i, f in enumerate(items):
                if 4 <= i <= 7:
                    region_input(meas, h, kind)
                    h = checkpoint(f, h, use_reentrant=(kind == "reentrant"))
                else:
                    h = f(h)
            out = h
        elif kind == "reentrant" or segments == 1:
            out = checkpoint_sequential(model, segments, x)
        else:  # checkpoint_sequential's split with the non-reentrant checkpoint
            size = len(items) // segments
            h, end = x, -1
            for start in range(0, size * (segments - 1), size):
                end = start + size - 1
                fs = items[start:end + 1]
                region_input(meas, h, kind)
                h = checkpoint(lambda y, fs=fs: nn.Sequential(*fs)(y), h, use_reentrant=False)
            for f in items[end + 1:]:
                h = f(h)
            out = h
        loss = F.cross_entropy(out, labels)
    return finish(meas, loss)


def run_gpt(kind):
    model = nanogpt()
    model.checkpoint = kind
    meas = Measure(model)
    ids = torch.zeros(1, 256, dtype=torch.long)
    blocks = model.blocks
    if kind == "nonreentrant":  # each block's input, kept by its closure
        for b in blocks:
            b.register_forward_pre_hook(lambda mod, args: region_input(meas, args[0], kind))
    with torch.autograd.graph.saved_tensors_hooks(meas.pack, lambda p: p.t):
        loss = measure.cross_entropy(model(ids), -1)
    return finish(meas, loss)


def finish(meas, loss):
    """Saved bytes after forward, then the backward pass under the same hooks (the reentrant recomputation saves
    through them). The image and the labels count while the nodes that saved them live, as any saved tensor."""
    saved = meas.live
    meas.peak = saved
    meas.backward = True
    with torch.autograd.graph.saved_tensors_hooks(meas.pack, lambda p: p.t):
        loss.backward()
    return {"saved_activation_bytes": saved, "recompute_macs": meas.recompute_macs, "backward_peak_bytes": meas.peak}


def main(argv):
    models = {}
    kinds = ("reentrant", "nonreentrant")

    for batch, policies in ((1, ("segments=1", "segments=2", "segments=4", "modules=layer*")),
                            (2, ("segments=2", "segments=8"))):
        cases = {}
        for policy in policies:
            for kind in kinds:
                if policy.startswith("segments"):
                    r = run_resnet(kind, batch, int(policy.split("=")[1]))
                else:
                    r = run_resnet(kind, batch, 0, modules=True)
                cases.setdefault(policy, {})[kind] = r
        models["resnet18_b%d" % batch] = {"file": "workloads/onnx/resnet18.onnx", "batch": batch, "cases": cases}
    cases = {"modules=blocks.*": {kind: run_gpt(kind) for kind in kinds}}
    models["nanogpt_L4_d512_T256"] = {"file": GPT_ONNX, "batch": 1, "cases": cases}
    if "--no-export" not in argv:
        m = nanogpt()
        measure.export(m, [torch.zeros(1, 256, dtype=torch.long)], ["tokens"], os.path.join(ROOT, GPT_ONNX))
    data = {
        "description": (
            "Measured with scripts/reference/pytorch_checkpoint.py (PyTorch %s, torchvision %s, CPU, fp32, training "
            "mode, cross-entropy loss; see the script for what each figure counts): ResNet-18 under "
            "checkpoint_sequential (segments=K) or checkpoint(layerN, x) (modules=layer*), a 4-layer nanoGPT under "
            "checkpoint(block, x) (modules=blocks.*), with the reentrant and the non-reentrant checkpoint."
            % (torch.__version__, torchvision.__version__)),
        "models": models,
    }
    with open(JSON, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    print(json.dumps(models, indent=1))


if __name__ == "__main__":
    main(sys.argv[1:])
