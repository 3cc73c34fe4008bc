"""What a script is — a function from what a model would see to a reply — and the scripts by name.

`scripted/<name>` plays the script registered as `name`. The built-in ones (armbench.players.scripts)
are registered when the scripted provider is set up; tests register their own the same way.
"""
from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from armbench.models.pricing import register_price


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (e.g. malformed JSON)

    def wire_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)


@dataclass(frozen=True)
class Turn:
    """What a script sees: exactly what a model would."""

    messages: list[dict[str, Any]]
    tool_names: list[str]

    @property
    def user_prompt(self) -> str:
        return next(str(m.get("content") or "") for m in self.messages if m.get("role") == "user")

    def tool_results(self) -> list[str]:
        return [str(m.get("content") or "") for m in self.messages if m.get("role") == "tool"]


Script = Callable[[Turn], Reply]
SCRIPTS: dict[str, Script] = {}


def register_script(name: str, *, free: bool = True) -> Callable[[Script], Script]:
    """Register `fn` as `scripted/<name>`.

    A scripted model costs nothing, so it is priced at $0 unless `free=False`, which leaves it
    unpriced (its cost is then recorded as unknown, as for any model LiteLLM cannot price).
    """

    def decorate(fn: Script) -> Script:
        SCRIPTS[name] = fn
        if free:
            register_price(f"scripted/{name}", "scripted", 0.0, 0.0)
        return fn

    return decorate
