"""armbench: does a typed query tool help an LLM agent, compared with browsing the same data?

`armbench.run(...)`, `armbench.report(...)` and `armbench.synthesize(...)` are `bench run`,
`bench report` and `bench synthesize` for Python (armbench/api.py); `armbench.UserError` is what
they raise for input a user can fix.

They are loaded on first use (PEP 562), so `import armbench.types` (or any other module) does not
load the API, its models and its engine.
"""
from __future__ import annotations

import importlib
from typing import Any

API = ("Report", "RunResult", "report", "run", "synthesize")  # what armbench.api lends the package
__all__ = [*API, "UserError"]


def __getattr__(name: str) -> Any:
    if name in API:
        return getattr(importlib.import_module("armbench.api"), name)
    if name == "UserError":
        return importlib.import_module("armbench.errors").UserError
    raise AttributeError(f"module 'armbench' has no attribute {name!r}")
