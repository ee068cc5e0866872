"""Export tiny networks whose modules are called several times, to see how PyTorch's ONNX exporter names the
operators of each call (monet's module tree reads its modules, and the calls of a shared module, from these names;
docs/training.md "Modules called several times").

    /usr/bin/python3 scripts/reference/module_calls.py --out tests/data/module_calls
    /usr/bin/python3 scripts/reference/module_calls.py --one-module-per-name build/bin/monet \
        tests/data/gpt2_monet_small_one_module_per_name.toml

Writes NAME.onnx (tiny: d = 4) and NAME.txt (one line per ONNX node: name and op type, Constants left out) for:
  - shared3:      a layer applied 3 times (shared weights, as MONET's small GPT-2 applies its layer 4 times); the
                  layer has direct operators, a child `fc` and a child `attn` with direct operators and a
                  grandchild `q` (two levels deep).
  - once_twice:   a block called once whose child `lin` is called twice (must stay one call of `blk` holding
                  two calls of `lin`).
  - shared2_twice: a block called twice whose child `lin` is called twice in each call (4 calls of `lin`).
  - wrapper2:     a block without operators of its own (its forward only calls `lin`) called twice: its calls
                  leave no name of their own.
  - suffix_names: a block with attributes `conv` and `conv_1` called twice: conv's second call and conv_1's first
                  get the same scope name "a/conv_1" (the export itself is ambiguous; not read back by monet).
Debian's PyTorch 1.13, opset 17, training mode (as scripts/reference/pytorch_models.py).

--one-module-per-name MONET OUT writes MONET's small GPT-2 (workloads/onnx/gpt2_monet_small.onnx) as a TOML
workload (`monet inspect --emit-toml`) whose every layer names its module as the node name reads, without resolving
calls (`module = "layer.q_1"` for /layer/q_1/MatMul): the module tree monet read before it resolved calls, where
module `layer` holds operators of all four passes and the blocks are not a chain (the chain solvers' refusal is
tested on it: tests/e2e/test_checkpointing.cpp).
"""
import argparse
import os
import re
import subprocess

import onnx
import torch
import torch.nn as nn

D = 4


class Attn(nn.Module):
    def __init__(self):
        super().__init__()
        self.q = nn.Linear(D, D)

    def forward(self, x):
        return torch.softmax(self.q(x), dim=-1) * x  # Softmax and Mul are attn's own operators


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = Attn()
        self.fc = nn.Linear(D, D)

    def forward(self, x):
        x = x + self.attn(x)  # Add: the layer's own operator
        return torch.relu(self.fc(x))


class Shared3(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Linear(D, D)
        self.layer = Layer()
        self.head = nn.Linear(D, 2)

    def forward(self, x):
        x = self.emb(x)
        for _ in range(3):
            x = self.layer(x)
        return self.head(x)


class Twice(nn.Module):
    """Calls its child twice, with an operator of its own between the calls."""

    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, D)

    def forward(self, x):
        return self.lin(torch.relu(self.lin(x)))


class OnceTwice(nn.Module):
    def __init__(self):
        super().__init__()
        self.blk = Twice()
        self.head = nn.Linear(D, 2)

    def forward(self, x):
        return self.head(self.blk(x))


class Shared2Twice(nn.Module):
    def __init__(self):
        super().__init__()
        self.blk = Twice()
        self.head = nn.Linear(D, 2)

    def forward(self, x):
        return self.head(self.blk(self.blk(x)))


class Wrapper(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(D, D)

    def forward(self, x):
        return self.lin(x)


class Wrapper2(nn.Module):
    def __init__(self):
        super().__init__()
        self.blk = Wrapper()
        self.head = nn.Linear(D, 2)

    def forward(self, x):
        return self.head(self.blk(self.blk(x)))


class SuffixBlock(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Linear(D, D)
        self.conv_1 = nn.Linear(D, D)

    def forward(self, x):
        return torch.relu(self.conv_1(self.conv(x)))


class SuffixNames(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = SuffixBlock()

    def forward(self, x):
        return self.a(self.a(x))


MODELS = {"shared3": Shared3, "once_twice": OnceTwice, "shared2_twice": Shared2Twice, "wrapper2": Wrapper2,
          "suffix_names": SuffixNames}


def name_path(node_name):
    """The module of a node as its name reads (monet's module_path): Sequential children written qualified."""
    path = []
    for c in [p for p in node_name.split("/") if p][:-1]:
        path.append(c if not path or c.startswith(path[-1] + ".") else path[-1] + "." + c)
    return path[-1] if path else None


def one_module_per_name(monet, out):
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
    emitted = out + ".emitted"
    subprocess.run([monet, "inspect", os.path.join(root, "workloads", "onnx", "gpt2_monet_small.onnx"),
                    "--emit-toml", emitted], check=True, stdout=subprocess.DEVNULL)
    lines = ["# MONET's small GPT-2 with one module per name as read before calls were resolved (module `layer` holds",
             "# the linear layers of passes 2-4): scripts/reference/module_calls.py --one-module-per-name."]
    with open(emitted) as f:
        for line in f.read().split("\n"):
            lines.append(line)
            m = re.match(r'^name = "(/.*)"$', line)
            if m and name_path(m.group(1)):
                lines.append('module = "%s"' % name_path(m.group(1)))
    os.remove(emitted)
    with open(out, "w") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    ap.add_argument("--one-module-per-name", nargs=2, metavar=("MONET", "OUT"))
    args = ap.parse_args()
    if args.one_module_per_name:
        one_module_per_name(*args.one_module_per_name)
        return
    if not args.out:
        ap.error("--out DIR or --one-module-per-name MONET OUT")
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    for name, cls in MODELS.items():
        model = cls().train()
        path = os.path.join(args.out, name + ".onnx")
        torch.onnx.export(model, (torch.randn(2, D),), path, opset_version=17, input_names=["x"],
                          output_names=["y"], training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
        nodes = [n for n in onnx.load(path).graph.node if n.op_type != "Constant"]
        with open(os.path.join(args.out, name + ".txt"), "w") as f:
            f.write("# torch %s, opset 17: scripts/reference/module_calls.py\n" % torch.__version__)
            for n in nodes:
                f.write("%s %s\n" % (n.name, n.op_type))
        print(name, len(nodes), "nodes")


if __name__ == "__main__":
    main()
