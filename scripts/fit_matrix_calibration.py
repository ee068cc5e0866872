#!/usr/bin/env python3
"""Fits a gpu calibration table's matrix efficiencies to published training steps, one factor per table and datatype.

Writes OUTPUT = BASE whose rows of each table and datatype given (--rows matrix:fp8,fused_matrix:bf16; type * = the
rows every other datatype reads) are BASE's rows for them (its own, else the table's *, else for fused_matrix the
matrix rows it would read) times that pair's factor, capped at 1. The factors
minimise the sum of squared relative errors of monet's step against the published step of the given experiments
(each experiment names its published step in a comment: "a step of ... = X s"). A step is close to linear in
1/factor, so each round runs every experiment at the current factors and once more per datatype with its factor
moved, solves the linear least squares for 1/factor and repeats until the factors move less than 1e-4.
The experiments must read OUTPUT (their [architecture.set] calibration). Standard library only; runs build/bin/monet.

  scripts/fit_matrix_calibration.py BASE OUTPUT --rows matrix:fp8,fused_matrix:bf16 --header "..." EXPERIMENT...
"""
import argparse
import json
import pathlib
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent


def published_step(experiment):
    m = re.search(r"a step of [^\n]*?= ([0-9.]+) s", experiment.read_text())
    if not m:
        sys.exit(f"{experiment}: no published step ('a step of ... = X s') in its comments")
    return float(m.group(1))


def base_rows(base_lines, table, type_):
    rows = [l.split(",") for l in base_lines if l.startswith(table + ",")]
    own = [r for r in rows if r[1] == type_] or [r for r in rows if r[1] == "*"]
    return own or (base_rows(base_lines, "matrix", type_) if table == "fused_matrix" else [])


def write_table(base_lines, output, factors, header):
    scaled = []
    for (table, type_), f in factors.items():
        rows = base_rows(base_lines, table, type_)
        if not rows:
            sys.exit(f"the base table has no {table} rows for {type_}")
        scaled += [f"{table},{type_},{r[2]},{min(1.0, float(r[3]) * f):.4g}" for r in rows]
    body = [l for l in base_lines if tuple(l.split(",")[:2]) not in factors]
    comment = [("# " + l).rstrip() for l in header.splitlines()]
    output.write_text("\n".join(comment + [body[0]] + scaled + body[1:]) + "\n")


def steps(experiments, out):
    s = []
    for e in experiments:
        r = subprocess.run([str(ROOT / "build/bin/monet"), "run", str(e), "--out", out], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"{e}: monet failed:\n{r.stderr}")
        s.append(json.loads((pathlib.Path(out) / "results.json").read_text())["step_time_s"])
    return s


def solve(a, b):
    """Least squares a x = b (a: rows of k coefficients), by the normal equations and Gaussian elimination."""
    k = len(a[0])
    m = [[sum(r[i] * r[j] for r in a) for j in range(k)] + [sum(r[i] * y for r, y in zip(a, b))] for i in range(k)]
    for i in range(k):
        p = max(range(i, k), key=lambda r: abs(m[r][i]))
        m[i], m[p] = m[p], m[i]
        for r in range(k):
            if r != i:
                q = m[r][i] / m[i][i]
                m[r] = [x - q * y for x, y in zip(m[r], m[i])]
    return [m[i][k] / m[i][i] for i in range(k)]


def fit(base, output, experiments, types, header, out):
    """The factors, and the table written with them."""
    published = [published_step(e) for e in experiments]
    factors = {t: 1.0 for t in types}
    for _ in range(8):
        write_table(base, output, factors, header)
        s0 = steps(experiments, out)
        slopes = []  # d step / d (1/factor), per datatype
        for t in types:
            moved = dict(factors)
            moved[t] = factors[t] * 0.9
            write_table(base, output, moved, header)
            s1 = steps(experiments, out)
            du = 1 / moved[t] - 1 / factors[t]
            slopes.append([(y - x) / du for x, y in zip(s0, s1)])
        # step_i(u) = s0_i + sum_k slope_ki (u_k - u0_k); minimise sum_i (step_i / p_i - 1)^2 over u = 1/factor.
        rows = [[slopes[k][i] / published[i] for k in range(len(types))] for i in range(len(published))]
        rhs = [1 - s0[i] / published[i] + sum(rows[i][k] / factors[t] for k, t in enumerate(types))
               for i in range(len(published))]
        new = {t: 1 / u for t, u in zip(types, solve(rows, rhs))}
        done = all(abs(new[t] - factors[t]) < 1e-4 for t in types)
        factors = new
        if done:
            break
    write_table(base, output, factors, header)
    return factors


def errors(experiments, out):
    return [x / published_step(e) - 1 for x, e in zip(steps(experiments, out), experiments)]


def summary(e):
    return (f"mean error {sum(e) / len(e) * 100:+.2f} %, mean |error| {sum(abs(x) for x in e) / len(e) * 100:.2f} %, "
            f"max |error| {max(abs(x) for x in e) * 100:.2f} %")


def main():
    a = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("base", type=pathlib.Path)
    a.add_argument("output", type=pathlib.Path)
    a.add_argument("experiments", type=pathlib.Path, nargs="+")
    a.add_argument("--rows", default="matrix:*",
                   help="comma-separated table:datatype pairs, one factor each (default matrix:*)")
    a.add_argument("--header", default="", help="the comment the fitted table starts with")
    a.add_argument("--leave-one-out", action="store_true",
                   help="also fit on all experiments but one and report that one's error (out of sample)")
    args = a.parse_args()
    base = [l for l in args.base.read_text().splitlines() if l.strip() and not l.startswith("#")]
    types = [tuple(x.split(":")) for x in args.rows.split(",")]
    if any(len(t) != 2 or t[0] not in ("matrix", "fused_matrix") for t in types):
        sys.exit("--rows: expected matrix:TYPE or fused_matrix:TYPE pairs")
    with tempfile.TemporaryDirectory() as out:
        held_out = []
        if args.leave_one_out:
            for i, e in enumerate(args.experiments):
                others = args.experiments[:i] + args.experiments[i + 1:]
                fit(base, args.output, others, types, args.header, out)
                held_out += errors([e], out)
        factors = fit(base, args.output, args.experiments, types, args.header, out)
        e = errors(args.experiments, out)
    for i, (x, err) in enumerate(zip(args.experiments, e)):
        print(f"{x.name:40s} {err * 100:+6.2f} %" + (f"   left out: {held_out[i] * 100:+6.2f} %" if held_out else ""))
    print("factors " + ", ".join(f"{t[0]}:{t[1]} {f:.4f}" for t, f in factors.items()) + "; " + summary(e))
    if held_out:
        print("left out, each fitted on the others: " + summary(held_out))


if __name__ == "__main__":
    main()
