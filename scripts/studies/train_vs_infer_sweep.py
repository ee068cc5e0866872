#!/usr/bin/python3
"""Study 1 of docs/results.md: MONET's edge-TPU hardware space swept for a ResNet-18-CIFAR training step and for
its forward pass (experiments/monet/train_vs_infer_sweep.toml), and how the inference-optimal hardware differs
from the training-optimal one; then the same space searched with NSGA-II for MONET's small GPT-2
(experiments/search/gpt2_small_hw_ga.toml), training and inference, each optimum evaluated in the other mode.

    /usr/bin/python3 scripts/studies/train_vs_infer_sweep.py [--monet PATH] [--out DIR] [--quick | --full]
        [--check] [--report-only] [--svg FILE]

Runs the grid twice (`monet run EXP --out OUT/training`, and `--set training.mode=inference` into OUT/inference),
reads both evaluations.csv, and reports per mode the Pareto front (latency x energy x area) and the optimum by
energy-delay product (EDP, feasible points), with its genes; then each optimum evaluated in the other mode (the
same grid holds both). --quick sweeps 4 points (CI); --full sweeps all 10,000 points of MONET's space (the grid of
experiments/search/edge_tpu_hw_sweep.toml) in each mode; --check exits 1 unless each mode reports an optimum and
its front is non-dominated among its feasible points.
"""
import argparse
import csv
import json
import math
import os
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPERIMENT = os.path.join(ROOT, "experiments", "monet", "train_vs_infer_sweep.toml")
GPT2 = os.path.join(ROOT, "experiments", "search", "gpt2_small_hw_ga.toml")
GPT2_QUICK = ["search.population=4", "search.generations=1"]
OBJECTIVES = ["latency_cycles", "energy_pj", "area_mm2"]
GENES = ["n_simds", "compute_lanes", "pe_memory", "register_file", "x", "y"]
QUICK = ["space.genes.n_simds.values=[128]", "space.genes.compute_lanes.values=[2, 8]",
         "space.genes.pe_memory.values=[16777216]", "space.genes.register_file.values=[65536]",
         "space.genes.x.values=[1, 2]", "space.genes.y.values=[1]"]

# The genes' values of experiments/search/edge_tpu_hw_sweep.toml: MONET's whole space, 10,000 points.
FULL = ["space.genes.pe_memory.values=[4194304, 8388608, 16777216, 25165824, 33554432]",
        "space.genes.register_file.values=[65536, 131072, 262144, 393216, 524288]",
        "space.genes.x.values=[1, 2, 4, 6, 8]", "space.genes.y.values=[1, 2, 4, 6, 8]"]


def run(monet, out, mode, grid, experiment=EXPERIMENT):
    args = [monet, "run", experiment, "--out", os.path.join(out, mode), "--log-level", "warn"]
    sets = (["training.mode=\"inference\""] if mode == "inference" else []) + grid
    for s in sets:
        args += ["--set", s]
    start = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def read(out, mode, name="evaluations.csv"):
    with open(os.path.join(out, mode, name)) as f:
        rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
    points = []
    for r in rows:
        feasible = r.get("feasible", "true").lower() in ("true", "1", "yes")
        points.append({"genes": {g: r[g] for g in GENES if g in r},
                       "objectives": [float(r[o]) if r[o] not in ("", "nan") else math.inf for o in OBJECTIVES],
                       "feasible": feasible})
    return points


def dominates(a, b):
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))


def front(points):
    ok = [p for p in points if p["feasible"]]
    return [p for p in ok if not any(dominates(q["objectives"], p["objectives"]) for q in ok)]


def edp(p):
    return p["objectives"][0] * p["objectives"][1]


def key(p):
    return tuple(sorted(p["genes"].items()))


def genes_text(g):
    mib = lambda bits: "%g MiB" % (int(bits) / 8 / 2**20)
    kib = lambda bits: "%g KiB" % (int(bits) / 8 / 2**10)
    return "%s x %s array, PE memory %s, register file %s, %s x %s PEs" % (
        g.get("n_simds"), g.get("compute_lanes"), mib(g.get("pe_memory", 0)), kib(g.get("register_file", 0)),
        g.get("x"), g.get("y"))


def svg(data, best, path):
    """Energy vs latency of every feasible point of both sweeps (log-log), fronts drawn solid, optima ringed."""
    W, H, L, R, T, B = 760, 440, 80, 170, 30, 60
    pts = [(m, p) for m in data for p in data[m] if p["feasible"]]
    xs = [math.log10(p["objectives"][0]) for _, p in pts]
    ys = [math.log10(p["objectives"][1]) for _, p in pts]
    x0, x1, y0, y1 = math.floor(min(xs)), math.ceil(max(xs)), math.floor(min(ys)), math.ceil(max(ys))
    px = lambda v: L + (v - x0) / max(x1 - x0, 1) * (W - L - R)
    py = lambda v: H - B - (v - y0) / max(y1 - y0, 1) * (H - T - B)
    colour = {"training": "#d95f02", "inference": "#1b9e77"}
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">Edge-TPU hardware sweep, ResNet-18-CIFAR: training step vs forward pass</text>' % L]
    for e in range(x0, x1 + 1):
        out.append('<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">1e%d</text>' % (
            px(e), T, px(e), H - B, px(e), H - B + 16, e))
    for e in range(y0, y1 + 1):
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">1e%d</text>' % (
            L, py(e), W - R, py(e), L - 6, py(e) + 4, e))
    out.append('<text x="%d" y="%d" text-anchor="middle">latency (cycles)</text>' % ((L + W - R) / 2, H - 20))
    out.append('<text transform="translate(18,%d) rotate(-90)" text-anchor="middle">energy (pJ)</text>' % ((T + H - B) / 2))
    for mode in data:
        on_front = {key(p) for p in front(data[mode])}
        for p in data[mode]:
            if not p["feasible"]:
                continue
            x, y = px(math.log10(p["objectives"][0])), py(math.log10(p["objectives"][1]))
            solid = key(p) in on_front
            out.append('<circle cx="%.1f" cy="%.1f" r="%s" fill="%s" fill-opacity="%s"/>' % (
                x, y, "3.5" if solid else "2", colour[mode], "1" if solid else "0.25"))
        b = best[mode]
        out.append('<circle cx="%.1f" cy="%.1f" r="9" fill="none" stroke="black" stroke-width="2"><title>%s optimum (EDP): %s</title></circle>' % (
            px(math.log10(b["objectives"][0])), py(math.log10(b["objectives"][1])), mode, genes_text(b["genes"])))
    ly = T + 10
    for mode in data:
        out.append('<circle cx="%d" cy="%d" r="5" fill="%s"/><text x="%d" y="%d">%s (front solid)</text>' % (
            W - R + 18, ly + 4, colour[mode], W - R + 30, ly + 8, mode))
        ly += 20
    out.append('<circle cx="%d" cy="%d" r="8" fill="none" stroke="black" stroke-width="2"/><text x="%d" y="%d">EDP optimum</text>' % (
        W - R + 18, ly + 4, W - R + 30, ly + 8))
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def cross_table(title, best, value, summary):
    """Prints each mode's optimum evaluated in both modes (value(mode, of) -> point) as a markdown table and stores
    the EDP ratios (or, where a mode cannot run the other's optimum, that finding) in summary[of]["cross"]."""
    print("| %s | hardware | training latency (cycles) | training energy (µJ) | training EDP vs training optimum | "
          "inference latency (cycles) | inference energy (µJ) | inference EDP vs inference optimum | area (mm²) |" % title)
    print("|---|---|---|---|---|---|---|---|---|")
    for of in ["training", "inference"]:
        t, i = value("training", of), value("inference", of)
        if not (t["feasible"] and i["feasible"]):  # a finding, not a failure: say it instead of an EDP
            print("| %s | %s | %s | | | %s | | | |" % (of, genes_text(best[of]["genes"]),
                  "feasible" if t["feasible"] else "does not fit", "feasible" if i["feasible"] else "does not fit"))
            summary[of]["cross"] = {"training_feasible": t["feasible"], "inference_feasible": i["feasible"]}
            continue
        print("| %s | %s | %s | %.1f | %+.1f %% | %s | %.1f | %+.1f %% | %.2f |" % (
            of, genes_text(best[of]["genes"]), format(int(t["objectives"][0]), ","), t["objectives"][1] / 1e6,
            100 * (edp(t) / edp(best["training"]) - 1), format(int(i["objectives"][0]), ","),
            i["objectives"][1] / 1e6, 100 * (edp(i) / edp(best["inference"]) - 1), t["objectives"][2]))
        summary[of]["cross"] = {"training_edp_ratio": edp(t) / edp(best["training"]),
                                "inference_edp_ratio": edp(i) / edp(best["inference"])}


def gpt2(a, failures):
    """NSGA-II over the same space for the small GPT-2, in both modes; each EDP optimum re-evaluated in the other
    mode (a one-point grid of its genes). Prints a table like the sweep's; returns its summary."""
    modes = ["training", "inference"]
    out = os.path.join(a.out, "gpt2")
    if not a.report_only:
        for mode in modes:
            sets = (GPT2_QUICK if a.quick else []) + (["training.mode=\"inference\""] if mode == "inference" else [])
            print("gpt2 %s nsga2: %.1f s" % (mode, run(a.monet, out, mode, sets, GPT2)), file=sys.stderr)
    best, summary = {}, {}
    for m in modes:
        points = read(out, m)
        feasible = [q for q in points if q["feasible"]]
        if not feasible:
            failures.append("gpt2 %s: no feasible point" % m)
            continue
        best[m] = min(feasible, key=edp)
        summary[m] = {"points": len(points), "feasible": len(feasible), "front": len(read(out, m, "pareto.csv")),
                      "optimum_genes": best[m]["genes"], "optimum_objectives": dict(zip(OBJECTIVES, best[m]["objectives"]))}
    if len(best) < 2:
        return summary
    # The other mode's optimum, evaluated here: NSGA-II may not have visited it.
    cross = {}
    for m in modes:
        other = modes[1 - modes.index(m)]
        sets = ["search.plugin=\"grid\""] + ["space.genes.%s.values=[%s]" % (g, v) for g, v in best[other]["genes"].items()]
        sets += ["training.mode=\"inference\""] if m == "inference" else []
        if not a.report_only:
            run(a.monet, out, "%s_of_%s_optimum" % (m, other), sets, GPT2)
        cross[(m, other)] = read(out, "%s_of_%s_optimum" % (m, other))[0]
    value = lambda m, of: best[m] if m == of else cross[(m, of)]
    print()
    cross_table("GPT-2 optimum by EDP of", best, value, summary)
    for m in modes:
        print("\ngpt2 %s: %d points, %d feasible, %d on monet's front (4 objectives)" % (
            m, summary[m]["points"], summary[m]["feasible"], summary[m]["front"]))
    return summary


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--monet", default=os.path.join(ROOT, "build", "bin", "monet"))
    p.add_argument("--out", default=os.path.join(ROOT, "results", "train_vs_infer_sweep"))
    p.add_argument("--quick", action="store_true")
    p.add_argument("--full", action="store_true")
    p.add_argument("--check", action="store_true")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--svg", default="")
    a = p.parse_args()
    modes = ["training", "inference"]
    if a.quick and a.full:
        p.error("--quick and --full exclude each other")
    grid = QUICK if a.quick else FULL if a.full else []
    if not a.report_only:
        for mode in modes:
            print("%s sweep: %.1f s" % (mode, run(a.monet, a.out, mode, grid)), file=sys.stderr)
    data = {m: read(a.out, m) for m in modes}
    best, summary, ok = {}, {}, True
    for m in modes:
        feasible = [q for q in data[m] if q["feasible"]]
        fr = front(data[m])
        # The front must be non-dominated among the feasible points (by construction here; --check re-reads
        # monet's own pareto.csv for the same property).
        pareto_file = os.path.join(a.out, m, "pareto.csv")
        if os.path.exists(pareto_file):
            with open(pareto_file) as f:
                rows = list(csv.DictReader(l for l in f if not l.startswith("#")))
            for r in rows:
                obj = [float(r[o]) for o in OBJECTIVES]
                if any(dominates(q["objectives"], obj) for q in feasible):
                    print("%s: pareto.csv point %s is dominated" % (m, obj), file=sys.stderr)
                    ok = False
        if not feasible:
            print("%s: no feasible point" % m, file=sys.stderr)
            ok = False
            continue
        best[m] = min(feasible, key=edp)
        summary[m] = {"points": len(data[m]), "feasible": len(feasible), "front": len(fr),
                      "optimum_genes": best[m]["genes"], "optimum_objectives": dict(zip(OBJECTIVES, best[m]["objectives"]))}
    if len(best) == 2:
        index = {m: {key(q): q for q in data[m]} for m in modes}
        cross_table("optimum by EDP of", best, lambda m, of: index[m][key(best[of])], summary)
        for m in modes:
            print("\n%s: %d points, %d feasible, %d on the front" % (m, summary[m]["points"], summary[m]["feasible"],
                                                                    summary[m]["front"]))
        if a.svg:
            svg(data, best, a.svg)
    failures = []
    summary["gpt2"] = gpt2(a, failures)
    for f in failures:
        print(f, file=sys.stderr)
    ok = ok and not failures
    with open(os.path.join(a.out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    if a.check and not ok:
        sys.exit(1)


if __name__ == "__main__":
    main()
