"""Values written into YAML by hand (domain.yaml keeps a comment on every line, which a YAML dumper
would drop): each scalar in a form that reads back as itself."""
from __future__ import annotations

import datetime as dt
import json
import re
from typing import Any

import yaml

PLAIN = re.compile(r"[a-z][a-z0-9_]*")


def example_value(value: Any) -> Any:
    return value.isoformat() if isinstance(value, dt.date) else value


def yaml_scalar(value: Any) -> str:
    """`value` as a YAML flow scalar that reads back as itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        text = repr(value)
        if "e" in text and "." not in text.split("e")[0]:  # YAML 1.1 floats need a dot: 1e+20 -> 1.0e+20
            mantissa, exponent = text.split("e")
            text = f"{mantissa}.0e{exponent}"
        return text
    text = str(value)
    if PLAIN.fullmatch(text) and plain_reads_back(text):
        return text
    return json.dumps(text, ensure_ascii=False)


def plain_reads_back(text: str) -> bool:
    try:
        return yaml.safe_load(f"k: {text}") == {"k": text}
    except yaml.YAMLError:
        return False


def flow(value: Any) -> str:
    """`value` in YAML flow style: {k: v, ...} and [a, b]."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key}: {flow(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    return yaml_scalar(example_value(value))
