"""Where two JSON values first differ, said in a line a person can act on."""
from __future__ import annotations

import json
from typing import Any

MAX_SHOWN = 80


def first_difference(recorded: Any, current: Any, path: str = "") -> str | None:
    """`None` when equal; else "<path>: <what changed>", depth first, keys in recorded order."""
    if isinstance(recorded, dict) and isinstance(current, dict):
        for key, value in recorded.items():
            if key not in current:
                added = [k for k in current if k not in recorded]
                instead = f" (new key{'s' if len(added) > 1 else ''} {', '.join(map(repr, added))})" if added else ""
                return f"{_at(path)}key {key!r} is gone{instead}"
            found = first_difference(value, current[key], f"{path}.{key}" if path else str(key))
            if found:
                return found
        extra = [k for k in current if k not in recorded]
        return f"{_at(path)}new key {extra[0]!r}" if extra else None
    if isinstance(recorded, list) and isinstance(current, list):
        for index, (old, new) in enumerate(zip(recorded, current, strict=False)):
            found = first_difference(old, new, f"{path}[{index}]")
            if found:
                return found
        if len(recorded) != len(current):
            return f"{_at(path)}{len(recorded)} items recorded, {len(current)} now"
        return None
    if recorded == current and type(recorded) is type(current):
        return None
    if isinstance(recorded, str) and isinstance(current, str):
        return f"{_at(path)}{_text_difference(recorded, current)}"
    return f"{_at(path)}recorded {_show(recorded)}, now {_show(current)}"


def _text_difference(recorded: str, current: str) -> str:
    """Long texts (a page snapshot) differ somewhere in the middle: show that place, not the start."""
    at = next((i for i, (a, b) in enumerate(zip(recorded, current, strict=False)) if a != b), min(len(recorded), len(current)))
    if len(recorded) <= MAX_SHOWN and len(current) <= MAX_SHOWN:
        return f"recorded {_show(recorded)}, now {_show(current)}"
    start = max(0, at - 20)
    return (f"texts differ from character {at}: recorded {_show(recorded[start:start + 60])}, "
            f"now {_show(current[start:start + 60])}")


def parsed(text: Any) -> Any:
    """A JSON string as its value, so a diff can name the key; anything else as it is."""
    if isinstance(text, str):
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def _at(path: str) -> str:
    return f"{path}: " if path else ""


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= MAX_SHOWN else text[: MAX_SHOWN - 1] + "…"
