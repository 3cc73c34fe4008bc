"""The GPU list's query string: check it, pick the matching rows in order.

`/gpus?manufacturer=&year=&generation=&memory_type=&q=&sort=&order=&page=`; what every list
query shares (sorting, paging, links) is `armbench.replicas.web.listing`.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import polars as pl

from armbench.domains.gpus.site.catalog import Catalog
from armbench.domains.gpus.site.fields import COLUMNS
from armbench.replicas.web.listing import BadQuery, ListQuery, choice, ordered_rows, whole_number


@dataclass(frozen=True)
class GpuQuery(ListQuery):
    manufacturer: str = ""
    year: int | None = None
    generation: str = ""
    memory_type: str = ""
    q: str = ""
    sort: str = "released"

    PATH = "/gpus"
    COLUMNS = {column.key: column for column in COLUMNS}
    DEFAULT_SORT = "released"


def parse_query(params: Mapping[str, str], catalog: Catalog) -> GpuQuery:
    year = params.get("year", "").strip()
    if year and whole_number(year) not in catalog.years:
        raise BadQuery(
            f"Unknown release year {year[:40]!r}. Choose a year from the list: GPUs in this database "
            f"were released from {catalog.years[-1]} to {catalog.years[0]}."
        )
    all_generations = [g for _, generations in catalog.generations for g in generations]
    return GpuQuery(
        manufacturer=choice(params, "manufacturer", "manufacturer", catalog.manufacturers),
        year=whole_number(year) if year else None,
        generation=choice(params, "generation", "generation", all_generations),
        memory_type=choice(params, "memory_type", "memory type", catalog.memory_types),
        q=params.get("q", "").strip(),
        **GpuQuery.parse_common(params),
    )


def select(catalog: Catalog, query: GpuQuery) -> list[int]:
    """Row indices matching `query`, in its order; unknowns last, ties by name."""
    conditions = [
        pl.col(name) == value
        for name in ("manufacturer", "year", "generation", "memory_type")
        if (value := getattr(query, name)) not in ("", None)
    ]
    if query.q:
        conditions.append(pl.col("name_lower").str.contains(query.q.lower(), literal=True))
    return ordered_rows(catalog.frame, query, "name_lower", where=conditions)
