"""Latency of the World Bank replica (in-process ASGI, no sockets) and of each typed tool, over
seeded, varied requests and calls (a few of them mistakes).

Run `python benchmarks/worldbank_latency.py`.
"""
from __future__ import annotations

import asyncio
import json
import random
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
from figures import record

from armbench.domains.worldbank.api.app import create_app
from armbench.domains.worldbank.api.catalog import catalog
from armbench.domains.worldbank.tools import GetSeries, ListEconomies, RankYear

CALLS = 400
WARMUP = 20
REGIONS = ("EAS", "ECS", "LCN", "MEA", "NAC", "SAS", "SSF")
INCOMES = ("HIC", "UMC", "LMC", "LIC")


def api_request(rng: random.Random) -> str:
    data = catalog()
    indicator = rng.choice(list(data.indicators))
    economies = ";".join(rng.sample(data.data_economies, rng.randint(1, 5)))
    year = rng.randint(1960, 2025)
    fmt = rng.choice(["json", "json", "json", "xml"])
    return rng.choice([
        f"/v2/country?format={fmt}&per_page=300",
        f"/v2/country?format={fmt}&region={rng.choice(REGIONS)}",
        f"/v2/country/{economies}/indicator/{indicator}?format={fmt}",
        f"/v2/country/all/indicator/{indicator}?format={fmt}&date={year}",
        f"/v2/country/all/indicator/{indicator}?format={fmt}&per_page=1000"
        f"&page={rng.randint(1, 18)}",
        f"/v2/country/{economies}/indicator/{indicator}?format={fmt}&mrv=5",
        f"/v2/en/sources/2/series/{indicator}/country/{economies}/time/all?format=json",
        f"/v2/indicator?format={fmt}",
        f"/v2/country/USA/indicator/{indicator}?format=json&date=abc",
    ])


def tool_call(rng: random.Random, tool: str) -> dict[str, Any]:
    data = catalog()
    indicator = rng.choice(list(data.indicators))
    economies = rng.sample([c for c in data.economies if not data.economies[c].is_aggregate],
                           rng.randint(1, 8))
    if rng.random() < 0.05:
        return {"indicator": "GDP", "economies": ["Atlantis"], "year": 1900}
    if tool == "list_economies":
        return {"region": rng.choice(REGIONS), "income_group": rng.choice(INCOMES)}
    if tool == "get_series":
        first = rng.randint(1960, 2020)
        return {"indicator": indicator, "economies": economies, "start_year": first,
                "end_year": rng.randint(first, 2025)}
    return {"indicator": indicator, "year": rng.randint(1990, 2024),
            "region": rng.choice((None, *REGIONS)), "limit": rng.choice((1, 3, 10)),
            "order": rng.choice(("desc", "asc"))}


async def timed(action: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await action()
    return (time.perf_counter() - start) * 1000


def summary(label: str, milliseconds: list[float]) -> str:
    ordered = sorted(milliseconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * len(ordered)))]
    record(f"{label} p50", statistics.median(ordered), "ms")
    return (f"{label}: {len(ordered)} calls, p50 {statistics.median(ordered):.2f} ms, "
            f"p95 {p95:.2f} ms, max {ordered[-1]:.2f} ms")


async def replica_latency(rng: random.Random) -> list[float]:
    transport = httpx.ASGITransport(app=create_app())
    async with httpx.AsyncClient(transport=transport, base_url="http://replica") as client:
        paths = [api_request(rng) for _ in range(WARMUP + CALLS)]
        for path in paths[:WARMUP]:
            await client.get(path)
        return [await timed(lambda p=path: client.get(p)) for path in paths[WARMUP:]]


async def tool_latency(rng: random.Random, tool_class: type) -> list[float]:
    tool = tool_class()
    calls = [json.dumps(tool_call(rng, tool.name)) for _ in range(WARMUP + CALLS)]
    for arguments in calls[:WARMUP]:
        await tool.invoke(arguments)
    return [await timed(lambda a=arguments: tool.invoke(a)) for arguments in calls[WARMUP:]]


async def measure(seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    catalog()
    lines = [summary("worldbank replica (ASGI, in-process)", await replica_latency(rng))]
    for tool_class in (ListEconomies, GetSeries, RankYear):
        lines.append(summary(tool_class.name, await tool_latency(rng, tool_class)))
    return lines


def main() -> None:
    for line in asyncio.run(measure()):
        print(line)


if __name__ == "__main__":
    main()
