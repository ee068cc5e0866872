#!/usr/bin/python3
"""Study 3 of docs/results.md: activation-checkpointing trade-offs of a ResNet-18-CIFAR training step on MONET's
edge-TPU template and on the MCU-class core: the GA's front (NSGA-II over keep / recompute per block) against the
optimal policy (exact DP over the same per-block choices, recompute cost = latency on the cores) at budgets taken
from the GA's front, and against every_k = "sqrt" (Chen et al.) and no checkpointing.

    /usr/bin/python3 scripts/studies/checkpointing_tradeoffs.py [--monet PATH] [--out DIR] [--quick] [--check]
        [--svg-dir DIR]

Per architecture (experiments/monet/checkpointing_tradeoffs/{edge_tpu,mcu}.toml): the search into OUT/ARCH/ga,
then single runs (`--unset space`) of none, every_k = "sqrt" and optimal at three budgets (the GA front's
smallest, median and largest activation peaks below no checkpointing's). --quick runs the GA 4 x 1 (CI); --check
exits 1 unless the GA's pareto.csv is non-dominated among its feasible points, sqrt(n) lowers the activation
peak, and every optimal run stays within its budget. --svg-dir copies the GA's pareto.svg (drawn by monet) there.
"""
import os

from study_runs import arguments, dominates, finish, keep_svg, monet_run, results, rows

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARCHES = ["edge_tpu", "mcu"]
PEAK = "training.peak_activation_bytes"


def study(monet, out, arch, quick, check):
    exp = os.path.join(ROOT, "experiments", "monet", "checkpointing_tradeoffs", arch + ".toml")
    base = os.path.join(out, arch)
    sets = ["search.population=4", "search.generations=1"] if quick else []
    wall = monet_run(monet, exp, os.path.join(base, "ga"), sets)
    front = sorted(rows(os.path.join(base, "ga", "pareto.csv")), key=lambda r: float(r[PEAK]))
    single = {}
    monet_run(monet, exp, os.path.join(base, "none"), [], ["space"])
    monet_run(monet, exp, os.path.join(base, "sqrt"), ["training.checkpoint.every_k=\"sqrt\""], ["space"])
    single["none"] = results(os.path.join(base, "none"))
    single["every_k = \"sqrt\""] = results(os.path.join(base, "sqrt"))
    none_peak = single["none"]["training"]["peak_activation_bytes"]
    peaks = sorted({int(float(r[PEAK])) for r in front if float(r[PEAK]) < none_peak})
    budgets = sorted({peaks[0], peaks[len(peaks) // 2], peaks[-1]}) if peaks else []
    for b in budgets:
        name = "optimal, budget %s B" % format(b, ",")
        monet_run(monet, exp, os.path.join(base, "optimal_%d" % b),
                  ["training.checkpoint.budget=%d" % b, "training.checkpoint.cost=\"latency\""], ["space"])
        single[name] = results(os.path.join(base, "optimal_%d" % b))
        single[name]["budget"] = b
    failures = []
    if check:
        feasible = [[float(r[PEAK]), float(r["latency_cycles"])] for r in rows(os.path.join(base, "ga", "evaluations.csv"))
                    if r["feasible"] == "true"]
        for r in front:
            if any(dominates(p, [float(r[PEAK]), float(r["latency_cycles"])]) for p in feasible):
                failures.append("%s: pareto.csv holds a dominated point" % arch)
        if single["every_k = \"sqrt\""]["training"]["peak_activation_bytes"] >= none_peak:
            failures.append("%s: sqrt(n) checkpointing does not lower the activation peak" % arch)
        for name, j in single.items():
            if "budget" in j and j["training"]["peak_activation_bytes"] > j["budget"]:
                failures.append("%s: %s peaks at %d B" % (arch, name, j["training"]["peak_activation_bytes"]))
    return front, single, wall, failures


def main():
    args = arguments(__doc__, ROOT, "checkpointing_tradeoffs")
    failures = []
    for arch in ARCHES:
        front, single, wall, bad = study(args.monet, args.out, arch, args.quick, args.check)
        failures += bad
        none = single["none"]
        print("\n### %s (GA: %.0f s, %d front points)\n" % (arch, wall, len(front)))
        print("| policy | activation peak (B) | latency (cycles) | Δ latency | energy (mJ) | recomputed MACs | "
              "peak off-chip (MB) | GA front at no more peak: latency (Δ) |")
        print("|---|---|---|---|---|---|---|---|")
        for name, j in single.items():
            peak = j["training"]["peak_activation_bytes"]
            ga = [float(r["latency_cycles"]) for r in front if float(r[PEAK]) <= peak]
            ga_text = "%s (%+.2f %%)" % (format(int(min(ga)), ","), 100 * (min(ga) / none["latency_cycles"] - 1)) if ga else "none"
            print("| %s | %s | %s | %+.2f %% | %.2f | %s | %.1f | %s |" % (
                name, format(peak, ","), format(j["latency_cycles"], ","),
                100 * (j["latency_cycles"] / none["latency_cycles"] - 1), j["energy_pj"] / 1e9,
                format(j["training"]["recompute_macs"], ","), j["peak_offchip_bytes"] / 1e6, ga_text))
        keep_svg(os.path.join(args.out, arch, "ga", "pareto.svg"), args.svg_dir, "checkpointing_tradeoffs_%s.svg" % arch)
    finish(failures)


if __name__ == "__main__":
    main()
