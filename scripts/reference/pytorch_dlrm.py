#!/usr/bin/python3
"""Measures DLRM (Naumov et al. 2019, facebookresearch/dlrm dlrm_s_pytorch.py: dot interaction without self
pairs, training mode) with PyTorch into tests/data/pytorch_dlrm.json: the independent reference for monet's `dlrm`
workload generator, its EmbeddingBag operator with sparse gradients and row-wise Adagrad.

    /usr/bin/python3 scripts/reference/pytorch_dlrm.py

The model is dlrm_s_pytorch.py's: bottom MLP (Linear + ReLU per layer, the last one too), one
nn.EmbeddingBag(rows, D, mode="sum", sparse=True) per table (exactly L lookups per sample, int64 indices and
offsets), T = cat([bottom out] + pooled).view(B, 1 + tables, D), Z = bmm(T, T^T), the strictly lower triangle
Z[:, li, lj] (li, lj built as dlrm_s_pytorch does), R = cat([bottom out, Zflat]), top MLP (Linear + ReLU, the last
Linear + Sigmoid), BCELoss (mean) against [B, 1] targets. Two configurations:
* small: instantiated and measured in full;
* mlperf_v1: MLPerf Training v0.7-v2.1 DLRM on Criteo Terabyte (facebookresearch/dlrm bench/run_and_time.sh,
  --max-ind-range=40000000). Its 96 GB of tables are not allocated: every table is capped at ROW_CAP rows, which
  changes no activation, MAC or gradient shape (lookups are one-hot, the weights are never saved); the full
  parameter count is analytic and checked against the same model built on the meta device (shapes, no memory).

Measured, all exact integers:
* parameters (elements): embedding, dense (bottom and top MLP), total;
* MACs of Linear (mm/addmm) and bmm, counted under a TorchDispatchMode in the forward pass and in loss.backward(),
  attributed to bottom MLP / interaction / top MLP by the storages of their arguments (a parameter: forward or
  input gradient; a Linear's forward input: weight gradient); checked equal to the counts from the shapes;
* saved activation bytes: measure.py's convention (saved_tensors_hooks, distinct storages, parameters, buffers and
  0-dim tensors left out, forward + loss, targets included), and which autograd node saved which tensor (a walk of
  the graph's _saved_* attributes, whose distinct storages must add up to the same total);
* each table's gradient after loss.backward() (sparse COO: nnz, values, indices, coalesced or not);
* optimizer state: torch.optim.Adagrad after one step (measured), FBGEMM's EXACT_ROWWISE_ADAGRAD (formula:
  one fp32 momentum1 per row) and the pooled-embedding bytes of TorchRec's table-wise all-to-all (formula).
"""
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils._python_dispatch import TorchDispatchMode

import measure

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
JSON = os.path.join(ROOT, "tests", "data", "pytorch_dlrm.json")
aten = torch.ops.aten

DENSE_FEATURES = 13
ROW_CAP = 1000  # mlperf_v1: rows instantiated per table (one-hot lookups: no activation byte or MAC changes)
MLPERF_ROWS = [39884406, 39043, 17289, 7420, 20263, 3, 7120, 1543, 63, 38532951, 2953546, 403346, 10, 2208, 11938,
               155, 4, 976, 14, 39979771, 25641295, 39664984, 585935, 12972, 108, 36]

CONFIGS = {
    "small": dict(batch=8, dim=16, rows=[1000, 500, 200, 50], lookups=[3, 1, 2, 5], bottom=[13, 64, 32, 16],
                  top=[26, 64, 32, 1], row_cap=None),
    "mlperf_v1": dict(batch=2048, dim=128, rows=MLPERF_ROWS, lookups=[1] * 26, bottom=[13, 512, 256, 128],
                      top=[479, 1024, 1024, 512, 256, 1], row_cap=ROW_CAP),
}

SOURCES = {
    "model": "facebookresearch/dlrm dlrm_s_pytorch.py (interact_features: dot, arch_interaction_itself=False; "
             "create_emb: nn.EmbeddingBag(n, m, mode='sum', sparse=True)); Naumov et al. 2019, arXiv:1906.00091",
    "mlperf_v1_config": "https://github.com/facebookresearch/dlrm/blob/3be4eac856611ab9272d8b9663fe8f1226f43125/"
                        "bench/run_and_time.sh (the MLPerf Training reference run: --arch-sparse-feature-size=128 "
                        "--arch-mlp-bot=13-512-256-128 --arch-mlp-top=1024-1024-512-256-1 --max-ind-range=40000000 "
                        "--mini-batch-size=2048, Criteo Terabyte)",
    "mlperf_v1_rows": "https://github.com/facebookresearch/dlrm/blob/4082656690e37e2febeb6c3ea34fe631ee6f0bbc/"
                      "tools/visualize.py ('3. Criteo Terabyte MLPerf training ... --max-in-range=40000000': m_spa=128, "
                      "ln_emb = the 26 rows here, ln_bot=[13,512,256,128], ln_top=[479,1024,1024,512,256,1]); the "
                      "same 26 numbers are NVIDIA HugeCTR's MLPerf DLRM slot_size_array",
    "rowwise_adagrad": "https://github.com/pytorch/FBGEMM/blob/0009e242e420800914d47cccd1462f320a29a495/fbgemm_gpu/"
                       "fbgemm_gpu/split_table_batched_embeddings_ops_training.py (SplitTableBatchedEmbeddingBagsCodegen: "
                       "rowwise = optimizer in [EXACT_ROWWISE_ADAGRAD, EXACT_ROWWISE_WEIGHTED_ADAGRAD]; "
                       "construct_split_state: state_size = num_embeddings if rowwise else num_embeddings * "
                       "embedding_dim; momentum1 dtype=torch.float32)",
    "embedding_bag_cuda": "https://github.com/pytorch/pytorch/blob/a7789f3809ebe6e14e3fc833dccf3a4baaa8989f/aten/src/"
                          "ATen/native/cuda/EmbeddingBag.cu (_embedding_bag_cuda: offset2bag [N] and bag_size [B] "
                          "int64 in every mode, max_indices [B, D] in max mode, [0] otherwise; read, not measured)",
    "alltoall": "https://github.com/pytorch/torchrec/blob/d294448111dfeeeeb91e1f288623d40c37651803/torchrec/"
                "distributed/sharding/tw_sharding.py (TwPooledEmbeddingDist: PooledEmbeddingsAllToAll over "
                "dim_sum_per_rank, the pooled [B, sum of the rank's D] tensor split by batch)",
}


class DLRM(nn.Module):
    """dlrm_s_pytorch.py's DLRM_Net with the dot interaction (no self pairs), sequential (one device)."""

    def __init__(self, dim, rows, bottom, top, device=None):
        super().__init__()
        self.bottom = nn.ModuleList(nn.Linear(a, b, device=device) for a, b in zip(bottom, bottom[1:]))
        self.tables = nn.ModuleList(nn.EmbeddingBag(n, dim, mode="sum", sparse=True, device=device) for n in rows)
        self.top = nn.ModuleList(nn.Linear(a, b, device=device) for a, b in zip(top, top[1:]))

    def forward(self, dense, indices, offsets):
        x = dense
        for lin in self.bottom:  # sigmoid_bot = -1: ReLU after every bottom layer
            x = torch.relu(lin(x))
        ly = [t(i, o) for t, i, o in zip(self.tables, indices, offsets)]
        B, D = x.shape
        T = torch.cat([x] + ly, dim=1).view(B, -1, D)
        Z = torch.bmm(T, torch.transpose(T, 1, 2))
        _, ni, nj = Z.shape
        li = torch.tensor([i for i in range(ni) for j in range(i)])
        lj = torch.tensor([j for i in range(nj) for j in range(i)])
        R = torch.cat([x, Z[:, li, lj]], dim=1)
        for k, lin in enumerate(self.top):  # sigmoid_top = len(ln_top) - 2: the last layer
            R = lin(R)
            R = torch.sigmoid(R) if k == len(self.top) - 1 else torch.relu(R)
        return R


def instantiated_rows(cfg):
    cap = cfg["row_cap"]
    return [min(n, cap) if cap else n for n in cfg["rows"]]


def make_inputs(cfg, rows):
    g = torch.Generator().manual_seed(0)
    B = cfg["batch"]
    dense = torch.rand(B, DENSE_FEATURES, generator=g)
    indices = [torch.randint(0, n, (B * L,), generator=g, dtype=torch.int64) for n, L in zip(rows, cfg["lookups"])]
    offsets = [torch.arange(0, B * L, L, dtype=torch.int64) for L in cfg["lookups"]]
    target = torch.randint(0, 2, (B, 1), generator=g).float()
    return (dense, indices, offsets), target


def build(cfg):
    torch.manual_seed(0)
    model = DLRM(cfg["dim"], instantiated_rows(cfg), cfg["bottom"], cfg["top"])
    model.train()
    return model


def linear_params(sizes):
    return sum(a * b + b for a, b in zip(sizes, sizes[1:]))


def parameters(model):
    emb = sum(p.numel() for t in model.tables for p in t.parameters())
    bot = sum(p.numel() for m in model.bottom for p in m.parameters())
    top = sum(p.numel() for m in model.top for p in m.parameters())
    assert emb + bot + top == measure.trainable_parameters(model)
    return {"total": emb + bot + top, "embedding": emb, "dense": bot + top, "bottom_mlp": bot, "top_mlp": top}


def analytic_parameters(cfg, rows):
    emb = cfg["dim"] * sum(rows)
    bot, top = linear_params(cfg["bottom"]), linear_params(cfg["top"])
    return {"total": emb + bot + top, "embedding": emb, "dense": bot + top, "bottom_mlp": bot, "top_mlp": top}


# ---- MACs -------------------------------------------------------------------------------------------------------

REGIONS = ("bottom_mlp", "interaction", "top_mlp")


class RegionMacs(TorchDispatchMode):
    """MACs of mm/addmm/bmm by (phase, region, kind). A Linear's parameter among the arguments: its forward or its
    input gradient (grad @ W); the Linear's forward input among them: its weight gradient (grad^T @ x); bmm: the
    interaction (both backward bmms are input gradients: T is both operands)."""

    def __init__(self, model):
        super().__init__()
        self.params, self.inputs = {}, {}
        for region, layers in (("bottom_mlp", model.bottom), ("top_mlp", model.top)):
            for lin in layers:
                for p in lin.parameters():
                    self.params[p.storage().data_ptr()] = region
                lin.register_forward_hook(lambda m, i, o, r=region: self.keep(i[0], r))
        self.kept = []
        self.phase = "forward"
        self.macs = {}

    def keep(self, x, region):
        # Held until the end: a freed input's address could otherwise come back as a backward gradient's.
        self.kept.append(x)
        self.inputs[x.storage().data_ptr()] = region

    def add(self, region, kind, n):
        key = (self.phase, region, kind)
        self.macs[key] = self.macs.get(key, 0) + n

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        p = func.overloadpacket
        if p in (aten.mm, aten.addmm, aten.bmm, aten.baddbmm):
            a, b = (args[1], args[2]) if p in (aten.addmm, aten.baddbmm) else (args[0], args[1])
            if p in (aten.bmm, aten.baddbmm):
                n = a.shape[0] * a.shape[1] * a.shape[2] * b.shape[2]
                self.add("interaction", "forward" if self.phase == "forward" else "input_grad", n)
            else:
                n = a.shape[0] * a.shape[1] * b.shape[1]
                ptrs = [t.storage().data_ptr() for t in (a, b)]
                hit = [self.params[q] for q in ptrs if q in self.params]
                if hit:
                    self.add(hit[0], "forward" if self.phase == "forward" else "input_grad", n)
                else:
                    hit = [self.inputs[q] for q in ptrs if q in self.inputs]
                    self.add(hit[0] if hit else "unattributed", "weight_grad", n)
        return out


def measured_macs(model, inputs, target):
    counter = RegionMacs(model)
    with counter:
        out = model(*inputs)
        loss = F.binary_cross_entropy(out, target)
        counter.phase = "backward"
        loss.backward()
    m = counter.macs
    assert not any(k[1] == "unattributed" for k in m), m
    return table_of_macs(lambda phase, region, kind: m.get((phase, region, kind), 0))


def analytic_macs(cfg):
    """From the shapes: a Linear [B, a] -> [B, b] is B*a*b MACs forward, as much for its weight gradient and for
    its input gradient, except the first bottom layer, whose input (the dense features) needs no gradient; bmm
    [B, n, D] x [B, D, n] is B*n*n*D forward and twice that backward (the gradients of both operands)."""
    B, D = cfg["batch"], cfg["dim"]
    n = 1 + len(cfg["rows"])
    lin = {r: [B * a * b for a, b in zip(s, s[1:])] for r, s in (("bottom_mlp", cfg["bottom"]), ("top_mlp", cfg["top"]))}
    values = {
        ("forward", "bottom_mlp", "forward"): sum(lin["bottom_mlp"]),
        ("forward", "top_mlp", "forward"): sum(lin["top_mlp"]),
        ("forward", "interaction", "forward"): B * n * n * D,
        ("backward", "bottom_mlp", "input_grad"): sum(lin["bottom_mlp"][1:]),
        ("backward", "top_mlp", "input_grad"): sum(lin["top_mlp"]),
        ("backward", "interaction", "input_grad"): 2 * B * n * n * D,
        ("backward", "bottom_mlp", "weight_grad"): sum(lin["bottom_mlp"]),
        ("backward", "top_mlp", "weight_grad"): sum(lin["top_mlp"]),
    }
    return table_of_macs(lambda phase, region, kind: values.get((phase, region, kind), 0))


def table_of_macs(get):
    res = {"forward": {r: get("forward", r, "forward") for r in REGIONS},
           "backward_input_grad": {r: get("backward", r, "input_grad") for r in REGIONS},
           "backward_weight_grad": {r: get("backward", r, "weight_grad") for r in REGIONS}}
    for v in res.values():
        v["total"] = sum(v[r] for r in REGIONS)
    res["backward_total"] = res["backward_input_grad"]["total"] + res["backward_weight_grad"]["total"]
    return res


# ---- saved tensors ----------------------------------------------------------------------------------------------

EMBEDDING_BAG_OUTPUTS = {"result1": "offset2bag", "result2": "bag_size", "result3": "max_indices"}


def graph_nodes(root):
    """The autograd nodes under root in forward order (reverse of a topological order from the loss)."""
    deps, seen, stack = {}, {root}, [root]
    while stack:
        node = stack.pop()
        for nxt, _ in node.next_functions:
            if nxt is not None:
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
    order, ready = [], [root]
    while ready:
        node = ready.pop()
        order.append(node)
        for nxt, _ in reversed(node.next_functions):
            if nxt is not None:
                deps[nxt] -= 1
                if deps[nxt] == 0:
                    ready.append(nxt)
    return order[::-1]


def node_labels(model, root):
    """The module of each autograd node: a Linear's or an EmbeddingBag's output node (forward hooks), the ReLU or
    Sigmoid after a Linear takes its name, the rest is the interaction or the loss."""
    labels = {}
    for node in graph_nodes(root):
        if node in model.labels:
            labels[node] = model.labels[node]
        elif type(node).__name__ in ("ReluBackward0", "SigmoidBackward0"):
            labels[node] = labels.get(node.next_functions[0][0], "")
        elif type(node).__name__.startswith("BinaryCrossEntropy"):
            labels[node] = "loss"
        else:
            labels[node] = "interaction"
    return labels


def region_of(module):
    return {"bottom": "bottom_mlp", "tables": "embedding", "top": "top_mlp"}.get(module.split(".")[0], module)


def saved_tensor_listing(model, loss):
    """Which autograd node saved which tensor: every tensor among the _saved_* attributes of the graph's nodes, in
    forward order. counted: the first sighting of a storage that is neither a parameter nor 0-dim (measure.py's
    rule), so a tensor saved twice (a ReLU's output, the next Linear's input) is counted at its first saver."""
    params = {p.storage().data_ptr() for p in model.parameters()}
    labels = node_labels(model, loss.grad_fn)
    rows, seen = [], set()
    for node in graph_nodes(loss.grad_fn):
        op = type(node).__name__
        for attr in sorted(a for a in dir(node) if a.startswith("_saved_")):
            v = getattr(node, attr)
            many = isinstance(v, (tuple, list))
            for k, t in enumerate(v if many else [v]):
                if not isinstance(t, torch.Tensor):
                    continue
                name = attr[len("_saved_"):] + ("[%d]" % k if many else "")
                if op.startswith("EmbeddingBag"):
                    name = EMBEDDING_BAG_OUTPUTS.get(name, name)
                st = t.storage()
                ptr = st.data_ptr()
                counted = t.dim() > 0 and ptr not in params and ptr not in seen and st.nbytes() > 0
                if counted:
                    seen.add(ptr)
                rows.append({"op": op, "module": labels[node], "tensor": name, "shape": list(t.shape),
                             "dtype": str(t.dtype).replace("torch.", ""), "storage_bytes": st.nbytes(),
                             "parameter": ptr in params, "counted": counted})
    return rows


def saved_bytes(model, inputs, target):
    """measure.py's total, and the listing of the graph walk, which must add up to the same bytes."""
    total = measure.saved_activation_bytes(model, inputs, lambda out: F.binary_cross_entropy(out, target))
    model.labels = {}
    hooks = [m.register_forward_hook(lambda m, i, o, n=n: model.labels.__setitem__(o.grad_fn, n))
             for n, m in model.named_modules() if isinstance(m, (nn.Linear, nn.EmbeddingBag))]
    loss = F.binary_cross_entropy(model(*inputs), target)
    for h in hooks:
        h.remove()
    rows = saved_tensor_listing(model, loss)
    del model.labels
    assert sum(r["storage_bytes"] for r in rows if r["counted"]) == total
    by_region = {}
    for r in rows:
        if r["counted"]:
            reg = region_of(r["module"])
            by_region[reg] = by_region.get(reg, 0) + r["storage_bytes"]
    return total, by_region, rows


# ---- gradients and optimizer state ------------------------------------------------------------------------------

def sparse_gradients(model, inputs, target, cfg):
    model.zero_grad(set_to_none=True)
    F.binary_cross_entropy(model(*inputs), target).backward()
    res = []
    for k, t in enumerate(model.tables):
        g = t.weight.grad
        v, i = g._values(), g._indices()
        c = g.coalesce()
        res.append({"table": k, "is_sparse": g.is_sparse, "layout": str(g.layout).replace("torch.", ""),
                    "coalesced": g.is_coalesced(), "nnz": g._nnz(), "lookups": cfg["batch"] * cfg["lookups"][k],
                    "values_shape": list(v.shape), "values_dtype": str(v.dtype).replace("torch.", ""),
                    "values_bytes": v.numel() * v.element_size(), "indices_shape": list(i.shape),
                    "indices_dtype": str(i.dtype).replace("torch.", ""), "indices_bytes": i.numel() * i.element_size(),
                    "unique_rows": c._nnz()})
    return res


def state_bytes(opt, params):
    total, step = 0, 0
    for p in params:
        for v in opt.state[p].values():
            if isinstance(v, torch.Tensor):
                if v.dim() == 0:
                    step += v.numel() * v.element_size()
                else:
                    total += v.numel() * v.element_size()
    return total, step


def adagrad_state(model, inputs, target):
    """torch.optim.Adagrad (sparse gradients for the tables, dense for the MLPs) after one step."""
    model.zero_grad(set_to_none=True)
    F.binary_cross_entropy(model(*inputs), target).backward()
    opt = torch.optim.Adagrad(model.parameters(), lr=0.01)
    opt.step()
    emb = [p for t in model.tables for p in t.parameters()]
    dense = [p for m in list(model.bottom) + list(model.top) for p in m.parameters()]
    per_table = [state_bytes(opt, [t.weight])[0] for t in model.tables]
    emb_sum, emb_step = state_bytes(opt, emb)
    dense_sum, dense_step = state_bytes(opt, dense)
    names = sorted({k for p in emb + dense for k in opt.state[p]})
    return {"state_keys": names, "tables_sum_bytes": emb_sum, "tables_sum_bytes_per_table": per_table,
            "tables_step_bytes": emb_step, "dense_sum_bytes": dense_sum, "dense_step_bytes": dense_step}


# ---- one configuration ------------------------------------------------------------------------------------------

def run(name, cfg):
    rows = instantiated_rows(cfg)
    model = build(cfg)
    inputs, target = make_inputs(cfg, rows)
    B, D, tables = cfg["batch"], cfg["dim"], len(cfg["rows"])
    res = {"batch": B, "dim": D, "dense_features": DENSE_FEATURES, "rows": cfg["rows"], "lookups": cfg["lookups"],
           "bottom_mlp": cfg["bottom"], "top_mlp": cfg["top"],
           "interaction_pairs": (tables + 1) * tables // 2}
    assert cfg["top"][0] == cfg["bottom"][-1] + res["interaction_pairs"]

    measured_params = parameters(model)
    full = analytic_parameters(cfg, cfg["rows"])
    if cfg["row_cap"]:
        assert measured_params == analytic_parameters(cfg, rows)
        meta = parameters(DLRM(D, cfg["rows"], cfg["bottom"], cfg["top"], device="meta"))
        assert meta == full
        res["row_cap"] = cfg["row_cap"]
        res["instantiated_rows"] = rows
        res["parameters_measured_shrunk"] = measured_params
        res["parameters_check"] = ("analytic D*sum(rows) + sum(a*b + b) over the MLP layers; equal to the "
                                   "parameter count of the full model built on the meta device, and the formula "
                                   "with the capped rows equals the measured count of the instantiated model")
    else:
        assert measured_params == full
    res["parameters"] = full

    macs = measured_macs(model, inputs, target)
    assert macs == analytic_macs(cfg), (macs, analytic_macs(cfg))
    res["macs"] = macs
    res["macs_check"] = "measured (TorchDispatchMode over forward + loss.backward()) == analytic from the shapes"

    total, by_region, listing = saved_bytes(model, inputs, target)
    res["saved_activation_bytes"] = total
    res["saved_activation_bytes_by_region"] = by_region
    if name == "small":
        res["saved_tensors"] = listing

    res["embedding_bag_saves"] = (
        "measured (CPU): indices [N] and offsets [B] (the caller's tensors), offset2bag [0] (empty on the CPU fp32 sum "
        "path), bag_size [B], max_indices [B], all int64, N = B*L; not the weight (saved only for "
        "per_sample_weights' gradient). CUDA, from the source (see sources.embedding_bag_cuda): offset2bag [N], "
        "bag_size [B], max_indices [0] in sum mode. Both are 8*(N + 3B) (CPU) or 8*(2N + 2B) (CUDA) bytes per "
        "table: equal for one-hot lookups")
    res["embedding_lookups"] = [{"table": k, "gathered_rows": B * L, "pooled_output_bytes": B * D * 4}
                                for k, L in enumerate(cfg["lookups"])]
    res["sparse_gradients"] = sparse_gradients(model, inputs, target, cfg)
    res["sparse_gradients_total_bytes"] = sum(g["values_bytes"] + g["indices_bytes"] for g in res["sparse_gradients"])
    if cfg["row_cap"]:
        res["sparse_gradients_note"] = ("unique_rows depends on the drawn indices and on the capped rows: not a "
                                        "property of the full tables; nnz, values and indices are")

    ada = adagrad_state(model, inputs, target)
    assert ada["tables_sum_bytes"] == 4 * D * sum(rows)
    if cfg["row_cap"]:
        ada["tables_sum_bytes_measured_shrunk"] = ada["tables_sum_bytes"]
        ada["tables_sum_bytes"] = 4 * D * sum(cfg["rows"])
        ada["tables_sum_bytes_per_table"] = [4 * D * n for n in cfg["rows"]]
        ada["note"] = "tables_sum_bytes(_per_table): 4 * D * rows (the measured rule, applied to the full rows)"
    res["optimizer_state"] = {
        "torch_adagrad": ada,
        "fbgemm_exact_rowwise_adagrad": {
            "formula": "momentum1: one fp32 per row: 4 * rows bytes per table (no step counter without "
                       "weight_decay_mode=COUNTER)",
            "per_table_bytes": [4 * n for n in cfg["rows"]], "total_bytes": 4 * sum(cfg["rows"])},
    }
    res["alltoall_table_wise"] = {
        "formula": "B * tables_on_rank * D * 4 bytes (fp32 pooled embeddings of the rank's tables for the B samples "
                   "of the global batch, split by batch over the W ranks: (W-1)/W of it leaves the rank); the "
                   "backward all-to-all returns the same bytes of gradients",
        "bytes_all_tables": B * tables * D * 4,
        "bytes_per_table": B * D * 4,
    }
    return res


def summary(name, r):
    p, m = r["parameters"], r["macs"]
    print("== %s: B = %d, D = %d, %d tables" % (name, r["batch"], r["dim"], len(r["rows"])))
    print("  parameters   total %d = embedding %d + dense %d (bottom %d, top %d)"
          % (p["total"], p["embedding"], p["dense"], p["bottom_mlp"], p["top_mlp"]))
    if "parameters_measured_shrunk" in r:
        s = r["parameters_measured_shrunk"]
        print("  (measured with rows capped at %d: total %d = embedding %d + dense %d)"
              % (r["row_cap"], s["total"], s["embedding"], s["dense"]))
    print("  %-22s %16s %16s %16s %16s" % ("MACs", "bottom_mlp", "interaction", "top_mlp", "total"))
    for k in ("forward", "backward_input_grad", "backward_weight_grad"):
        print("  %-22s %16d %16d %16d %16d" % ((k,) + tuple(m[k][x] for x in REGIONS + ("total",))))
    print("  backward total %d (measured == analytic)" % m["backward_total"])
    print("  saved activation bytes %d: %s" % (r["saved_activation_bytes"], ", ".join(
        "%s %d" % kv for kv in r["saved_activation_bytes_by_region"].items())))
    if "saved_tensors" in r:
        print("  %-26s %-10s %-14s %-14s %-8s %8s %s" % ("op", "module", "tensor", "shape", "dtype", "bytes", ""))
        for t in r["saved_tensors"]:
            note = "parameter" if t["parameter"] else ("" if t["counted"] else "not counted")
            print("  %-26s %-10s %-14s %-14s %-8s %8d %s" % (t["op"], t["module"], t["tensor"], t["shape"],
                                                             t["dtype"], t["storage_bytes"], note))
    g = r["sparse_gradients"]
    print("  sparse gradients: %s" % "; ".join(
        "t%d nnz %d (%d unique) %s values %d B + indices %s %d B%s" % (
            x["table"], x["nnz"], x["unique_rows"], x["values_shape"], x["values_bytes"], x["indices_shape"],
            x["indices_bytes"], "" if x["coalesced"] else " uncoalesced") for x in g[:4]) + (" ..." if len(g) > 4 else ""))
    print("  sparse gradients total %d B" % r["sparse_gradients_total_bytes"])
    o = r["optimizer_state"]
    print("  Adagrad state: tables %d B (+ %d B step), dense %d B; row-wise Adagrad (FBGEMM) %d B"
          % (o["torch_adagrad"]["tables_sum_bytes"], o["torch_adagrad"]["tables_step_bytes"],
             o["torch_adagrad"]["dense_sum_bytes"], o["fbgemm_exact_rowwise_adagrad"]["total_bytes"]))
    print("  table-wise all-to-all (all tables on one rank): %d B" % r["alltoall_table_wise"]["bytes_all_tables"])


def main():
    start = time.time()
    torch.set_num_threads(1)
    data = {
        "description": (
            "Measured with scripts/reference/pytorch_dlrm.py (PyTorch %s, CPU, fp32, training mode): DLRM as "
            "facebookresearch/dlrm dlrm_s_pytorch.py (dot interaction without self pairs, EmbeddingBag sum with "
            "sparse gradients, BCELoss). parameters: elements. macs: mm/addmm/bmm multiply-accumulates by region, "
            "forward and loss.backward() (input and weight gradients), measured and equal to the shapes' counts. "
            "saved_activation_bytes: distinct storages autograd saves in forward + loss (targets, indices and "
            "offsets included; parameters, buffers and 0-dim tensors left out; measure.py). mlperf_v1 runs with "
            "tables capped at %d rows; its parameters and Adagrad bytes are for the full tables (analytic, checked "
            "on the meta device). Formulas, not measurements: fbgemm_exact_rowwise_adagrad and "
            "alltoall_table_wise." % (torch.__version__, ROW_CAP)),
        "sources": SOURCES,
        "configs": {name: run(name, cfg) for name, cfg in CONFIGS.items()},
    }
    with open(JSON, "w") as f:
        json.dump(data, f, indent=1)
        f.write("\n")
    for name, r in data["configs"].items():
        summary(name, r)
    print("wrote %s in %.1f s" % (os.path.relpath(JSON, ROOT), time.time() - start))


if __name__ == "__main__":
    main()
