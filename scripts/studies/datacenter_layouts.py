#!/usr/bin/python3
"""The search at scale per GPU count (docs/datacenter-validation.md#best-layout-per-gpu-count): the best (tensor,
pipeline, data, micro-batch, recompute) layout of GPT-3 175B on Selene for each number of A100s, from the layout search
experiments/datacenter/gpt3_175b_1024_gpus_search.toml with its chips constraint set to that number.

    /usr/bin/python3 scripts/studies/datacenter_layouts.py [--monet PATH] [--out DIR] [--gpus 256 512 1024]
        [--system FILE] [--report-only]

Runs `monet run EXPERIMENT --out OUT/<gpus> --set space.constraints.chips.min=N --set ...max=N` (the data gene
already spans 4..1024), reads each pareto.csv and evaluations.csv back and prints one markdown table: per GPU
count, the fastest feasible layout, its step time, energy per step and memory per GPU, the throughput per GPU, and
how many layouts were feasible.
"""
import argparse
import csv
import json
import os
import subprocess
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EXPERIMENT = os.path.join(ROOT, "experiments", "datacenter", "gpt3_175b_1024_gpus_search.toml")


def run(monet, out, gpus, system):
    for n in gpus:
        cmd = [monet, "--log-level", "warn", "run", EXPERIMENT, "--out", os.path.join(out, str(n)),
               "--set", "space.constraints.chips.min=%d" % n, "--set", "space.constraints.chips.max=%d" % n]
        if system:
            cmd += ["--set", "architecture.system=\"%s\"" % os.path.abspath(system)]
        t0 = time.time()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        print("%d GPUs: %.1f s" % (n, time.time() - t0))


def report(out, gpus):
    print("| GPUs | best layout (t, p, d, micro-batch, recompute) | step (s) | TFLOP/s per GPU (model) | energy per step (kJ) "
          "| memory per GPU (GB) | feasible layouts |")
    print("|---|---|---|---|---|---|---|")
    for n in gpus:
        folder = os.path.join(out, str(n))
        rows = list(csv.DictReader(open(os.path.join(folder, "evaluations.csv"))))
        feasible = [r for r in rows if r["feasible"] == "true"]
        if not feasible:
            print("| %d | none fits | | | | | 0 |" % n)
            continue
        best = min(feasible, key=lambda r: float(r["step_time_s"]))
        j = json.load(open(os.path.join(folder, "best", "results.json")))
        layout = "%s, %s, %s, %s, %s" % (best["tensor"], best["pipeline"], best["data"], best["micro_batch"],
                                         best["recompute"].strip('"'))
        print("| %d | %s | %.2f | %.1f | %.1f | %.1f | %d |" % (
            n, layout, float(best["step_time_s"]), j["model_tflops_per_chip"], float(best["energy_per_step_j"]) / 1e3,
            j["system"]["memory_per_chip_bytes"]["total"] / 1e9, len(feasible)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--monet", default=os.path.join(ROOT, "build", "bin", "monet"))
    ap.add_argument("--out", default=os.path.join(ROOT, "results", "studies", "datacenter_layouts"))
    ap.add_argument("--gpus", type=int, nargs="+", default=[256, 512, 1024])
    ap.add_argument("--system", help="a system file instead of Selene (architectures/systems/)")
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args()
    if not a.report_only:
        run(a.monet, a.out, a.gpus, a.system)
    report(a.out, a.gpus)


if __name__ == "__main__":
    main()
