#!/usr/bin/python3
"""Study 5 of docs/results.md: network and hardware searched together. NSGA-II over NAS-Bench-201's six cell edges
and MONET's edge-TPU hardware genes (experiments/cosearch/nb201_edge_tpu_joint.toml: accuracy from the benchmark's
table, latency, energy; one int8 inference at batch 1), against
  - the sequential flow: the most accurate cell of the table first (index 6111, 94.37 %), then every hardware point
    of the same hardware genes for it (a grid), and
  - a hardware-only search for a fixed cell: the NAS-Bench-201 paper's ResNet cell (index 11472, 93.91 %), same grid;
and reports, at each accuracy floor, the smallest energy-delay product (EDP = latency x energy) each flow reached.

    /usr/bin/python3 scripts/studies/cosearch_nb201.py [--monet PATH] [--out DIR] [--seeds 1,2,3] [--quick] [--check]
        [--svg FILE]

--quick runs a small joint search (16 x 4) and a 9-point grid (CI); --check exits 1 unless every evaluation's
accuracy is the table's and the joint front is non-dominated (accuracy maximised, latency and energy minimised).
"""
import csv
import math
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from study_runs import arguments, monet_run, rows  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPERIMENT = os.path.join(ROOT, "experiments", "cosearch", "nb201_edge_tpu_joint.toml")
TABLE = os.path.join(ROOT, "workloads", "nasbench201", "accuracy_cifar10.csv")
EDGES = ["edge_1_0", "edge_2_0", "edge_2_1", "edge_3_0", "edge_3_1", "edge_3_2"]
HARDWARE = ["n_simds", "compute_lanes", "pe_memory", "x", "y"]
RESNET = ["nor_conv_3x3", "none", "nor_conv_3x3", "skip_connect", "none", "skip_connect"]  # index 11472
QUICK_GRID = ["space.genes.n_simds.values=[32, 128]", "space.genes.compute_lanes.values=[8]",
              "space.genes.pe_memory.values=[16777216]", "space.genes.x.values=[1, 2]", "space.genes.y.values=[1, 2]"]


def table():
    with open(TABLE) as f:
        return {tuple(r[e] for e in EDGES): (int(r["index"]), float(r["cifar10_test_accuracy_percent"])) for r in csv.DictReader(f)}


def points(folder):
    out = []
    for r in rows(os.path.join(folder, "evaluations.csv")):
        if r["feasible"] != "true":
            continue
        p = {k: r[k].strip('"') for k in EDGES + HARDWARE if k in r}
        p.update(accuracy=float(r["accuracy"]), latency=float(r["latency_cycles"]), energy=float(r["energy_pj"]))
        p["edp"] = p["latency"] * p["energy"]
        out.append(p)
    return out


def hardware_grid(monet, out, ops, quick):
    """Every hardware point for one cell: the joint experiment with the edge genes removed and the cell set."""
    unsets = ["space.genes." + e for e in EDGES]
    sets = ["search.plugin=\"grid\""] + ["workload.set.ops[%d]=\"%s\"" % (i, op) for i, op in enumerate(ops)]
    seconds = monet_run(monet, EXPERIMENT, out, sets + (QUICK_GRID if quick else []), unsets)
    return seconds, points(out)


def best_edp(pts, floor):
    ok = [p for p in pts if p["accuracy"] >= floor - 1e-9]
    return min(ok, key=lambda p: p["edp"]) if ok else None


def front(pts):
    keyed = [(-p["accuracy"], p["latency"], p["energy"]) for p in pts]
    return [p for p, a in zip(pts, keyed) if not any(all(x <= y for x, y in zip(b, a)) and b != a for b in keyed)]


def svg(joint, sequential, fixed, path):
    """Accuracy against EDP (log): every joint point, the joint front, and the two baselines' hardware grids."""
    W, H, L, R, T, B = 720, 440, 80, 210, 30, 60
    allp = joint + sequential + fixed
    xs = [math.log10(p["edp"]) for p in allp]
    x0, x1 = math.floor(min(xs)), math.ceil(max(xs))
    y0, y1 = math.floor(min(p["accuracy"] for p in allp)), math.ceil(max(p["accuracy"] for p in allp))
    px = lambda v: L + (v - x0) / max(x1 - x0, 1) * (W - L - R)
    py = lambda v: H - B - (v - y0) / max(y1 - y0, 1) * (H - T - B)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">NAS-Bench-201 cell x edge-TPU hardware: accuracy vs EDP (int8 inference, batch 1)</text>' % L]
    for e in range(x0, x1 + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>' % (px(e), T, px(e), H - B))
        out.append('<text x="%.1f" y="%d" text-anchor="middle">1e%d</text>' % (px(e), H - B + 16, e))
    for v in range(y0, y1 + 1):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, py(v), W - R, py(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (L - 6, py(v) + 4, v))
    out.append('<text x="%d" y="%d" text-anchor="middle">energy-delay product (pJ x cycles)</text>' % ((L + W - R) / 2, H - 20))
    out.append('<text transform="translate(22,%d) rotate(-90)" text-anchor="middle">CIFAR-10 test accuracy (%%)</text>' % ((T + H - B) / 2))
    series = [(joint, "#bbbbbb", 2, "joint search, every point"), (front(joint), "#1f77b4", 4, "joint search, front"),
              (sequential, "#d62728", 3, "sequential: cell 6111's hardware"), (fixed, "#2ca02c", 3, "ResNet cell's hardware")]
    ly = T + 10
    for pts, colour, r, name in series:
        for p in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="%d" fill="%s" fill-opacity="0.8"/>' % (px(math.log10(p["edp"])), py(p["accuracy"]), r, colour))
        out.append('<circle cx="%d" cy="%d" r="5" fill="%s"/><text x="%d" y="%d">%s</text>' % (W - R + 19, ly + 5, colour, W - R + 30, ly + 9, name))
        ly += 18
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    a = arguments(__doc__, ROOT, "cosearch_nb201", [("--seeds", "1,2,3", "joint-search seeds"), ("--svg", None, "figure file")])
    acc = table()
    best_cell = min((v[0], k) for k, v in acc.items() if v[1] == max(x[1] for x in acc.values()))[1]
    quick = ["search.population=16", "search.generations=4"] if a.quick else []
    joint, times = [], []
    for seed in a.seeds.split(","):
        out = os.path.join(a.out, "joint_seed" + seed)
        times.append(monet_run(a.monet, EXPERIMENT, out, quick + ["experiment.seed=" + seed]))
        pts = points(out)
        for p in pts:
            p["seed"] = seed
        joint.append(pts)
    t_seq, sequential = hardware_grid(a.monet, os.path.join(a.out, "sequential"), best_cell, a.quick)
    t_fix, fixed = hardware_grid(a.monet, os.path.join(a.out, "resnet_cell"), RESNET, a.quick)

    print("| flow | evaluations | wall time | cells |")
    print("|---|---|---|---|")
    for seed, pts, t in zip(a.seeds.split(","), joint, times):
        print("| joint NSGA-II, seed %s | %d | %.1f s | %d |" % (seed, len(pts), t, len({tuple(p[e] for e in EDGES) for p in pts})))
    print("| sequential (cell %d, then its hardware grid) | %d | %.1f s | 1 |" % (acc[best_cell][0], len(sequential), t_seq))
    print("| hardware only, ResNet cell (11472) | %d | %.1f s | 1 |" % (len(fixed), t_fix))
    print()
    floors = sorted({acc[best_cell][1], acc[tuple(RESNET)][1], 94.0, 93.5, 93.0, 92.0}, reverse=True)
    print("| accuracy floor (%) | sequential: min EDP | ResNet cell: min EDP | joint: min EDP (per seed) | joint's cell (seed 1) | joint / sequential |")
    print("|---|---|---|---|---|---|")
    for floor in floors:
        s, f = best_edp(sequential, floor), best_edp(fixed, floor)
        js = [best_edp(pts, floor) for pts in joint]
        cell = js[0] and "%d (%.2f %%)" % acc[tuple(js[0][e] for e in EDGES)]
        ratio = ["%.2f" % (j["edp"] / s["edp"]) if j and s else "-" for j in js]
        print("| %.2f | %s | %s | %s | %s | %s |" % (
            floor, "%.3g" % s["edp"] if s else "-", "%.3g" % f["edp"] if f else "-",
            ", ".join("%.3g" % j["edp"] if j else "-" for j in js), cell or "-", ", ".join(ratio)))
    if a.svg:
        svg(joint[0], sequential, fixed, a.svg)

    if a.check:
        bad = 0
        for pts in joint + [sequential, fixed]:
            for p in pts:
                if "edge_1_0" in p and acc[tuple(p[e] for e in EDGES)][1] != p["accuracy"]:
                    bad += 1
        fr = front(joint[0])
        if bad or not fr or not sequential or not fixed:
            print("check failed: %d accuracies differ from the table; front %d, sequential %d, fixed %d points"
                  % (bad, len(fr), len(sequential), len(fixed)), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
