"""monet.Experiment: the space, evaluate() against the search's rows, a search's tables against its CSV files and
the CLI's, determinism over thread counts, Ctrl-C."""
import _thread
import threading
import time

import pandas
import pytest

import monet
from monet._convert import label_value
from conftest import DATA

TINY = str(DATA / "tiny_search.toml")


def read_csv(path):
    frame = pandas.read_csv(path, float_precision="round_trip")
    frame["reason"] = frame["reason"].fillna("").astype(str)
    return frame


def test_space():
    e = monet.Experiment(TINY)
    assert [g["name"] for g in e.space] == ["p2p_bw", "bus_bw", "dram_bw", "bus_energy", "fusion"]
    assert e.space[0]["choices"] == [16, 32, 64, 128, 256] and e.space[0]["bounds"] == (16, 256)
    assert e.space[0]["configured"] == 128 and e.space[0]["type"] == "ordinal"
    assert e.space[3]["choices"] == [0.5, 1.0, 2.0]
    assert e.space[4] == {"name": "fusion", "key": "fusion.plugin", "group": "fusion", "type": "categorical",
                          "choices": ["layer_by_layer", "fused_stacks"], "configured": "layer_by_layer"}
    assert [o["key"] for o in e.objectives] == ["latency_cycles", "energy_pj"]
    assert monet.Experiment("experiments/tiny_cnn_dual_core.toml").space == []


def test_search_tables_equal_its_csv_files_and_the_cli(cli, tmp_path):
    cli("run", TINY, "--out", tmp_path / "cli")
    s = monet.Experiment(TINY).search(out=tmp_path / "py")
    assert not s.stopped and len(s.evaluations) == 48
    for name, frame in (("evaluations.csv", s.evaluations), ("pareto.csv", s.pareto)):
        pandas.testing.assert_frame_equal(frame, read_csv(tmp_path / "py" / name))
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes()
    assert s.best.summary == monet.run(TINY).summary
    assert (tmp_path / "py" / "best" / "results.json").read_bytes() == (tmp_path / "cli" / "best" / "results.json").read_bytes()
    assert s.summary["schema"] == "monet.search/1"


def test_evaluate_equals_the_search_rows():
    e = monet.Experiment(TINY)
    s = e.search()
    names = [g["name"] for g in e.space]
    for row in s.evaluations.to_dict("records"):
        point = {n: label_value(str(row[n])) for n in names}
        got = e.evaluate(point)
        assert got == {"latency_cycles": row["latency_cycles"], "energy_pj": row["energy_pj"],
                       "feasible": row["feasible"], "violation": row["violation"], "reason": row["reason"]}
    assert e.evaluate({}) == e.evaluate({g["name"]: g["configured"] for g in e.space})  # left out: configured


def test_a_maximised_quality_objective_is_reported_as_its_value():
    # The co-search's [quality] table plugin: accuracy is maximised; the search minimises its negation.
    e = monet.Experiment("experiments/cosearch/nb201_edge_tpu_joint.toml",
                         {"search.population": 4, "search.generations": 1})
    assert {"key": "accuracy", "unit": "%", "maximise": True} in e.objectives
    s = e.search()
    row = s.evaluations.iloc[0]
    point = {g["name"]: label_value(str(row[g["name"]])) for g in e.space}
    got = e.evaluate(point)
    assert got["accuracy"] == row["accuracy"] and got["accuracy"] > 0


def test_bad_points():
    e = monet.Experiment(TINY)
    with pytest.raises(monet.InputError, match="no gene 'p2p'"):
        e.evaluate({"p2p": 16})
    with pytest.raises(monet.InputError, match="gene 'p2p_bw' has no value 17"):
        e.evaluate({"p2p_bw": 17})
    with pytest.raises(ValueError, match="threads"):
        e.evaluate_many([{}], threads=0)


def test_deterministic_at_1_and_2_threads():
    e = monet.Experiment(TINY)
    points = [{"p2p_bw": p, "bus_bw": b, "fusion": f} for p in (16, 64, 256) for b in (8, 64)
              for f in ("layer_by_layer", "fused_stacks")]
    one = monet.Experiment(TINY).evaluate_many(points, threads=1)
    assert one == e.evaluate_many(points, threads=2)
    assert one == [e.evaluate(p) for p in points]
    monet.set_threads(1)  # a process-wide cap: the same numbers again
    try:
        assert one == monet.Experiment(TINY).evaluate_many(points, threads=2)
    finally:
        monet.set_threads(None)
    pandas.testing.assert_frame_equal(monet.Experiment(TINY).search(threads=1).evaluations,
                                      monet.Experiment(TINY).search(threads=2).evaluations)


def test_ctrl_c_stops_a_search_and_keeps_what_was_done(tmp_path):
    # A search far longer than the test: Ctrl-C (as a notebook's interrupt sends) after 1.5 s.
    e = monet.Experiment("experiments/search/edge_tpu_hw_sweep.toml",
                         {"search.plugin": "random", "search.budget": 100000, "search.batch": 2})
    timer = threading.Timer(1.5, _thread.interrupt_main)
    timer.start()
    t0 = time.monotonic()
    with pytest.raises(KeyboardInterrupt) as raised:
        e.search(out=tmp_path / "stopped")
    timer.join()
    assert time.monotonic() - t0 < 30
    kept = raised.value.result
    assert kept is e.last_search and kept.stopped
    assert 0 < len(kept.evaluations) < 100000
    pandas.testing.assert_frame_equal(kept.evaluations, read_csv(tmp_path / "stopped" / "evaluations.csv"))
    # The interpreter and the experiment go on: the evaluator still answers.
    assert e.evaluate({})["feasible"] in (True, False)
