#!/usr/bin/python3
"""Exports the reference models to workloads/onnx/ and measures them with PyTorch into
tests/data/pytorch_models.json (parameters, forward MACs, saved activation bytes; see measure.py).

    /usr/bin/python3 scripts/reference/pytorch_models.py [NAME ...] [--no-export]
    /usr/bin/python3 scripts/reference/pytorch_models.py --dynamic   # tests/data/bert_style_dynamic.onnx

Needs Debian's python3-torch, python3-torchvision and python3-onnx (torch 1.13, CPU).
"""
import os
import sys

import torch
import torchvision

import measure
from models import MODELS, make_inputs

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSON = os.path.join(ROOT, "tests", "data", "pytorch_models.json")

DESCRIPTION = (
    "Measured with scripts/reference/pytorch_models.py (PyTorch {torch}, torchvision {tv}, CPU, fp32, training "
    "mode). params_trainable: elements of trainable parameters. forward_macs: multiply-accumulates of "
    "convolutions (incl. transposed) and matrix products (mm, addmm, bmm, baddbmm: linear layers, attention, "
    "einsum) in one forward pass. saved_activation_bytes: the distinct storages of every tensor autograd saves "
    "for backward (saved_tensors_hooks) in forward + cross-entropy loss, without parameters, buffers and 0-dim "
    "tensors; CPU dropout masks are float (4 B per element). loss_class_axis: 1 = classes on axis 1 of "
    "[N, C, ...] logits (labels [N, ...]), -1 = token logits [..., V] flattened.")


def measure_model(name, export=True):
    family, build, spec, class_axis = MODELS[name]
    torch.manual_seed(0)
    model = build()
    model.train()
    inputs = make_inputs(spec)
    path = os.path.join("workloads", "onnx", name + ".onnx")
    if export:
        graph = measure.export(model, inputs, [n for n, _, _ in spec], os.path.join(ROOT, path)).graph
    details = {}
    entry = {
        "file": path,
        "family": family,
        "inputs": {n: list(s) for n, s, _ in spec},
        "loss_class_axis": class_axis,
        "params_trainable": measure.trainable_parameters(model),
        "forward_macs": measure.forward_macs(model, inputs),
        "saved_activation_bytes": measure.saved_activation_bytes(
            model, inputs, lambda out: measure.cross_entropy(out, class_axis), details),
    }
    if export:
        entry["onnx_nodes"] = len(graph.node)
    return entry, details


def export_dynamic():
    """bert_style with a symbolic batch and sequence length (tests/data/bert_style_dynamic.onnx): bound to 1 and
    128 it is the fixed export."""
    _, build, spec, _ = MODELS["bert_style"]
    torch.manual_seed(0)
    model = build()
    model.train()
    measure.export(model, make_inputs(spec), ["tokens"], os.path.join(ROOT, "tests", "data", "bert_style_dynamic.onnx"),
                   dynamic_axes={"tokens": {0: "batch", 1: "sequence"}, "logits": {0: "batch", 1: "sequence"}})


def main(argv):
    export = "--no-export" not in argv
    if export and "--dynamic" in argv:
        return export_dynamic()
    names = [a for a in argv if not a.startswith("--")] or list(MODELS)
    entries = {}
    for name in names:
        entry, details = measure_model(name, export)
        entries[name] = entry
        print(name, {k: v for k, v in entry.items() if k not in ("inputs",)}, flush=True)
        if "--details" in argv:
            measure.print_details(details)
    measure.update_json(JSON, "models", DESCRIPTION.format(torch=torch.__version__, tv=torchvision.__version__), entries)


if __name__ == "__main__":
    main(sys.argv[1:])
