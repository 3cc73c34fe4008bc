"""Tool calls written as JSON text, turned into structured calls.

Small local models asked with `tool_choice="auto"` often answer with the call as text — inside
`<tool_call>` tags (Qwen's template), a ```json fence, or bare — instead of a structured call.
Only objects that name an offered tool count, so prose or an answer line is never mistaken for a call.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.DOTALL)
FENCED = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL)


@dataclass(frozen=True)
class TextToolCall:
    name: str
    arguments: dict[str, Any]


def json_objects(text: str) -> list[Any]:
    """Every top-level JSON value that starts with `{` somewhere in `text`, in order."""
    decoder = json.JSONDecoder()
    found, position = [], 0
    while (start := text.find("{", position)) != -1:
        try:
            value, end = decoder.raw_decode(text, start)
        except json.JSONDecodeError:
            position = start + 1
            continue
        found.append(value)
        position = end
    return found


def as_call(value: Any, tool_names: set[str]) -> TextToolCall | None:
    if not isinstance(value, dict) or value.get("name") not in tool_names:
        return None
    arguments = value.get("arguments", value.get("parameters", {}))
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return None
    return TextToolCall(value["name"], arguments) if isinstance(arguments, dict) else None


def parse_tool_calls(text: str | None, tool_names: list[str]) -> list[TextToolCall]:
    if not text or not tool_names:
        return []
    names = set(tool_names)
    for pattern in (TAGGED, FENCED):
        blocks = pattern.findall(text)
        calls = [c for block in blocks for v in json_objects(block) if (c := as_call(v, names))]
        if calls:
            return calls
    return [c for v in json_objects(text) if (c := as_call(v, names))]
