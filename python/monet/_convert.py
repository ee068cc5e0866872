"""Conversions between Python values and what the kernel reads and writes: --set text, gene labels, CSV tables."""
import csv
import io
import json
import math
import numbers
import tomllib

try:
    import pandas as _pandas
except ImportError:  # the tables are lists of dicts then
    _pandas = None


def toml_value(value, where="value"):
    """A Python value as TOML text: strings quoted, bools, numbers, lists and dicts (inline tables)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        v = float(value)
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v, where) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{json.dumps(str(k))} = {toml_value(v, where)}" for k, v in value.items()) + " }"
    raise TypeError(f"{where}: cannot write a {type(value).__name__} as TOML (use str, bool, int, float, list, dict)")


def set_strings(overrides):
    """{"section.key": value} as the CLI's --set section.key=value strings, in the dict's order."""
    if overrides is None:
        return []
    if not isinstance(overrides, dict):
        raise TypeError("overrides: expected a dict of --set paths to values, got " + type(overrides).__name__)
    return [f"{path}={toml_value(value, str(path))}" for path, value in overrides.items()]


def label_value(label):
    """A gene's value from its label (TOML text; a core name of an allocation gene is not TOML and stays text)."""
    try:
        return tomllib.loads("v = " + label)["v"]
    except tomllib.TOMLDecodeError:
        return label


def value_key(value):
    """A hashable key under which equal values meet: 16 and 16.0 are one value, True and 1 are not."""
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, numbers.Real):
        return ("number", float(value))
    if isinstance(value, str):
        return ("str", value)
    return ("json", json.dumps(value, sort_keys=True, default=str))


def _cell(text):
    if text in ("true", "false"):
        return text == "true"
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def table(text):
    """A CSV file's text as a pandas DataFrame (numbers exact), or a list of dicts without pandas."""
    if _pandas is not None:
        frame = _pandas.read_csv(io.StringIO(text), float_precision="round_trip")
        if "reason" in frame.columns:  # an empty reason (a feasible point) is "", not NaN
            frame["reason"] = frame["reason"].fillna("").astype(str)
        return frame
    return [{k: _cell(v) for k, v in row.items()} for row in csv.DictReader(io.StringIO(text))]
