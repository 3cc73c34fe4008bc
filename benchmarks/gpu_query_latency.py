"""Latency of `gpu_query` over 1,000 varied, seeded calls (some of them mistakes).

Run `python benchmarks/gpu_query_latency.py`; other scripts can import `measure`.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from typing import Any

from figures import record

from armbench.domains.gpus.tools import AGGREGATABLE_FIELDS, FIELDS, GpuQuery, gpu_frame, kind_of
from armbench.tools.table_query import OPS_BY_KIND

TARGET_P50_MS = 1.0
WARMUP_CALLS = 50
LIMITS = (1, 3, 5, 10, 20, 50)
MISTAKES = (
    {"filters": [{"field": "tdp", "op": "gt", "value": 100}]},
    {"filters": [{"field": "name", "op": "like", "value": "rtx"}]},
    {"filters": [{"field": "memory_size_gb", "op": "gt", "value": "lots"}]},
    {"filters": [{"field": "name", "op": "gt", "value": "A"}]},
    {"sort_by": "speed"},
    {"limit": 0},
)


def sample_value(rng: random.Random, field: str) -> Any:
    kind = kind_of(field)
    if kind == "date":
        year = rng.randint(1995, 2025)
        return rng.choice([str(year), f"{year}-{rng.randint(1, 12):02d}", f"{year}-06-15"])
    values = gpu_frame()[field].drop_nulls()
    value = values[rng.randrange(len(values))]
    return value.lower() if kind == "string" and rng.random() < 0.5 else value


def random_filter(rng: random.Random) -> dict[str, Any]:
    field = rng.choice(FIELDS)
    op = rng.choice(OPS_BY_KIND[kind_of(field)])
    if op in ("is_null", "not_null"):
        return {"field": field, "op": op}
    if op == "in":
        return {"field": field, "op": op, "value": [sample_value(rng, field) for _ in range(3)]}
    value = sample_value(rng, field)
    if op == "contains":
        value = value[len(value) // 3 : len(value) // 3 + 3]
    elif op == "starts_with":
        value = value[:4]
    return {"field": field, "op": op, "value": value}


def random_call(rng: random.Random) -> dict[str, Any]:
    if rng.random() < 0.05:
        return rng.choice(MISTAKES)
    call: dict[str, Any] = {
        "filters": [random_filter(rng) for _ in range(rng.randint(0, 3))],
        "limit": rng.choice(LIMITS),
    }
    if rng.random() < 0.6:
        call["sort_by"] = rng.choice(FIELDS)
        call["order"] = rng.choice(["asc", "desc"])
    if rng.random() < 0.3:
        fn = rng.choice(list(AGGREGATABLE_FIELDS))
        call["aggregate"] = {"fn": fn, "field": rng.choice(AGGREGATABLE_FIELDS[fn])}
    if rng.random() < 0.2:
        call["fields"] = rng.sample(FIELDS, rng.randint(1, 4))
    return call


def build_calls(n: int, seed: int) -> list[str]:
    """Calls as JSON strings, the form a model's tool call arrives in."""
    rng = random.Random(seed)
    return [json.dumps(random_call(rng)) for _ in range(n)]


async def time_calls(tool: GpuQuery, calls: list[str]) -> tuple[list[float], int]:
    for call in calls[:WARMUP_CALLS]:
        await tool.invoke(call)
    seconds, errors = [], 0
    for call in calls:
        start = time.perf_counter()
        outcome = await tool.invoke(call)
        seconds.append(time.perf_counter() - start)
        errors += outcome.is_error
    return seconds, errors


def measure(n: int = 1000, seed: int = 0) -> dict[str, Any]:
    calls = build_calls(n, seed)
    seconds, errors = asyncio.run(time_calls(GpuQuery(), calls))
    ordered_ms = sorted(s * 1000 for s in seconds)
    return {
        "tool": GpuQuery.name,
        "calls": n,
        "errors": errors,
        "p50_ms": statistics.median(ordered_ms),
        "p99_ms": ordered_ms[min(n - 1, round(0.99 * n))],
        "max_ms": ordered_ms[-1],
        "calls_per_s": n / sum(seconds),
        "target_p50_ms": TARGET_P50_MS,
    }


def main() -> None:
    m = measure()
    verdict = "ok" if m["p50_ms"] <= TARGET_P50_MS else "OVER TARGET"
    print(
        f"{m['tool']}: {m['calls']} calls ({m['errors']} errors), p50 {m['p50_ms']:.2f} ms, "
        f"p99 {m['p99_ms']:.2f} ms, max {m['max_ms']:.2f} ms, {m['calls_per_s']:.0f} calls/s "
        f"(target p50 <= {TARGET_P50_MS:g} ms: {verdict})"
    )
    record("gpu_query p50", m["p50_ms"], "ms", TARGET_P50_MS)


if __name__ == "__main__":
    main()
