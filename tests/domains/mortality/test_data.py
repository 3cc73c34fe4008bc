"""mortality.parquet: exactly the shared CSV (when ../shared is present), whole (every state, year
and cause once), the NCHS spot checks, and the design question's reference re-derived from it."""
from __future__ import annotations

import polars as pl
import pytest

from armbench.domains.mortality import TABLES
from armbench.domains.mortality.data.build import SCHEMA, SOURCE_FILE
from armbench.paths import SHARED_DATA_DIR
from armbench.questions import load_set_file, set_path

SOURCE = SHARED_DATA_DIR / "mortality"
TABLE = TABLES.load("mortality")


def value(state: str, year: int, cause: str) -> tuple[int, float]:
    row = TABLE.filter((pl.col("state") == state) & (pl.col("year") == year) & (pl.col("cause") == cause))
    assert row.height == 1
    return row["deaths"].item(), row["age_adjusted_rate_per_100k"].item()


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/mortality is not checked out")
def test_the_table_is_the_shared_csv_row_for_row():
    csv = pl.read_csv(SOURCE / SOURCE_FILE, infer_schema_length=None)
    assert csv.height == 10_868 and csv.columns == list(SCHEMA)
    assert TABLE.equals(csv.cast(SCHEMA).sort("year", "state", "cause"))


def test_columns_and_every_state_year_and_cause_once():
    assert TABLE.schema == pl.Schema(SCHEMA)
    assert TABLE.height == 10_868 == 19 * 52 * 11
    assert TABLE.null_count().sum_horizontal().item() == 0
    assert TABLE.select("state", "year", "cause").is_unique().all()
    assert TABLE["year"].unique().sort().to_list() == list(range(1999, 2018))
    assert TABLE["state"].n_unique() == 52 and TABLE["cause"].n_unique() == 11
    assert (TABLE["is_national_total"] == (TABLE["state"] == "United States")).all()
    assert TABLE.select("cause", "cause_113_name").unique().height == 11


def test_the_source_spot_checks_hold():
    assert value("United States", 2017, "All causes") == (2_813_503, 731.9)
    assert value("United States", 1999, "All causes")[1] == 875.6
    assert value("West Virginia", 2017, "Unintentional injuries")[1] == 100.3


def test_the_national_rows_are_the_sums_of_the_states():
    states = TABLE.filter(~pl.col("is_national_total")).group_by("year", "cause").agg(pl.col("deaths").sum())
    national = TABLE.filter(pl.col("is_national_total")).select("year", "cause", pl.col("deaths").alias("national"))
    joined = states.join(national, on=["year", "cause"])
    assert joined.height == 19 * 11 and (joined["deaths"] == joined["national"]).all()


def test_the_design_reference_is_what_the_table_says():
    question = load_set_file(set_path("mortality", "design")).questions[0]
    above = TABLE.filter((pl.col("cause") == "Cancer") & pl.col("year").is_between(2008, 2010)
                         & ~pl.col("is_national_total") & (pl.col("age_adjusted_rate_per_100k") > 190))
    every_year = above.group_by("state").len().filter(pl.col("len") == 3)["state"].sort().to_list()
    assert every_year == question.answer == ["Alabama", "Arkansas", "Kentucky", "Louisiana", "Mississippi",
                                             "Tennessee", "West Virginia"]
