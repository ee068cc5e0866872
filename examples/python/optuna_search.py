#!/usr/bin/env python3
"""Optuna drives monet's evaluator: its NSGA-II and TPE samplers ask points of an experiment's [space]
(monet.Experiment.space), Experiment.evaluate scores them, and monet's own nsga2 searches the same space on the
same budget. Prints the hypervolume each reached after a share of the budget (docs/python.md).

    PYTHONPATH=build/python /usr/bin/python3 examples/python/optuna_search.py \
        --experiment experiments/search/edge_tpu_hw_sweep.toml --budget 200

Hypervolume: of the feasible non-dominated points found so far, every objective minimised (a maximised one
negated) and normalised by the ideal and nadir of all feasible points any method found, reference point 1.1.
"""
import argparse
import math
import time
import warnings

import optuna

import monet


def hypervolume(points, ref):
    """Exact hypervolume dominated by `points` (minimised) below `ref`, by slicing along the last objective."""
    points = [p for p in points if all(x < r for x, r in zip(p, ref))]
    if not points:
        return 0.0
    if len(ref) == 1:
        return ref[0] - min(p[0] for p in points)
    points.sort(key=lambda p: p[-1])
    volume = 0.0
    for i, p in enumerate(points):
        upper = points[i + 1][-1] if i + 1 < len(points) else ref[-1]
        if upper > p[-1]:
            volume += (upper - p[-1]) * hypervolume([q[:-1] for q in points[: i + 1]], ref[:-1])
    return volume


def front(points):
    return [p for p in points if not any(all(a <= b for a, b in zip(q, p)) and q != p for q in points)]


def minimised(experiment, evaluation):
    return [-evaluation[o["key"]] if o["maximise"] else evaluation[o["key"]] for o in experiment.objectives]


def optuna_run(experiment, sampler, budget):
    """The evaluations, in order, of an Optuna study of `budget` trials with `sampler`."""
    evaluations = []

    def objective(trial):
        point = {g["name"]: trial.suggest_categorical(g["name"], g["choices"]) for g in experiment.space}
        result = experiment.evaluate(point)
        evaluations.append(dict(result, point=tuple(point.values())))
        trial.set_user_attr("violation", result["violation"])
        values = minimised(experiment, result)
        if not all(math.isfinite(v) for v in values):
            return tuple(float("nan") for _ in values)  # not evaluable: a failed trial
        return tuple(-v if o["maximise"] else v for o, v in zip(experiment.objectives, values))

    directions = ["maximize" if o["maximise"] else "minimize" for o in experiment.objectives]
    study = optuna.create_study(directions=directions, sampler=sampler)
    study.optimize(objective, n_trials=budget)
    return evaluations


def monet_nsga2(path, overrides, budget, population):
    """monet's nsga2 on `budget` requested evaluations (its population, then one per generation): the rows of its
    evaluations.csv (distinct points, each with the batch that first asked for it)."""
    generations = max(1, budget // population - 1)  # the initial population, then one per generation
    e = monet.Experiment(path, {**overrides, "search.plugin": "nsga2", "search.population": population,
                                "search.generations": generations})
    s = e.search()
    rows = s.evaluations.to_dict("records") if hasattr(s.evaluations, "to_dict") else s.evaluations
    genes = [g["name"] for g in e.space]
    return [dict(r, feasible=bool(r["feasible"]), point=tuple(r[g] for g in genes)) for r in rows], e


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--experiment", default="experiments/search/edge_tpu_hw_sweep.toml")
    parser.add_argument("--budget", type=int, default=200, help="evaluations per method")
    parser.add_argument("--population", type=int, default=20, help="population of both NSGA-IIs")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    optuna.logging.set_verbosity(optuna.logging.ERROR)  # a point monet cannot evaluate is a failed trial, not news
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)  # constraints_func

    experiment = monet.Experiment(args.experiment)
    constraints = lambda trial: [trial.user_attrs["violation"]]  # noqa: E731 (Deb's violation, as monet's)
    runs = {}
    timings = {}
    for name, sampler in (
            ("optuna NSGA-II", optuna.samplers.NSGAIISampler(population_size=args.population, seed=args.seed,
                                                             constraints_func=constraints)),
            ("optuna TPE", optuna.samplers.TPESampler(seed=args.seed, constraints_func=constraints))):
        t0 = time.monotonic()
        runs[name] = optuna_run(experiment, sampler, args.budget)
        timings[name] = time.monotonic() - t0
    t0 = time.monotonic()
    runs["monet nsga2"], _ = monet_nsga2(args.experiment, {"experiment.seed": args.seed}, args.budget,
                                         args.population)
    timings["monet nsga2"] = time.monotonic() - t0

    # One normalisation for every method: the ideal and nadir of all feasible points found.
    feasible = {name: [minimised(experiment, r) for r in rows if r["feasible"]] for name, rows in runs.items()}
    everything = [p for points in feasible.values() for p in points]
    if not everything:
        raise SystemExit("no method found a feasible point")
    ideal = [min(p[k] for p in everything) for k in range(len(everything[0]))]
    nadir = [max(p[k] for p in everything) for k in range(len(everything[0]))]
    scale = [(n - i) or 1.0 for i, n in zip(ideal, nadir)]

    def asked_by(name, rows, n):
        """The evaluations of the first n requests: Optuna's trials, or monet's batches of `population` requests."""
        if name == "monet nsga2":
            return [r for r in rows if r["batch"] < n // args.population]
        return rows[:n]

    def hv_after(name, rows, n):
        points = [[(x - i) / s for x, i, s in zip(minimised(experiment, r), ideal, scale)]
                  for r in asked_by(name, rows, n) if r["feasible"]]
        return hypervolume(front(points), [1.1] * len(ideal))

    # Whole generations of monet's nsga2 (population requests each), so that every method had as many requests.
    marks = sorted({max(args.population, n // args.population * args.population)
                    for n in (args.budget // 4, args.budget // 2, args.budget)})
    print(f"{args.experiment}: {len(experiment.space)} genes, objectives "
          + ", ".join(o["key"] for o in experiment.objectives) + f"; budget {args.budget} evaluations per method")
    print("hypervolume after N requested evaluations; feasible: of the distinct points evaluated")
    print("method".ljust(16) + "".join(f"HV@{m}".rjust(10) for m in marks) + "distinct".rjust(10)
          + "feasible".rjust(10) + "time".rjust(9))
    for name, rows in runs.items():
        unique = {r["point"]: r for r in rows}.values()
        print(name.ljust(16) + "".join(f"{hv_after(name, rows, m):10.4f}" for m in marks)
              + f"{len(unique):10d}" + f"{sum(r['feasible'] for r in unique):10d}" + f"{timings[name]:8.1f}s")


if __name__ == "__main__":
    main()
