"""What the study scripts share: running monet on an experiment with --set/--unset, and reading its outputs back."""
import csv
import json
import os
import subprocess
import time


def monet_run(monet, exp, out, sets, unsets=()):
    """`monet run EXP --out OUT` with --unset and --set options; returns the wall-clock seconds."""
    args = [monet, "run", exp, "--out", out, "--log-level", "warn"]
    for u in unsets:
        args += ["--unset", u]
    for s in sets:
        args += ["--set", s]
    start = time.monotonic()
    subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
    return time.monotonic() - start


def rows(path):
    """The rows of a CSV monet wrote (evaluations.csv, pareto.csv), as dicts."""
    with open(path) as f:
        return list(csv.DictReader(l for l in f if not l.startswith("#")))


def results(folder):
    with open(os.path.join(folder, "results.json")) as f:
        return json.load(f)


def dominates(a, b):
    """Pareto dominance for minimised objectives."""
    return all(x <= y for x, y in zip(a, b)) and any(x < y for x, y in zip(a, b))
