"""`../shared/data/crashes/` -> three tables (run by `bench data build`).

- crashes: one row per state (49 states and DC) and year, 1994-2013, with the source CSV's
  columns and names, and the state's FiveThirtyEight driver profile joined (the same values in
  each of its 20 rows), so one query reaches both. South Carolina has no rows: its upstream file
  was a copy of Rhode Island's (SOURCE.md).
- crashes_national: the United States' totals and rates, one row per year.
- crashes_driver_profiles: FiveThirtyEight's "bad-drivers" table as published (51 rows, South
  Carolina included).
Nothing calls this at run time: the Parquet files are committed.
"""
from __future__ import annotations

from pathlib import Path

import polars as pl

from armbench.domains.crashes import TABLES

# Counts the source writes as floats ("85.0"); all are whole, so they are stored as integers.
COUNTS = ["fatalities", "population_thousands", "licensed_drivers_thousands", "registered_vehicles_thousands",
          "vmt_billions"]


def read(shared_data: Path, name: str) -> pl.DataFrame:
    return pl.read_csv(shared_data / "crashes" / f"{name}.csv")


def whole_counts(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    fractional = [column for column in COUNTS if (frame[column] % 1 != 0).any()]
    if fractional:
        raise ValueError(f"{name}: {', '.join(fractional)} hold fractions; this build expects whole counts")
    return frame.with_columns(pl.col(COUNTS).cast(pl.Int64))


def build(shared_data: Path) -> list[Path]:
    profiles = read(shared_data, "state_driver_profile_2009_2012_fivethirtyeight")
    states = whole_counts(read(shared_data, "state_year_fatalities_1994_2013"), "state_year_fatalities")
    national = whole_counts(read(shared_data, "us_national_year_fatalities_1994_2013"), "us_national_year_fatalities")
    joined = states.join(profiles, on="state", how="left", validate="m:1").sort("state", "year")
    return [TABLES.write(joined, "crashes"),
            TABLES.write(national.sort("year"), "crashes_national"),
            TABLES.write(profiles.sort("state"), "crashes_driver_profiles")]
