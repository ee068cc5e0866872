"""monet from Python: the kernel library in-process (docs/python.md).

    import monet
    r = monet.run("experiments/quickstart.toml")
    r.summary["latency_cycles"]          # results.json as a dict, the CLI's numbers
    e = monet.Experiment("experiments/search/edge_tpu_hw_sweep.toml")
    e.space                              # the genes: name, type, choices
    e.evaluate({"array": 32})            # one design point through the search's cached evaluator

Bad input raises monet.InputError with the CLI's located message (file:line:column: error: ...). The GIL is
released while the kernel works; Ctrl-C stops a search after its running batch and raises KeyboardInterrupt with
what was evaluated kept (the exception's .result, and Experiment.last_search).
"""
import json as _json
import os as _os

from . import _monet
from ._convert import label_value as _label_value
from ._convert import set_strings as _set_strings
from ._convert import table as _table
from ._convert import toml_value as _toml_value
from ._convert import value_key as _value_key

__all__ = ["run", "Experiment", "inspect", "plugins", "Result", "SearchResult", "InputError", "set_log_level", "set_threads",
           "__version__"]

InputError = _monet.InputError
InputError.__doc__ = ("Bad input (an experiment, architecture, core or workload file, an override, an argument): "
                      "the message is the CLI's, 'file:line:column: error: what was expected'.")
__version__ = _monet.version


def set_log_level(level):
    """The kernel's log level: "trace", "debug", "info", "warn" (the default), "error" or "off" (to stderr)."""
    _monet.set_log_level(level)


def set_threads(threads):
    """Caps the kernel's worker threads for every later call, evaluate() included (an evaluation costs its
    operators in parallel); None lifts the cap. A call's own `threads` may lower it for that call, not raise it."""
    _monet.set_threads(0 if threads is None else _threads(threads))


def _threads(threads):
    if threads is None:
        return 0
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads: expected a number >= 1 or None (one per hardware thread), got {threads!r}")
    return threads


def _out(out):
    return "" if out is None else _os.fspath(out)


class Result:
    """One run of an experiment: what `monet run` writes.

    summary    results.json as a dict (every number with its unit in its key)
    schedule   schedule.csv: a pandas DataFrame (a list of dicts without pandas), one row per computation node
    transfers  transfers.csv, the same way, one row per transfer
    out        the output folder when one was written, else None
    text       the summary the CLI prints
    search     the SearchResult when the experiment has a [space] (the run is of its best point), else None
    """

    def __init__(self, files, out, search=None):
        self.summary = _json.loads(files["results_json"])
        self.schedule = _table(files["schedule_csv"])
        self.transfers = _table(files["transfers_csv"])
        self.text = files["text"]
        self.out = out
        self.search = search

    def __repr__(self):
        s = self.summary
        return f"<monet.Result {s.get('experiment', '')}: {s.get('latency_cycles')} cycles, {s.get('energy_pj')} pJ>"


class SearchResult:
    """A search of an experiment's [space]: what `monet run` writes for it.

    evaluations  evaluations.csv as a DataFrame (list of dicts without pandas): every distinct point in the order
                 first asked for, its batch, one column per gene (the value's TOML text), every objective,
                 feasible, violation, reason
    pareto       pareto.csv, the same columns for the non-dominated feasible points
    summary      search.json as a dict
    stopped      True when the search was stopped (Ctrl-C) or a point failed: what was evaluated is kept
    best         the Result of the best point (best/ of the output folder), or None
    out          the output folder when one was written, else None
    """

    def __init__(self, raw, out):
        self.evaluations = _table(raw["evaluations_csv"])
        self.pareto = _table(raw["pareto_csv"])
        self.summary = _json.loads(raw["search_json"])
        self.stopped = raw["stopped"]
        self.out = out
        self.best = Result(raw["best"], None if out is None else _os.path.join(out, "best")) if raw["best"] else None

    def __repr__(self):
        n = len(self.evaluations)
        return f"<monet.SearchResult {n} evaluations, {len(self.pareto)} on the front{', stopped' if self.stopped else ''}>"


class Experiment:
    """An experiment file loaded and validated once, with the evaluator its search uses.

    Experiment(path, overrides=None): `overrides` is a dict of --set paths to Python values, e.g.
    {"training.optimizer.plugin": "sgd", "architecture.set.cores.core0.array": 16}. Raises InputError as `monet
    validate` / `monet run` would.

    space        the genes of its [space]: a list of dicts with name, key, group, type ("ordinal" or
                 "categorical"), choices (the values, as Python objects), configured (the experiment's own value)
                 and, for ordinal numeric genes, bounds (smallest, largest); empty without a [space]
    objectives   the objectives: a list of dicts with key (the results.json key), unit and maximise
    constraints  the constraints, as text
    last_search  the SearchResult of the last search() (also when it was interrupted), or None
    """

    def __init__(self, path, overrides=None):
        self.path = _os.fspath(path)
        self._sets = _set_strings(overrides)
        self._loaded = _monet._LoadedExperiment(self.path, self._sets)
        self.objectives = self._loaded.objectives()
        self.constraints = self._loaded.constraints()
        self.last_search = None
        self._genes = self._loaded.genes()
        self.space = []
        self._index = []  # per gene: value key -> index
        for g in self._genes:
            choices = [_label_value(label) for label in g["labels"]]
            gene = {"name": g["name"], "key": g["key"], "group": g["group"],
                    "type": "ordinal" if g["ordinal"] else "categorical", "choices": choices,
                    "configured": choices[g["configured"]]}
            if g["ordinal"] and all(isinstance(c, (int, float)) and not isinstance(c, bool) for c in choices):
                gene["bounds"] = (min(choices), max(choices))
            self.space.append(gene)
            self._index.append({_value_key(c): i for i, c in enumerate(choices)})
        self._by_name = {g["name"]: i for i, g in enumerate(self.space)}

    def __repr__(self):
        return f"<monet.Experiment {self.path}: {len(self.space)} genes>"

    def _genes_of(self, point):
        """A point (gene name -> value; a gene left out keeps its configured value) as value indices."""
        if not isinstance(point, dict):
            raise TypeError("a point is a dict of gene names to values, got " + type(point).__name__)
        indices = [g["configured"] for g in self._genes]
        for name, value in point.items():
            g = self._by_name.get(name)
            if g is None:
                raise InputError(f"{self.path}: error: the space has no gene '{name}'; genes: "
                                 + ", ".join(self._by_name))
            i = self._index[g].get(_value_key(value))
            if i is None:
                raise InputError(f"{self.path}: error: gene '{name}' has no value {value!r}; values: "
                                 + ", ".join(repr(c) for c in self.space[g]["choices"]))
            indices[g] = i
        return indices

    def _evaluation(self, raw):
        values, violation, reason = raw
        out = {o["key"]: v for o, v in zip(self.objectives, values)}
        out["feasible"] = violation == 0
        out["violation"] = violation
        out["reason"] = reason
        return out

    def evaluate(self, point):
        """One design point's objectives (as results.json reports them: a maximised one as its value), feasible,
        violation (Deb's constraint violation, 0 when feasible) and reason ("" when feasible), through the
        cached evaluator a search of this experiment uses: the same numbers as its row of evaluations.csv.
        `point` maps gene names to values (Experiment.space); a gene left out keeps its configured value."""
        return self._evaluation(self._loaded.evaluate(self._genes_of(point)))

    def evaluate_many(self, points, threads=None):
        """evaluate() for each of `points`, in parallel on `threads` worker threads (None: one per hardware
        thread); the results are in the order of `points` and the same for any thread count."""
        genes = [self._genes_of(p) for p in points]
        return [self._evaluation(r) for r in self._loaded.evaluate_many(genes, _threads(threads))]

    def search(self, out=None, threads=None):
        """Runs the experiment's [search] plugin over its [space] and returns a SearchResult; with `out`, writes the
        folder `monet run --out OUT` writes (evaluations.csv, pareto.csv, search.json, best/, ...). Ctrl-C stops
        it after the running batch: the folder is written with what was evaluated, then KeyboardInterrupt is
        raised with the SearchResult as its .result (and as last_search)."""
        raw = self._loaded.search(_out(out), _threads(threads), True)
        result = SearchResult(raw, None if out is None else _os.fspath(out))
        self.last_search = result
        if raw["interrupt"] is not None:
            interrupt = raw["interrupt"]
            interrupt.result = result
            raise interrupt
        if raw["failure"]:
            error = RuntimeError(raw["failure"])
            error.result = result
            raise error
        return result

    def run(self, out=None, threads=None):
        """The experiment's run (what monet.run does): a Result; with a [space], the search's best point's."""
        if self._loaded.has_space:
            found = self.search(out, threads)
            if found.best is None:
                raise RuntimeError("no point of the search could be evaluated")
            found.best.search = found
            return found.best
        return Result(self._loaded.run(_out(out), _threads(threads)), None if out is None else _os.fspath(out))


def run(path, overrides=None, out=None, threads=None):
    """What `monet run PATH [--set K=V]... [--out OUT] [--threads N]` does, in-process: returns a Result whose
    summary is results.json (the CLI's numbers). `overrides` is a dict of --set paths to Python values. Nothing is
    written unless `out` is given. An experiment with a [space] is searched; the Result is then its best point's,
    with the SearchResult as .search."""
    return Experiment(path, overrides).run(out, threads)


_INSPECT_OPTIONS = ("batch", "plugin", "optimizer", "loss", "precision", "micro_batches", "checkpoint", "offload",
                    "checkpoint_semantics", "checkpoint_solver")


def inspect(workload, training=False, **options):
    """What `monet inspect WORKLOAD --json` prints, as a dict. `training=True` shows one training step (autodiff and
    the optimizer); options as the CLI's flags: batch, plugin, optimizer, loss, precision, micro_batches,
    checkpoint, offload, checkpoint_semantics, checkpoint_solver, and sets (a dict of frontend parameters, the
    CLI's --set)."""
    request = _monet._InspectRequest()
    request.workload = _os.fspath(workload)
    request.training = bool(training)
    sets = options.pop("sets", None)
    if sets is not None:
        if not isinstance(sets, dict):
            raise TypeError("sets: expected a dict of frontend parameters to values")
        request.sets = [f"{k}={_toml_value(v, str(k))}" for k, v in sets.items()]
    for name, value in options.items():
        if name not in _INSPECT_OPTIONS:
            raise TypeError(f"inspect() has no option '{name}'; options: sets, " + ", ".join(_INSPECT_OPTIONS))
        setattr(request, name, value)
    return _json.loads(_monet.inspect_json(request))


def plugins(kind=None):
    """Every plugin found (as `monet plugins`, the parameters as `--describe`): a list of dicts with kind, name,
    version, summary, description, library, file_extensions and parameters (name, type, unit, required, default
    as TOML text, bounds, choices, doc). `kind` ("frontend", "search", ...) keeps one kind."""
    found = _monet.plugins()
    if kind is not None:
        kinds = sorted({p["kind"] for p in found})
        if kind not in kinds:
            raise InputError(f"kind: error: '{kind}' is not a plugin kind; kinds: " + ", ".join(kinds))
        found = [p for p in found if p["kind"] == kind]
    return found
