"""The screener's data (a `SiteCatalog`), prepared once per process.

`frame` is the fund table plus `row` (its index) and lower-cased text for the case-insensitive
filters; `cells` holds every row's list cells already formatted.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl

from replicas.data import load_table
from replicas.funds.fields import COLUMNS
from replicas.web.catalog import SiteCatalog


@dataclass(frozen=True)
class Catalog(SiteCatalog):
    categories: list[str]  # the category select's options


@cache
def catalog() -> Catalog:
    table = load_table("funds")
    frame = table.with_row_index("row").with_columns(
        pl.col("name").str.to_lowercase().alias("name_lower"),
        pl.col("symbol").str.to_lowercase().alias("symbol_lower"),
        pl.col("family").str.to_lowercase().alias("family_lower"),
    )
    cells = [{"href": row["source_url"], **{c.key: c.cell(row) for c in COLUMNS}}
             for row in table.iter_rows(named=True)]
    return Catalog(
        table="funds",
        frame=frame,
        cells=cells,
        row_of={symbol: index for index, symbol in enumerate(table["symbol"])},
        categories=sorted(table["category"].unique()),
    )
