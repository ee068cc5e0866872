"""Fixtures of the Python API tests: the built CLI (MONET_CLI, set by ctest) to compare with, run from the
repository root, and pandas-free reading of its files as the package reads them."""
import json
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = pathlib.Path(__file__).resolve().parent / "data"


@pytest.fixture(autouse=True)
def _at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def monet_cli(*args, check=True):
    """build/bin/monet with `args`; returns the completed process (stdout, stderr as text)."""
    cli = os.environ.get("MONET_CLI", str(ROOT / "build" / "bin" / "monet"))
    done = subprocess.run([cli, "--log-level", "warn", *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise AssertionError(f"monet {' '.join(map(str, args))} failed ({done.returncode}): {done.stderr}")
    return done


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


@pytest.fixture
def cli():
    return monet_cli
