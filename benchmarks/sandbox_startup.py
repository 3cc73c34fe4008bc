"""Start-up cost of the `python` tool: `print(1)` run 20 times through `PythonTool.invoke`.

Each call is a whole sandbox (prlimit, setpriv, bwrap, a fresh interpreter), so this is the
floor under every python action. Run `python benchmarks/sandbox_startup.py`; other scripts can
import `measure`.
"""
from __future__ import annotations

import asyncio
import math
import statistics
import time
from typing import Any

from figures import record

from armbench.tools.web_tools import PythonTool

RUNS = 20


async def time_runs(tool: PythonTool, runs: int) -> list[float]:
    await tool.invoke({"code": "print(1)"})  # warm-up: page cache, the probe
    seconds = []
    for _ in range(runs):
        start = time.perf_counter()
        outcome = await tool.invoke({"code": "print(1)"})
        seconds.append(time.perf_counter() - start)
        assert outcome.result.get("stdout") == "1\n", outcome.result
    return seconds


def measure(runs: int = RUNS) -> dict[str, Any]:
    tool = PythonTool()
    ordered_ms = sorted(s * 1000 for s in asyncio.run(time_runs(tool, runs)))
    return {
        "tool": tool.name,
        "isolation": tool.isolation,
        "runs": runs,
        "p50_ms": statistics.median(ordered_ms),
        "p95_ms": ordered_ms[math.ceil(0.95 * runs) - 1],  # nearest rank
        "max_ms": ordered_ms[-1],
    }


def main() -> None:
    m = measure()
    print(
        f"{m['tool']} ({m['isolation']}): print(1) x{m['runs']}, p50 {m['p50_ms']:.0f} ms, "
        f"p95 {m['p95_ms']:.0f} ms, max {m['max_ms']:.0f} ms"
    )
    record("python sandbox start p50", m["p50_ms"], "ms")


if __name__ == "__main__":
    main()
