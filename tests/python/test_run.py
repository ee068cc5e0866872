"""monet.run and monet.inspect against the CLI: the same numbers from the same inputs."""
import json
import re

import pandas
import pytest

import monet
from conftest import DATA, read_json

# A training step on a single core (resnet18_cifar_training), one on four cores with layer fusion (the quickstart's
# edge-TPU SoC and Stream's quad-core accelerator).
EXPERIMENTS = ["experiments/quickstart.toml", "experiments/resnet18_cifar_training.toml",
               "experiments/resnet18_cifar_training_quad_core.toml"]


@pytest.mark.parametrize("experiment", EXPERIMENTS)
def test_run_equals_the_cli(experiment, cli, tmp_path):
    cli("run", experiment, "--out", tmp_path / "cli")
    expected = read_json(tmp_path / "cli" / "results.json")
    r = monet.run(experiment)
    assert r.summary == expected  # every number parsed from the same text: exact
    assert r.out is None
    assert isinstance(r.schedule, pandas.DataFrame) and isinstance(r.transfers, pandas.DataFrame)
    pandas.testing.assert_frame_equal(
        r.schedule, pandas.read_csv(tmp_path / "cli" / "schedule.csv", float_precision="round_trip"))
    pandas.testing.assert_frame_equal(
        r.transfers, pandas.read_csv(tmp_path / "cli" / "transfers.csv", float_precision="round_trip"))


def test_run_writes_the_cli_folder(cli, tmp_path):
    cli("run", "experiments/tiny_cnn_dual_core.toml", "--out", tmp_path / "cli")
    r = monet.run("experiments/tiny_cnn_dual_core.toml", out=tmp_path / "py")
    assert r.out == str(tmp_path / "py")
    assert r.summary["latency_cycles"] == 1414
    for name in ("results.json", "schedule.csv", "transfers.csv", "resolved.toml"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    # The folder exists now: with [output] overwrite = false it is refused before any work, as by the CLI.
    done = cli("run", "experiments/tiny_cnn_dual_core.toml", "--out", tmp_path / "py", "--set", "output.overwrite=false",
               check=False)
    assert done.returncode == 2
    with pytest.raises(monet.InputError) as raised:
        monet.run("experiments/tiny_cnn_dual_core.toml", {"output.overwrite": False}, out=tmp_path / "py")
    assert str(raised.value) == done.stderr.strip()


def test_overrides_equal_the_cli_set(cli, tmp_path):
    overrides = {"architecture.links.p2p.bandwidth_bits_per_cycle": 16, "fusion.plugin": "fused_stacks",
                 "cost_model.roofline.utilization": 0.5}
    sets = ["architecture.links.p2p.bandwidth_bits_per_cycle=16", 'fusion.plugin="fused_stacks"',
            "cost_model.roofline.utilization=0.5"]
    cli("run", "experiments/tiny_cnn_dual_core.toml", "--out", tmp_path / "cli", *sum((["--set", s] for s in sets), []))
    r = monet.run("experiments/tiny_cnn_dual_core.toml", overrides)
    assert r.summary == read_json(tmp_path / "cli" / "results.json")
    assert r.summary != monet.run("experiments/tiny_cnn_dual_core.toml").summary  # the overrides changed the run


@pytest.mark.parametrize("overrides, set_text", [
    ({"schedule.bogus": 1}, "schedule.bogus=1"),
    ({"architecture.links.p2p.bandwidth_bits_per_cycle": "fast"}, 'architecture.links.p2p.bandwidth_bits_per_cycle="fast"'),
    ({"fusion.plugin": ["a", 1]}, 'fusion.plugin=["a", 1]'),
])
def test_bad_override_is_the_cli_located_error(overrides, set_text, cli, tmp_path):
    done = cli("run", "experiments/tiny_cnn_dual_core.toml", "--out", tmp_path / "x", "--set", set_text, check=False)
    assert done.returncode == 2
    with pytest.raises(monet.InputError) as raised:
        monet.run("experiments/tiny_cnn_dual_core.toml", overrides)
    assert str(raised.value) == done.stderr.strip()
    assert re.match(r"^--set .*:1:\d+: error: ", str(raised.value))


def test_bad_file_is_the_cli_located_error(cli, tmp_path):
    text = (DATA / "tiny_search.toml").read_text().replace("budget = 48", "budget = -3")
    text = text.replace('"../../../', '"' + str(DATA.parents[2]) + "/")
    bad = tmp_path / "bad.toml"
    bad.write_text(text)
    done = cli("run", bad, "--out", tmp_path / "x", check=False)
    assert done.returncode == 2
    with pytest.raises(monet.InputError) as raised:
        monet.Experiment(bad)
    assert str(raised.value) == done.stderr.strip()
    assert re.match(r"^" + re.escape(str(bad)) + r":\d+:\d+: error: ", str(raised.value))
    assert isinstance(raised.value, ValueError)
    with pytest.raises(monet.InputError, match="no_such.toml"):
        monet.run("experiments/no_such.toml")


def test_overrides_must_be_toml_values():
    with pytest.raises(TypeError):
        monet.run("experiments/tiny_cnn_dual_core.toml", {"fusion.plugin": object()})


@pytest.mark.parametrize("args, kwargs", [
    (["workloads/tiny_cnn.toml"], {}),
    (["workloads/tiny_cnn.toml", "--training", "--optimizer", "adam", "--batch", "2"],
     {"training": True, "optimizer": "adam", "batch": 2}),
])
def test_inspect_equals_the_cli(args, kwargs, cli):
    expected = json.loads(cli("inspect", *args, "--json").stdout)
    assert monet.inspect(args[0], **kwargs) == expected


def test_inspect_errors():
    with pytest.raises(monet.InputError, match="--checkpoint.*needs --training"):
        monet.inspect("workloads/tiny_cnn.toml", checkpoint="segments=2")
    with pytest.raises(TypeError, match="no option 'bogus'"):
        monet.inspect("workloads/tiny_cnn.toml", bogus=1)


def test_plugins_are_the_cli_plugins(cli):
    listed = cli("plugins").stdout
    found = monet.plugins()
    assert {p["name"] for p in found} == set(re.findall(r"^  (\w+) \d+\.\d+\.\d+ — ", listed, re.M))
    nsga2 = next(p for p in monet.plugins("search") if p["name"] == "nsga2")
    population = next(q for q in nsga2["parameters"] if q["name"] == "population")
    assert population["default"] == "64" and population["type"] == "integer"
    # Found as the CLI finds them: beside the kernel library the module loaded.
    assert re.search(r"search path: (.*)$", listed, re.M).group(1) == ":".join(monet._monet.plugin_search_path())
