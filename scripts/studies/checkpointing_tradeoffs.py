#!/usr/bin/python3
"""Study 3 of docs/results.md: activation-checkpointing trade-offs of a training step — ResNet-18-CIFAR and MONET's
small GPT-2 — on MONET's edge-TPU template, the MCU-class core and the quad core: the GA's front (NSGA-II over
keep / recompute per block) against the optimal policy (exact DP over the same per-block choices, recompute cost =
latency on the cores) at budgets taken from the GA's front, against every_k = "sqrt" (Chen et al.),
checkpoint_sequential's segments and no checkpointing; then the MONeT comparison (memory reduction against
recompute overhead).

    /usr/bin/python3 scripts/studies/checkpointing_tradeoffs.py [--monet PATH] [--out DIR] [--quick] [--check]
        [--svg-dir DIR] [--workloads resnet18_cifar,gpt2_monet_small] [--arches edge_tpu,mcu,quad_core]

Per workload and architecture (experiments/monet/checkpointing_tradeoffs/ARCH.toml, its workload replaced with
--set workload.file for the GPT-2): the search into OUT/[WORKLOAD/]ARCH/ga (every front point's results kept),
then single runs (`--unset space`) of none, every_k = "sqrt", segments = 2..8 (those the network's top-level
items allow) and optimal at three budgets (the GA front's smallest, median and largest activation peaks below no
checkpointing's, or of every feasible point the GA evaluated when its front has fewer; solvers in SOLVERS). A single run whose schedule overflows a core is reported and marked. Defaults: ResNet-18-CIFAR on edge_tpu and mcu. --quick runs the GA 4 x 1 and the solvers after the first at one budget (CI); --check exits 1
unless the GA's pareto.csv is non-dominated among its feasible points, sqrt(n) lowers the activation peak, and
every optimal run stays within its budget. --svg-dir copies the GA's pareto.svg (drawn by monet) there.
"""
import os
import subprocess

from study_runs import arguments, dominates, finish, keep_svg, monet_run, results, rows

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
# The workload each name runs: None keeps the experiment's own (ResNet-18-CIFAR, batch 4); paths are relative to
# the experiment file, as monet resolves them.
WORKLOADS = {"resnet18_cifar": None, "gpt2_monet_small": "../../../workloads/onnx/gpt2_monet_small.onnx"}
# The optimal policy's solvers, the first the reference (never refused). Each pass of the small GPT-2's shared layer
# is a block of its own (docs/training.md "Modules called several times"), so its blocks are a chain: the
# per-block DP, the MILP (which assumes no chain) beside it, and Rotor's runs of blocks and nested schedules.
SOLVERS = {"resnet18_cifar": ["dp"], "gpt2_monet_small": ["dp", "milp", "segments", "rotor"]}
PEAK = "training.peak_activation_bytes"
# MONeT (Shah et al., ICLR 2021, abstract): "3x" less memory for "9-16%" more computation (GPU, PyTorch models).
MONET_REDUCTION, MONET_OVERHEAD = 3.0, 0.16


def study(monet, out, workload, arch, quick, check):
    exp = os.path.join(ROOT, "experiments", "monet", "checkpointing_tradeoffs", arch + ".toml")
    # ResNet-18-CIFAR keeps the folders (and plot names) Study 3 always had.
    base = os.path.join(out, arch) if workload == "resnet18_cifar" else os.path.join(out, workload, arch)
    common = ["workload.file=\"%s\"" % WORKLOADS[workload]] if WORKLOADS[workload] else []
    sets = ["search.population=4", "search.generations=1"] if quick else []
    # Every front point's full results (recomputed MACs, energy) for the MONeT comparison.
    wall = monet_run(monet, exp, os.path.join(base, "ga"), common + sets + ["output.front_points=1000"])
    front = sorted(rows(os.path.join(base, "ga", "pareto.csv")), key=lambda r: float(r[PEAK]))
    single = {}

    def run(name, folder, extra):
        # A policy whose schedule overflows a core is reported (and marked) rather than refused, as the GA does.
        monet_run(monet, exp, os.path.join(base, folder), common + extra + ["schedule.allow_over_capacity=true"], ["space"])
        single[name] = results(os.path.join(base, folder))

    run("none", "none", [])
    run("every_k = \"sqrt\"", "sqrt", ["training.checkpoint.every_k=\"sqrt\""])
    for k in range(2, 9):
        try:
            run("segments = %d" % k, "segments_%d" % k, ["training.checkpoint.segments=%d" % k])
        except subprocess.CalledProcessError as e:
            if e.returncode != 2:
                raise
            break  # bad input: more segments than top-level items (monet's message on stderr), as in checkpoint_sequential
    none_peak = single["none"]["training"]["peak_activation_bytes"]
    peaks = sorted({int(float(r[PEAK])) for r in front if float(r[PEAK]) < none_peak})
    if len(peaks) < 3:  # a front of few points (the small GPT-2's): budgets from every feasible point evaluated
        peaks = sorted({int(float(r[PEAK])) for r in rows(os.path.join(base, "ga", "evaluations.csv"))
                        if r["feasible"] == "true" and float(r[PEAK]) < none_peak})
    budgets = sorted({peaks[0], peaks[len(peaks) // 2], peaks[-1]}) if peaks else []
    for solver in SOLVERS[workload]:
        # --quick (CI): the other solvers at the smallest budget only.
        for b in budgets if solver == SOLVERS[workload][0] or not quick else budgets[:1]:
            name = "optimal (%s), budget %s B" % (solver, format(b, ","))
            try:
                run(name, "optimal_%s_%d" % (solver, b), ["training.checkpoint.budget=%d" % b,
                                                           "training.checkpoint.cost=\"latency\"",
                                                           "training.checkpoint.solver=\"%s\"" % solver])
            except subprocess.CalledProcessError as e:
                # A chain DP on blocks that are not a chain: monet measures its choice and refuses it (exit 2).
                # The workload's reference solver (the first) must never be refused.
                if e.returncode != 2 or solver == SOLVERS[workload][0]:
                    raise
                single[name] = {"refused": "refused: the blocks are not a chain (the choice's measured peak is "
                                           "not the model's)", "feasible": False}
                continue
            single[name]["budget"] = b
    failures = []
    label = "%s on %s" % (workload, arch)
    if check:
        feasible = [[float(r[PEAK]), float(r["latency_cycles"])] for r in rows(os.path.join(base, "ga", "evaluations.csv"))
                    if r["feasible"] == "true"]
        for r in front:
            if any(dominates(p, [float(r[PEAK]), float(r["latency_cycles"])]) for p in feasible):
                failures.append("%s: pareto.csv holds a dominated point" % label)
        if single["every_k = \"sqrt\""]["training"]["peak_activation_bytes"] >= none_peak:
            failures.append("%s: sqrt(n) checkpointing does not lower the activation peak" % label)
        for name, j in single.items():
            if "budget" in j and j["training"]["peak_activation_bytes"] > j["budget"]:
                failures.append("%s: %s peaks at %d B" % (label, name, j["training"]["peak_activation_bytes"]))
    ga_points = [results(os.path.join(base, "ga", "front", d)) for d in sorted(os.listdir(os.path.join(base, "ga", "front")))] \
        if os.path.isdir(os.path.join(base, "ga", "front")) else []
    return front, single, ga_points, wall, failures


def table(workload, arch, front, single, wall):
    none = single["none"]
    print("\n### %s on %s (GA: %.0f s, %d front points)\n" % (workload, arch, wall, len(front)))
    print("| policy | activation peak (B) | latency (cycles) | Δ latency | energy (mJ) | Δ energy | recomputed MACs | "
          "peak off-chip (MB) | GA front at no more peak: latency (Δ) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, j in single.items():
        if "refused" in j:
            print("| %s | %s | | | | | | | |" % (name, j["refused"]))
            continue
        peak = j["training"]["peak_activation_bytes"]
        ga = [float(r["latency_cycles"]) for r in front if float(r[PEAK]) <= peak]
        ga_text = "%s (%+.2f %%)" % (format(int(min(ga)), ","), 100 * (min(ga) / none["latency_cycles"] - 1)) if ga else "none"
        print("| %s | %s | %s | %+.2f %% | %.2f | %+.2f %% | %s | %.1f | %s |" % (
            name + ("" if j["feasible"] else " (over a core's capacity)"), format(peak, ","), format(j["latency_cycles"], ","),
            100 * (j["latency_cycles"] / none["latency_cycles"] - 1), j["energy_pj"] / 1e9,
            100 * (j["energy_pj"] / none["energy_pj"] - 1),
            format(j["training"]["recompute_macs"], ","), j["peak_offchip_bytes"] / 1e6, ga_text))


def monet_comparison(entries):
    """MONeT's measure: memory reduction (none's backward activation peak / the point's) against the recompute
    overhead that reaches it, over every point run (single policies and the GA's front)."""
    print("\n### MONeT comparison\n")
    print("| network | architecture | largest reduction | least Δ latency there | least recomputed MACs there "
          "(% of the step's) | largest reduction at Δ latency ≤ 16 % | largest reduction at recomputed MACs ≤ 16 % |")
    print("|---|---|---|---|---|---|---|")
    for workload, arch, points in entries:
        none = points[0]
        points = [j for j in points if j["feasible"]]  # a point that overflows a core does not run there
        def red(j):
            return none["training"]["peak_activation_bytes"] / j["training"]["peak_activation_bytes"]
        def lat(j):
            return j["latency_cycles"] / none["latency_cycles"] - 1
        def macs(j):
            return j["training"]["recompute_macs"] / none["training"]["macs_total"]
        best = max(red(j) for j in points)
        at = [j for j in points if red(j) >= best]
        within_lat = max(red(j) for j in points if lat(j) <= MONET_OVERHEAD)
        within_macs = max(red(j) for j in points if macs(j) <= MONET_OVERHEAD)
        print("| %s | %s | %.2f× | %+.2f %% | %.2f %% | %.2f× | %.2f× |" % (
            workload, arch, best, 100 * min(lat(j) for j in at), 100 * min(macs(j) for j in at), within_lat, within_macs))
    print("| MONeT (Shah et al. 2021; GPU, whole training memory) | | %.0f× | 9–16 %% (compute) | | | |" % MONET_REDUCTION)


def main():
    args = arguments(__doc__, ROOT, "checkpointing_tradeoffs", extra=[
        ("--workloads", "resnet18_cifar", "comma-separated: " + ", ".join(WORKLOADS)),
        ("--arches", "edge_tpu,mcu", "comma-separated: experiments/monet/checkpointing_tradeoffs/ARCH.toml")])
    failures = []
    entries = []
    for workload in args.workloads.split(","):
        for arch in args.arches.split(","):
            front, single, ga_points, wall, bad = study(args.monet, args.out, workload, arch, args.quick, args.check)
            failures += bad
            table(workload, arch, front, single, wall)
            entries.append((workload, arch, list(single.values()) + ga_points))
            base = os.path.join(args.out, arch) if workload == "resnet18_cifar" else os.path.join(args.out, workload, arch)
            name = "checkpointing_tradeoffs_%s.svg" % (arch if workload == "resnet18_cifar" else workload + "_" + arch)
            keep_svg(os.path.join(base, "ga", "pareto.svg"), args.svg_dir, name)
    monet_comparison(entries)
    finish(failures)


if __name__ == "__main__":
    main()
