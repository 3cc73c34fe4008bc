"""The FDIC site's data (a `SiteCatalog`), prepared once per process: a request only filters,
sorts and slices.

`frame` is `bank_failures` plus `row` (its index), `name_lower` (the name search) and `tie` (each
row's place by name, then FDIC record id: a total order, so pages never shuffle rows that tie);
`failures` is `frame`'s failures, the Failed Bank List's rows. `cells` holds every row's cells
for both lists, already formatted.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import polars as pl

from armbench.domains.banks import TABLES
from armbench.domains.banks.site.fields import BANKFIND_COLUMNS, FAILED_BANK_COLUMNS
from armbench.replicas.web.catalog import SiteCatalog


@dataclass(frozen=True)
class Catalog(SiteCatalog):
    """`row_of` maps each FDIC record id (as a bank page's address writes it) to its row."""

    failures: pl.DataFrame
    states: list[str]  # the state select's options
    years: list[int]  # the year select's options: every year of the data's span (some have none), newest first


def bank_href(fdic_id: int) -> str:
    return f"/bank/{fdic_id}"


@cache
def catalog() -> Catalog:
    table = TABLES.load("bank_failures")
    frame = table.with_row_index("row").with_columns(pl.col("bank_name").str.to_lowercase().alias("name_lower"))
    frame = frame.sort("name_lower", "fdic_id").with_row_index("tie").sort("row")
    columns = {column.key: column for column in (*FAILED_BANK_COLUMNS, *BANKFIND_COLUMNS)}
    cells = [{"href": bank_href(row["fdic_id"]), **{key: column.cell(row) for key, column in columns.items()}}
             for row in table.iter_rows(named=True)]
    return Catalog(
        table=table,
        frame=frame,
        cells=cells,
        row_of={str(fdic_id): index for index, fdic_id in enumerate(table["fdic_id"])},
        failures=frame.filter(pl.col("resolution_type") == "FAILURE"),
        states=sorted(table["state"].unique()),
        years=list(range(table["fail_year"].max(), table["fail_year"].min() - 1, -1)),
    )
