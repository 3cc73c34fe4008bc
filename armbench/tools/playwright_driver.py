"""Playwright started with Node's compile cache.

Each event loop that uses Playwright starts its driver, a Node.js process that compiles Playwright's
JavaScript as it loads it: about 0.4 s of CPU, once per Chromium (chromium_host.py). Given
`NODE_COMPILE_CACHE`, Node (22 and later) keeps the compiled code in that folder and reuses it,
which takes about a fifth off each later start. The cache holds compiled code checked against its
sources, so nothing a run sees depends on it; where the folder cannot be written Node does without.
A `NODE_COMPILE_CACHE` already set is kept; with no home folder to put it in, there is none.
"""
from __future__ import annotations

import os
from pathlib import Path

from playwright.async_api import Playwright, async_playwright

COMPILE_CACHE_ENV = "NODE_COMPILE_CACHE"


def compile_cache_dir() -> Path | None:
    try:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    except (KeyError, RuntimeError):  # no $HOME, and no home in the user database
        return None
    return cache / "armbench" / "node-compile-cache"


async def start_playwright() -> Playwright:
    """`async_playwright().start()`, its driver given the compile cache (the driver's environment is this process's)."""
    if COMPILE_CACHE_ENV not in os.environ and (folder := compile_cache_dir()) is not None:
        os.environ[COMPILE_CACHE_ENV] = str(folder)
    return await async_playwright().start()
