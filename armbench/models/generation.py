"""Generation settings: what `bench run` and `bench doctor` pass to LiteLLM's completion call
besides the messages and tools, and where provider credentials come from.

Settings are checked before anything heavy loads and land in `RunConfig.completion_kwargs`, so the
manifest records them (credentials left out) and a resume with other settings is refused.
LiteLLM drops a setting its provider does not support (`drop_params`), as it does for any caller.

Credentials: LiteLLM's own `.env` loading (which searches upward from its install folder) is off;
`load_env_file` reads `--env-file`, or `.env` in the current folder, and never overrides a variable
already set.
"""
from __future__ import annotations

import io
import json
import math
import os
import re
from pathlib import Path
from typing import Any

from armbench.errors import UserError, read_text

REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high")
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_ENV_FILE = Path(".env")


# What the harness itself passes on every call: a setting may not replace it.
HARNESS_ARGUMENTS = {"model": "--model", "messages": "the conversation", "tools": "the arm's tools",
                     "tool_choice": "the agent loop", "max_retries": "--max-retries", "timeout": "--request-timeout",
                     "stream": "the agent loop"}


def check_completion_kwargs(settings: dict[str, Any]) -> None:
    """Refuse settings that would replace what the harness passes, or hold a non-finite number."""
    for key, value in settings.items():
        if key in HARNESS_ARGUMENTS:
            raise UserError(f"-M {key}: armbench sets {key} itself ({HARNESS_ARGUMENTS[key]})")
        if not finite(value):
            raise UserError(f"-M {key}: {value!r} holds a number that is not finite")


def finite(value: Any) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(finite(item) for item in value.values())
    if isinstance(value, list):
        return all(finite(item) for item in value)
    return True


def model_arg(text: str) -> tuple[str, Any]:
    """`-M key=value`: the value as JSON when it parses (0.5, true, {"a": 1}), else as text."""
    key, sep, raw = text.partition("=")
    key = key.strip()
    if not sep or not KEY.fullmatch(key):
        raise UserError(f"-M takes key=value with a Python-style key, e.g. -M top_p=0.9 (got {text!r})")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    return key, value


def generation_kwargs(
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    reasoning_effort: str | None = None,
    api_base: str | None = None,
    model_args: list[str] | None = None,
) -> dict[str, Any]:
    """The completion kwargs the flags ask for; a UserError for a bad value or a key set twice."""
    if temperature is not None and not (math.isfinite(temperature) and 0 <= temperature <= 2):
        raise UserError(f"--temperature must be between 0 and 2 (got {temperature:g})")
    if reasoning_effort is not None and reasoning_effort not in REASONING_EFFORTS:
        raise UserError(f"--reasoning-effort must be one of {', '.join(REASONING_EFFORTS)} (got {reasoning_effort!r})")
    if api_base is not None and not re.match(r"https?://[^\s/]+", api_base):
        raise UserError(f"--api-base must be an http(s) URL (got {api_base!r})")
    named = {"temperature": temperature, "max_tokens": max_tokens, "seed": seed,
             "reasoning_effort": reasoning_effort, "api_base": api_base}
    settings = {key: value for key, value in named.items() if value is not None}
    for text in model_args or []:
        key, value = model_arg(text)
        if key in settings:
            flag = f"--{key.replace('_', '-')}" if key in named else f"-M {key}"
            raise UserError(f"-M {key} sets what {flag} already sets; give it once")
        settings[key] = value
    check_completion_kwargs(settings)
    return settings


def load_env_file(path: Path | None) -> list[str]:
    """Set the variables of `path` (default: ./.env when it exists) that are not set already;
    the names set. A named file that cannot be read is a UserError."""
    if path is None:
        if not DEFAULT_ENV_FILE.is_file():
            return []
        path = DEFAULT_ENV_FILE
    import dotenv  # python-dotenv: .env syntax as every other tool reads it (quotes, export, comments)

    values = dotenv.dotenv_values(stream=io.StringIO(read_text(path, "--env-file")))
    loaded = [name for name, value in values.items() if value is not None and name not in os.environ]
    for name in loaded:
        os.environ[name] = values[name]
    return loaded
