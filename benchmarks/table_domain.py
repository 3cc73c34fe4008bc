"""A table domain on 30,000 rows: its typed tool's latency and its list page's server time.

The cities spec (tests/fixtures/cities_domain) over a synthetic 30,000-row CSV of the same columns,
built into a temporary folder as `bench domain new` would: 1,000 seeded tool calls (filters of
every kind, sorts, aggregates) and 200 list pages (sorts, filters, pages), timed in-process.

Run `python benchmarks/table_domain.py`.
"""
from __future__ import annotations

import asyncio
import csv
import random
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from figures import record
from starlette.testclient import TestClient

from armbench.tablekit import TableDomain

ROWS = 30_000
TOOL_TARGET_P50_MS = 2.0
PAGE_TARGET_MS = 50.0
FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
COUNTRIES = [f"Country {n}" for n in range(50)]


def synthetic_domain(root: Path, rng: random.Random) -> TableDomain:
    folder = root / "cities"
    (folder / "source").mkdir(parents=True)
    shutil.copy(FIXTURES / "cities_domain" / "domain.yaml", folder)
    with (folder / "source" / "cities.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["name", "country", "population", "area_km2", "founded", "capital", "elevation_m"])
        for n in range(ROWS):
            founded = "" if rng.random() < 0.3 else f"{rng.randint(800, 2000):04d}-{rng.randint(1, 12):02d}-01"
            writer.writerow([f"City {n:05d}", rng.choice(COUNTRIES), rng.randint(1_000, 20_000_000),
                             rng.randint(5, 12_000), founded, rng.random() < 0.02, rng.randint(-20, 3_000)])
    (folder / "__init__.py").write_text("")
    domain = TableDomain(str(folder / "__init__.py"))
    domain.build(folder)
    return domain


def random_call(rng: random.Random) -> dict:
    filters = rng.sample([
        {"field": "country", "op": "eq", "value": rng.choice(COUNTRIES)},
        {"field": "population", "op": "gt", "value": rng.randint(1_000, 10_000_000)},
        {"field": "founded", "op": "lt", "value": str(rng.randint(900, 2000))},
        {"field": "capital", "op": "eq", "value": rng.random() < 0.5},
        {"field": "name", "op": "contains", "value": f"{rng.randint(0, 99):02d}"},
    ], rng.randint(0, 3))
    call = {"filters": filters, "limit": rng.choice([1, 5, 20, 50])}
    if rng.random() < 0.6:
        call |= {"sort_by": rng.choice(["population", "area_km2", "founded", "name"]), "order": rng.choice(["asc", "desc"])}
    if rng.random() < 0.2:
        call["aggregate"] = {"fn": rng.choice(["avg", "max"]), "field": "population"}
    return call


def random_page(rng: random.Random) -> str:
    sort = rng.choice(["", "name", "country", "population", "area_km2", "capital"])
    params = [f"sort={sort}&order={rng.choice(['asc', 'desc'])}"] if sort else []
    if rng.random() < 0.4:
        params.append(f"country={rng.choice(COUNTRIES).replace(' ', '+')}")
    if rng.random() < 0.3:
        params.append(f"population_min={rng.randint(1_000, 5_000_000)}")
    if rng.random() < 0.3:
        params.append(f"page={rng.randint(1, 50)}")
    return "/cities" + ("?" + "&".join(params) if params else "")


async def tool_latencies(domain: TableDomain, rng: random.Random) -> list[float]:
    tool = domain.tool_classes()[0]()
    for _ in range(50):  # warm-up
        await tool.invoke(random_call(rng))
    times = []
    for _ in range(1_000):
        call = random_call(rng)
        start = time.perf_counter()
        await tool.invoke(call)
        times.append((time.perf_counter() - start) * 1000)
    return times


def page_times(domain: TableDomain, rng: random.Random) -> list[float]:
    client = TestClient(domain.create_app())
    for _ in range(20):
        client.get(random_page(rng))
    times = []
    for _ in range(200):
        url = random_page(rng)
        start = time.perf_counter()
        response = client.get(url)
        times.append((time.perf_counter() - start) * 1000)
        if response.status_code >= 500:
            raise SystemExit(f"{url}: {response.status_code}")
    return times


def main() -> None:
    rng = random.Random(7)
    with tempfile.TemporaryDirectory() as root:
        domain = synthetic_domain(Path(root), rng)
        tool = asyncio.run(tool_latencies(domain, rng))
        pages = page_times(domain, rng)
    tool_p50, pages_p50 = statistics.median(tool), statistics.median(pages)
    pages_p95 = statistics.quantiles(pages, n=20)[-1]
    print(f"table domain, {ROWS:,} rows: cities_query p50 {tool_p50:.2f} ms, p95 "
          f"{statistics.quantiles(tool, n=20)[-1]:.2f} ms over 1,000 calls (target p50 <= {TOOL_TARGET_P50_MS} ms)")
    print(f"  list page (100 rows, in-process request incl. the test client): p50 {pages_p50:.1f} ms, "
          f"p95 {pages_p95:.1f} ms over 200 pages (target <= {PAGE_TARGET_MS:.0f} ms)")
    record(f"table domain, {ROWS:,} rows: tool p50", tool_p50, "ms", TOOL_TARGET_P50_MS)
    record(f"table domain, {ROWS:,} rows: list page p95", pages_p95, "ms", PAGE_TARGET_MS)


if __name__ == "__main__":
    main()
