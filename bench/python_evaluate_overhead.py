#!/usr/bin/env python3
"""What Experiment.evaluate costs over the kernel's own search loop (docs/python.md#speed): the same points of the
edge-TPU hardware sweep (experiments/search/edge_tpu_hw_sweep.toml, its grid cut to --points points by the
values of its genes) evaluated on one thread (a) by the grid search in C++ (Experiment.search, the loop `monet
run` runs) and (b) one by one from a Python loop calling Experiment.evaluate (gene values to indices, the result
back as a dict). Each starts from a fresh Experiment (empty caches) after an untimed warm-up; the repetitions
alternate (a), (b) and the fastest of each is reported.

    PYTHONPATH=build/python /usr/bin/python3 bench/python_evaluate_overhead.py --points 1000
"""
import argparse
import itertools
import math
import time

import monet

SWEEP = "experiments/search/edge_tpu_hw_sweep.toml"
# 4 x 2 x 5 x 5 x 5 x 1 = 1,000 points; fewer by shortening the last lists.
GENES = {"n_simds": [16, 32, 64, 128], "compute_lanes": [2, 4],
         "pe_memory": [4194304, 8388608, 16777216, 25165824, 33554432],
         "register_file": [65536, 131072, 262144, 393216, 524288], "x": [1, 2, 4, 6, 8], "y": [2]}


def space_for(points):
    genes = {k: list(v) for k, v in GENES.items()}
    for name in ("x", "register_file", "pe_memory"):
        while len(genes[name]) > 1 and _size(genes) > points:
            genes[name].pop()
    return genes


def _size(genes):
    n = 1
    for v in genes.values():
        n *= len(v)
    return n


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--points", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=1)
    args = parser.parse_args()
    genes = space_for(args.points)
    overrides = {f"space.genes.{k}.values": v for k, v in genes.items()}
    overrides["search.plugin"] = "grid"
    names = list(genes)
    points = [dict(zip(names, values)) for values in itertools.product(*genes.values())]
    print(f"{SWEEP}: {len(points)} points, one thread")
    monet.set_threads(1)  # both on one thread: an evaluation costs its operators in parallel otherwise
    # The process's first experiment pays for warming up (libraries, allocator): not either side's cost.
    monet.Experiment(SWEEP, overrides).evaluate(points[0])
    kernel, python = [], []
    for _ in range(args.repetitions):
        e = monet.Experiment(SWEEP, overrides)
        t0 = time.perf_counter()
        s = e.search()
        kernel.append(time.perf_counter() - t0)
        assert len(s.evaluations) == len(points)
        e = monet.Experiment(SWEEP, overrides)
        t0 = time.perf_counter()
        with_python = [e.evaluate(p) for p in points]
        python.append(time.perf_counter() - t0)
        # The same numbers (a point that could not be evaluated has NaN objectives in both).
        keys = [o["key"] for o in e.objectives]
        by_point = {tuple(int(r[n]) for n in names): r for r in s.evaluations.to_dict("records")}
        for p, got in zip(points, with_python):
            row = by_point[tuple(p[n] for n in names)]
            same = all(got[k] == row[k] or (math.isnan(got[k]) and math.isnan(row[k])) for k in keys)
            assert same and got["feasible"] == row["feasible"], (p, got, row)
    k, p = min(kernel), min(python)
    print(f"kernel grid search  {k:8.2f} s  ({1e3 * k / len(points):.2f} ms per point)")
    print(f"Python evaluate()   {p:8.2f} s  ({1e3 * p / len(points):.2f} ms per point)")
    print(f"overhead            {100 * (p - k) / k:+8.1f} %")


if __name__ == "__main__":
    main()
