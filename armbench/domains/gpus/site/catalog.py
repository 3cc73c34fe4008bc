"""The GPU site's data (a `SiteCatalog`), prepared once per process.

`frame` is the GPU table plus `row` (its index), `slug`, `year` and `name_lower`, with each
measured 0 turned into null so unknowns sort last; `cells` holds every row's list cells already
formatted, so a list page formats nothing.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl

from armbench.domains.gpus import TABLES
from armbench.domains.gpus.site.fields import COLUMNS
from armbench.replicas.web.catalog import SiteCatalog


@dataclass(frozen=True)
class Catalog(SiteCatalog):
    """`row(index)` gives a GPU's original values (0 still 0), as the GPU page shows them."""

    manufacturers: list[str]
    years: list[int]  # newest first
    generations: list[tuple[str, list[str]]]  # (manufacturer, its generations)
    memory_types: list[str]


def measured_columns(table: pl.DataFrame) -> list[str]:
    return [name for name, dtype in table.schema.items()
            if dtype.is_numeric() and not name.endswith("_minor_version")]


@cache
def catalog() -> Catalog:
    table = TABLES.load("gpus")
    frame = table.with_row_index("row").with_columns(
        *(pl.when(pl.col(name) != 0).then(pl.col(name)).alias(name) for name in measured_columns(table)),
        # `.../gpu-specs/geforce-rtx-2080-ti.c3305` -> `geforce-rtx-2080-ti.c3305`
        pl.col("source_url").str.split("/").list.last().alias("slug"),
        pl.col("release_date").dt.year().alias("year"),
        pl.col("name").str.to_lowercase().alias("name_lower"),
    )
    slugs = frame["slug"].to_list()
    if len(set(slugs)) != len(slugs):
        raise ValueError("two GPUs share a source_url slug")
    cells = [{"href": f"/gpus/{slug}", **{c.key: c.cell(row) for c in COLUMNS}}
             for slug, row in zip(slugs, table.iter_rows(named=True))]
    makers = sorted(table["manufacturer"].unique())
    generations = [
        (maker, sorted(table.filter(pl.col("manufacturer") == maker)["generation"].unique()))
        for maker in makers
    ]
    return Catalog(
        table=table,
        frame=frame,
        cells=cells,
        row_of={slug: index for index, slug in enumerate(slugs)},
        manufacturers=makers,
        years=sorted(frame["year"].unique(), reverse=True),
        generations=generations,
        memory_types=sorted(table["memory_type"].drop_nulls().unique()),
    )
