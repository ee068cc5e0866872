#!/usr/bin/python3
"""Study 2 of docs/results.md: layer fusion searched for a ResNet-18-CIFAR training step, compared with layer by
layer and with the best *inference* fusion applied to training, on the quad core and on the edge-TPU default.

    /usr/bin/python3 scripts/studies/fusion_for_training.py [--monet PATH] [--out DIR] [--quick] [--check]
        [--svg-dir DIR]

Per architecture (experiments/monet/fusion_for_training/{quad_core,edge_tpu}.toml: stack cuts after each residual
block and a tile count per block, NSGA-II, objectives latency and energy):
  1. the search for the training step (OUT/ARCH/training) and for the forward pass (OUT/ARCH/inference);
  2. the optimum of each by energy-delay product (EDP), always a front point, whose kept resolved.toml gives its
     fusion.stacks and fusion.stack_tiles;
  3. the inference optimum's stacks applied to the training step, and the training step layer by layer (single
     runs with `--unset space`).
--quick runs 4 x 1 (CI); --check exits 1 unless each search's pareto.csv is non-dominated, both optima are found
and re-running the inference optimum's stacks in inference mode reproduces the search's numbers exactly.
--svg-dir copies each training search's pareto.svg (drawn by monet) there.
"""
import json
import os
import sys
import tomllib

from study_runs import arguments, dominates, finish, keep_svg, monet_run, results, rows

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ARCHES = ["quad_core", "edge_tpu"]
QUICK = ["search.population=4", "search.generations=1"]


def experiment(arch):
    return os.path.join(ROOT, "experiments", "monet", "fusion_for_training", arch + ".toml")


def objectives(r):
    return [float(r["latency_cycles"]), float(r["energy_pj"])]


def edp_optimum(search_dir):
    """The front point of least EDP and the folder that keeps its full results (front/point-ID or best/)."""
    front = rows(os.path.join(search_dir, "pareto.csv"))
    best = min(front, key=lambda r: float(r["latency_cycles"]) * float(r["energy_pj"]))
    folder = os.path.join(search_dir, "front", "point-" + best["id"])
    if not os.path.isdir(folder):
        folder = os.path.join(search_dir, "best")
        with open(os.path.join(folder, "results.json")) as f:
            j = json.load(f)
        if [j["latency_cycles"], j["energy_pj"]] != objectives(best):
            sys.exit("no kept folder for front point %s of %s" % (best["id"], search_dir))
    return best, folder


def fusion_of(folder):
    with open(os.path.join(folder, "resolved.toml"), "rb") as f:
        fusion = tomllib.load(f)["fusion"]
    return fusion["stacks"], fusion.get("stack_tiles", [0] * len(fusion["stacks"]))


def toml_list(values):
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def study(monet, out, arch, quick, check):
    exp = experiment(arch)
    base = os.path.join(out, arch)
    extra = QUICK if quick else []
    wall = {}
    for mode in ("training", "inference"):
        sets = extra + (["training.mode=\"inference\""] if mode == "inference" else [])
        wall[mode] = monet_run(monet, exp, os.path.join(base, mode), sets)
    optima = {mode: edp_optimum(os.path.join(base, mode)) for mode in ("training", "inference")}
    stacks, tiles = fusion_of(optima["inference"][1])
    applied = ["fusion.stacks=" + toml_list(stacks), "fusion.stack_tiles=" + toml_list(tiles)]
    monet_run(monet, exp, os.path.join(base, "inference_fusion_on_training"), applied, ["space"])
    monet_run(monet, exp, os.path.join(base, "layer_by_layer"), ["fusion.plugin=\"layer_by_layer\""],
              ["space", "fusion.stacks"])
    monet_run(monet, exp, os.path.join(base, "layer_by_layer_inference"),
              ["fusion.plugin=\"layer_by_layer\"", "training.mode=\"inference\""], ["space", "fusion.stacks"])
    failures = []
    if check:
        for mode in ("training", "inference"):
            front = [objectives(r) for r in rows(os.path.join(base, mode, "pareto.csv"))]
            feasible = [objectives(r) for r in rows(os.path.join(base, mode, "evaluations.csv"))
                        if r["feasible"] == "true"]
            if any(dominates(p, f) for f in front for p in feasible):
                failures.append("%s %s: pareto.csv holds a dominated point" % (arch, mode))
        monet_run(monet, exp, os.path.join(base, "inference_again"), applied + ["training.mode=\"inference\""],
                  ["space"])
        again = results(os.path.join(base, "inference_again"))
        if [again["latency_cycles"], again["energy_pj"]] != objectives(optima["inference"][0]):
            failures.append("%s: the inference optimum's stacks re-run give other numbers" % arch)
    table = {
        "layer by layer": results(os.path.join(base, "layer_by_layer")),
        "inference-optimal fusion": results(os.path.join(base, "inference_fusion_on_training")),
        "training-optimal fusion": results(optima["training"][1]),
    }
    fusions = {"inference-optimal fusion": (stacks, tiles), "training-optimal fusion": fusion_of(optima["training"][1]),
               "layer by layer": ([], [])}
    forward = {"layer by layer": results(os.path.join(base, "layer_by_layer_inference")),
               "inference-optimal fusion": results(optima["inference"][1])}
    return table, fusions, forward, wall, failures


def describe(stacks, tiles):
    if not stacks:
        return "none"
    return "%d stacks, slots %s" % (len(stacks), "/".join(str(t) if t else "rows" for t in tiles))


def main():
    args = arguments(__doc__, ROOT, "fusion_for_training")
    failures = []
    for arch in ARCHES:
        table, fusions, forward, wall, bad = study(args.monet, args.out, arch, args.quick, args.check)
        failures += bad
        ref = table["training-optimal fusion"]
        ref_edp = ref["latency_cycles"] * ref["energy_pj"]
        print("\n### %s (searches: training %.0f s, inference %.0f s)\n" % (arch, wall["training"], wall["inference"]))
        print("| training step with | fusion | latency (cycles) | energy (mJ) | EDP vs training optimum | peak on-chip "
              "(kB, busiest core) | off-chip traffic (MB) | spilled (MB) |")
        print("|---|---|---|---|---|---|---|---|")
        for name, j in table.items():
            peak = max(c["peak_memory_bytes"] for c in j["architecture"]["cores"])
            print("| %s | %s | %s | %.2f | %+.1f %% | %.1f | %.1f | %.1f |" % (
                name, describe(*fusions[name]), format(j["latency_cycles"], ","), j["energy_pj"] / 1e9,
                100 * (j["latency_cycles"] * j["energy_pj"] / ref_edp - 1), peak / 1e3,
                (j["offchip_read_bytes"] + j["offchip_write_bytes"]) / 1e6, j["spilled_bytes"] / 1e6))
        f_ref = forward["inference-optimal fusion"]
        print("\nThe forward pass alone (inference):\n")
        print("| forward pass with | latency (cycles) | energy (mJ) | EDP vs inference optimum | off-chip traffic (MB) |")
        print("|---|---|---|---|---|")
        for name, j in forward.items():
            print("| %s | %s | %.2f | %+.1f %% | %.1f |" % (
                name, format(j["latency_cycles"], ","), j["energy_pj"] / 1e9,
                100 * (j["latency_cycles"] * j["energy_pj"] / (f_ref["latency_cycles"] * f_ref["energy_pj"]) - 1),
                (j["offchip_read_bytes"] + j["offchip_write_bytes"]) / 1e6))
        keep_svg(os.path.join(args.out, arch, "training", "pareto.svg"), args.svg_dir, "fusion_for_training_%s.svg" % arch)
    finish(failures)


if __name__ == "__main__":
    main()
