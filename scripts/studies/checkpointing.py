#!/usr/bin/python3
"""The activation-checkpointing study of docs/training.md: one training step of ResNet-18-CIFAR (batch 4, Adam,
mixed bf16) on the quad core, under each policy, as a markdown table (latency, energy, saved activations,
backward activation peak, recomputed MACs, recompute busy cycles and energy, off-chip peak).

    build/bin/monet run experiments/checkpointing/resnet18_cifar_quad_core_segments.toml   # the grid, pareto.svg
    /usr/bin/python3 scripts/studies/checkpointing.py [MONET] [EXPERIMENT]                 # the table

EXPERIMENT (default experiments/resnet18_cifar_training_quad_core.toml) is run once per policy with --set.
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
MONET = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build", "bin", "monet")
EXPERIMENT = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "experiments",
                                                                 "resnet18_cifar_training_quad_core.toml")
POLICIES = [("none", [])] + [("segments = %d" % k, ["training.checkpoint.segments=%d" % k]) for k in range(2, 9)] + [
    ("every_k = \"sqrt\"", ["training.checkpoint.every_k=\"sqrt\""]),
    ("modules = [\"layer*\"]", ["training.checkpoint.modules=[\"layer*\"]"]),
]


def run(sets, out):
    args = [MONET, "run", EXPERIMENT, "--out", out, "--log-level", "warn"]
    for s in sets:
        args += ["--set", s]
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    with open(os.path.join(out, "results.json")) as f:
        return json.load(f)


def main():
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, (name, sets) in enumerate(POLICIES):
            rows.append((name, run(sets, os.path.join(tmp, str(i)))))
    base = rows[0][1]
    print("| policy | latency (cycles) | Δ latency | energy (mJ) | Δ energy | saved activations (B) | backward "
          "activation peak (B) | recomputed MACs | recompute busy cycles | recompute energy (mJ) | off-chip peak (MB) |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name, j in rows:
        t = j["training"]
        print("| %s | %s | %+.1f %% | %.2f | %+.1f %% | %s | %s (%+.0f %%) | %s | %s | %.2f | %.1f |" % (
            name, format(j["latency_cycles"], ","), 100 * (j["latency_cycles"] / base["latency_cycles"] - 1),
            j["energy_pj"] / 1e9, 100 * (j["energy_pj"] / base["energy_pj"] - 1),
            format(t["saved_activation_bytes"], ","), format(t["peak_activation_bytes"], ","),
            100 * (t["peak_activation_bytes"] / base["training"]["peak_activation_bytes"] - 1),
            format(t["recompute_macs"], ","), format(t["recompute_busy_cycles"], ","), t["recompute_energy_pj"] / 1e9,
            j["peak_offchip_bytes"] / 1e6))


if __name__ == "__main__":
    main()
