"""`../shared/data/banks/failures.csv` -> `bank_failures` (run by `bench data build`).

One row per FDIC failure or assistance transaction, 1934 to 2026-01, with the CSV's columns as
they are; only the dates are typed (fail_date, resolution_date, and cost_as_of, "30SEP2025" in
the CSV). Nothing calls this at run time: the Parquet file is committed.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.domains.banks import TABLES


def bank_failures(shared_data: Path) -> pl.DataFrame:
    rows = pl.read_csv(shared_data / "banks" / "failures.csv", infer_schema_length=None)
    return rows.with_columns(
        pl.col("fail_date").str.to_date("%Y-%m-%d"),
        pl.col("resolution_date").str.to_date("%Y-%m-%d"),
        pl.col("cost_as_of").str.to_date("%d%b%Y"),
    )


def build(shared_data: Path) -> list[Path]:
    return [TABLES.write(bank_failures(shared_data), "bank_failures")]
