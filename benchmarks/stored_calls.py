"""Every domain's typed tools over its questions' stored tooled calls: p50 per domain (x200 each).

A typed tool answers in milliseconds or it is not worth offering; a stored call that fails is a
broken solution, reported rather than timed. Run `python benchmarks/stored_calls.py`.
"""
from __future__ import annotations

import asyncio
import statistics
import time

from figures import record

from armbench.domains import DOMAINS
from armbench.questions import load_sets

TARGET_P50_MS = 2.0
ROUNDS = 200


async def stored_calls_p50(name: str) -> float | None:
    tools = {cls.name: cls() for cls in DOMAINS[name].tool_classes()}
    calls = [(tools[call.tool], call.args) for question_set in load_sets([name])
             for question in question_set.questions if "tooled" in question.solutions
             for call in question.solutions["tooled"].calls if call.tool in tools]
    if not calls:
        return None
    times = []
    for _ in range(ROUNDS):
        for tool, args in calls:
            start = time.perf_counter()
            outcome = await tool.invoke(args)
            times.append((time.perf_counter() - start) * 1000)
            if outcome.is_error:
                raise SystemExit(f"{name}: a stored call fails: {outcome.result}")
    return statistics.median(times[len(calls):])  # the first round loads the tables


def main() -> None:
    for name in DOMAINS:
        p50 = asyncio.run(stored_calls_p50(name))
        if p50 is None:
            continue
        print(f"{name}: typed tools over its questions' stored calls, p50 {p50:.2f} ms (target <= {TARGET_P50_MS} ms)")
        record(f"{name} typed tools, stored calls p50", p50, "ms", TARGET_P50_MS)


if __name__ == "__main__":
    main()
