"""`bench` as a real process that starts without paying for its imports again.

Every `bench run` subprocess imports LiteLLM (about 3.8 s of CPU) before it does anything, and the
suite starts a few dozen of them. Here one fork server per pytest worker (armbench/forkserver.py)
imports the heavy third-party packages once (no module of armbench: those read their settings when
called) and forks a child for each command, which runs `python -m armbench.cli ARGS` to its end as
a freshly started one would.

`start(args, ...)` is `subprocess.Popen([python, -m, armbench.cli, *args], ...)` and `run` is
`subprocess.run(..., capture_output=True, text=True)`. Tests of start-up itself (what an import
costs, what a missing package says) start a fresh interpreter instead.
"""
from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from armbench.forkserver import ForkedProcess, ForkServer

# What a `bench run` imports from other packages, heaviest first; armbench itself is imported in
# the child, after its environment is set. LiteLLM reads its two settings at import.
BENCH = ForkServer("armbench.cli", preload=[
    "litellm", "playwright.async_api", "polars", "matplotlib.figure", "numpy", "typer", "rich", "jinja2", "yaml",
    "jsonschema", "requests", "httpx", "pydantic"],
    server_env={"LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_MODE": "PRODUCTION"})


def keyless_env(**settings: str) -> dict[str, str]:
    """This process's environment without any provider's API key (a test's `bench` must never reach
    a provider), with `settings` on top."""
    return {**{key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}, **settings}


def start(args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
          stdout: int | None = None, stderr: int | None = None, start_new_session: bool = False) -> ForkedProcess:
    """`bench ARGS` forked from the server: `stdout`/`stderr` None (this process's), DEVNULL or PIPE."""
    return BENCH.start(args, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=stdout, stderr=stderr,
                       start_new_session=start_new_session)


def run(args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """`subprocess.run([python, -m, armbench.cli, *args], capture_output=True, text=True, ...)`."""
    process = start(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = process.communicate(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)
