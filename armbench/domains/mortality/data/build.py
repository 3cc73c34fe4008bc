"""`../shared/data/mortality/deaths_by_state_cause_year.csv` -> `mortality.parquet` (run by `bench
data build`): the shared table as it is, typed and in (year, state, cause) order. Nothing calls this
at run time: the Parquet file is committed.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.domains.mortality import TABLES

SOURCE_FILE = "deaths_by_state_cause_year.csv"
SCHEMA = {
    "year": pl.Int64, "cause_113_name": pl.String, "cause": pl.String, "state": pl.String,
    "deaths": pl.Int64, "age_adjusted_rate_per_100k": pl.Float64, "is_national_total": pl.Boolean,
}


def build(shared_data: Path) -> list[Path]:
    rows = pl.read_csv(shared_data / "mortality" / SOURCE_FILE, schema=SCHEMA)
    return [TABLES.write(rows.sort("year", "state", "cause"), "mortality")]
