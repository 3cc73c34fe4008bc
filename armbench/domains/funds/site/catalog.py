"""The screener's data (a `SiteCatalog`), prepared once per process.

`frame` is the fund table plus `row` (its index) and lower-cased text for the case-insensitive
filters; `cells` holds every row's list cells already formatted.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl

from armbench.domains.funds import TABLES
from armbench.domains.funds.site.fields import COLUMNS
from armbench.replicas.web.catalog import SiteCatalog


@dataclass(frozen=True)
class Catalog(SiteCatalog):
    categories: list[str]  # the category select's options


@cache
def catalog() -> Catalog:
    table = TABLES.load("funds")
    frame = table.with_row_index("row").with_columns(
        pl.col("name").str.to_lowercase().alias("name_lower"),
        pl.col("symbol").str.to_lowercase().alias("symbol_lower"),
        pl.col("family").str.to_lowercase().alias("family_lower"),
    )
    cells = [{"href": row["source_url"], **{c.key: c.cell(row) for c in COLUMNS}}
             for row in table.iter_rows(named=True)]
    return Catalog(
        table=table,
        frame=frame,
        cells=cells,
        row_of={symbol: index for index, symbol in enumerate(table["symbol"])},
        categories=sorted(table["category"].unique()),
    )
