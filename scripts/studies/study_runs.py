"""What the study scripts share: running monet on an experiment with --set/--unset, and reading its outputs back."""
import argparse
import csv
import json
import os
import shutil
import subprocess
import sys
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


def arguments(doc, root, name, extra=()):
    """The options the search studies share: --monet, --out (default results/NAME), --quick, --check, --svg-dir;
    plus a study's own string options, (flag, default, help) each."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    for flag, default, text in extra:
        ap.add_argument(flag, default=default, help=text)
    ap.add_argument("--monet", default=os.path.join(root, "build", "bin", "monet"))
    ap.add_argument("--out", default=os.path.join(root, "results", name))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--svg-dir")
    return ap.parse_args()


def keep_svg(svg, svg_dir, name):
    """Copies a plot monet drew into --svg-dir (when given) as NAME."""
    if svg_dir:
        os.makedirs(svg_dir, exist_ok=True)
        shutil.copy(svg, os.path.join(svg_dir, name))


def finish(failures):
    """Reports the failed --check properties; exit code 1 if any."""
    for f in failures:
        print("check failed: " + f, file=sys.stderr)
    sys.exit(1 if failures else 0)
