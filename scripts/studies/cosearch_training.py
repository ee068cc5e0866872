#!/usr/bin/python3
"""Study 6 of docs/results.md: a small GPT's width and depth searched with MONET's edge-TPU hardware genes for its
training step (experiments/cosearch/gpt_training_hw_joint.toml: the whole grid, 9 networks x 72 hardware points), and
the same grid for its inference (--set training.mode=inference). Per network: the hardware with the lowest
energy-delay product (EDP) for training and for inference, and what training on the inference-optimal hardware
costs (its training EDP over the training optimum's).

    /usr/bin/python3 scripts/studies/cosearch_training.py [--monet PATH] [--out DIR] [--quick] [--check]

--quick sweeps 2 networks x 4 hardware points (CI); --check exits 1 unless every network has an optimum in both
modes and each optimum is the minimum of its mode's EDP over that network's points.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from study_runs import arguments, monet_run, rows  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPERIMENT = os.path.join(ROOT, "experiments", "cosearch", "gpt_training_hw_joint.toml")
NETWORK = ["hidden", "layers"]
HARDWARE = ["n_simds", "compute_lanes", "pe_memory", "x", "y"]
QUICK = ["space.genes.hidden.values=[256, 512]", "space.genes.layers.values=[2]", "space.genes.n_simds.values=[32, 128]",
         "space.genes.compute_lanes.values=[8]", "space.genes.pe_memory.values=[33554432]", "space.genes.x.values=[1, 2]",
         "space.genes.y.values=[1]"]


def points(folder):
    out = {}
    for r in rows(os.path.join(folder, "evaluations.csv")):
        if r["feasible"] != "true":
            continue
        key = tuple(r[g] for g in NETWORK), tuple(r[g] for g in HARDWARE)
        out[key] = float(r["latency_cycles"]) * float(r["energy_pj"])
    return out


def hw_text(hw):
    n, c, mem, x, y = hw
    return "%sx%s array, %d MiB, %sx%s mesh" % (n, c, int(mem) // 8388608, x, y)


def main():
    a = arguments(__doc__, ROOT, "cosearch_training")
    sets = QUICK if a.quick else []
    t_train = monet_run(a.monet, EXPERIMENT, os.path.join(a.out, "training"), sets)
    t_infer = monet_run(a.monet, EXPERIMENT, os.path.join(a.out, "inference"), sets + ["training.mode=\"inference\""])
    train, infer = points(os.path.join(a.out, "training")), points(os.path.join(a.out, "inference"))
    print("grid: %d training and %d inference points, %.1f s and %.1f s" % (len(train), len(infer), t_train, t_infer))
    print()
    print("| hidden | layers | training optimum (EDP) | inference optimum (EDP) | training on the inference optimum |")
    print("|---|---|---|---|---|")
    networks = sorted({n for n, _ in train}, key=lambda n: (int(n[0]), int(n[1])))
    bad, differ = 0, 0
    for net in networks:
        t = {hw: v for (n, hw), v in train.items() if n == net}
        i = {hw: v for (n, hw), v in infer.items() if n == net}
        if not t or not i:
            bad += 1
            continue
        bt, bi = min(t, key=t.get), min(i, key=i.get)
        differ += bt != bi
        penalty = t[bi] / t[bt] - 1 if bi in t else float("nan")
        print("| %s | %s | %s (%.3g) | %s (%.3g) | %+.1f %% |" % (net[0], net[1], hw_text(bt), t[bt], hw_text(bi), i[bi], 100 * penalty))
        if a.check and (t[bt] != min(t.values()) or i[bi] != min(i.values())):
            bad += 1
    print()
    print("%d of %d networks are trained best on other hardware than the one that runs them best" % (differ, len(networks)))
    if a.check and (bad or not networks):
        print("check failed: %d networks without an optimum in both modes" % bad, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
