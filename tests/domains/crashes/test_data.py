"""The crashes tables: exactly the shared CSVs' values (when ../shared is present), NHTSA's spot
checks, South Carolina left out, the driver profile joined per state; and the design reference
recomputed from the Parquet without SQL."""
from __future__ import annotations

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from armbench.domains.crashes import TABLES
from armbench.domains.crashes.data.build import COUNTS, whole_counts
from armbench.paths import SHARED_DATA_DIR
from armbench.questions import load_set_file, set_path

SOURCE = SHARED_DATA_DIR / "crashes"
CRASHES = TABLES.load("crashes")
NATIONAL = TABLES.load("crashes_national")
PROFILES = TABLES.load("crashes_driver_profiles")
CSV_COLUMNS = ["state_abbr", "state", "year", "fatalities", "population_thousands", "fatality_rate_per_100k_pop",
               "licensed_drivers_thousands", "fatality_rate_per_100k_drivers", "registered_vehicles_thousands",
               "fatality_rate_per_100k_vehicles", "vmt_billions", "fatality_rate_per_100m_vmt"]


def figures(frame: pl.DataFrame, state: str, year: int) -> tuple[int, float]:
    row = frame.filter((pl.col("state") == state) & (pl.col("year") == year)).row(0, named=True)
    return row["fatalities"], row["fatality_rate_per_100m_vmt"]


def test_fifty_jurisdictions_times_twenty_years_and_twenty_national_years():
    assert CRASHES.height == 1_000 and NATIONAL.height == 20
    assert CRASHES["state"].n_unique() == 50 and "District of Columbia" in CRASHES["state"]
    assert CRASHES.group_by("state").len()["len"].to_list() == [20] * 50
    assert sorted(CRASHES["year"].unique()) == sorted(NATIONAL["year"]) == list(range(1994, 2014))
    assert CRASHES.columns[:12] == CSV_COLUMNS
    assert CRASHES.null_count().sum_horizontal().item() == 0


def test_nhtsa_spot_checks_hold():
    assert figures(NATIONAL, "United States", 1994) == (40_716, 1.73)
    assert figures(NATIONAL, "United States", 2013) == (32_719, 1.09)
    assert figures(CRASHES, "California", 2013) == (3_000, 0.91)
    assert figures(CRASHES, "Montana", 2013) == (229, 1.90)
    assert figures(CRASHES, "New Jersey", 2013) == (542, 0.73)


def test_south_carolina_has_no_state_years_but_keeps_its_profile():
    assert CRASHES.filter((pl.col("state") == "South Carolina") | (pl.col("state_abbr") == "SC")).is_empty()
    assert PROFILES.height == 51 and "South Carolina" in PROFILES["state"]
    # The national totals are NHTSA's, South Carolina included: the states never add up to them.
    sums = CRASHES.group_by("year").agg(pl.col("fatalities").sum()).join(NATIONAL, on="year", suffix="_us")
    assert (sums["fatalities"] < sums["fatalities_us"]).all()


def test_every_state_year_carries_its_states_driver_profile():
    profile_columns = PROFILES.columns[1:]
    assert CRASHES.columns[12:] == profile_columns
    assert all(name.endswith(("_2009", "_2010", "_2011", "_2012")) for name in profile_columns)
    joined = CRASHES.select("state", *profile_columns).unique().sort("state")
    assert_frame_equal(joined, PROFILES.filter(pl.col("state") != "South Carolina").sort("state"))
    assert CRASHES.filter(pl.col("state") == "Alabama")["pct_drivers_alcohol_impaired_2012"].unique().to_list() == [30]


def test_counts_are_whole_numbers_and_a_fraction_is_refused():
    assert all(CRASHES.schema[column] == NATIONAL.schema[column] == pl.Int64 for column in COUNTS)
    fractional = pl.DataFrame({column: [1.0] for column in COUNTS}).with_columns(vmt_billions=pl.lit(2.5))
    with pytest.raises(ValueError, match="vmt_billions hold fractions"):
        whole_counts(fractional, "test")


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/crashes is not checked out")
def test_the_tables_hold_exactly_the_csvs_values():
    states = pl.read_csv(SOURCE / "state_year_fatalities_1994_2013.csv")
    assert_frame_equal(CRASHES.select(CSV_COLUMNS), states.sort("state", "year"), check_dtypes=False)
    national = pl.read_csv(SOURCE / "us_national_year_fatalities_1994_2013.csv")
    assert_frame_equal(NATIONAL, national.sort("year"), check_dtypes=False)
    profiles = pl.read_csv(SOURCE / "state_driver_profile_2009_2012_fivethirtyeight.csv")
    assert_frame_equal(PROFILES, profiles.sort("state"))


def test_the_design_reference_holds_in_the_parquet():
    """Below 1.0 per 100 million VMT in two consecutive years of 2000-2005, found by walking each
    state's years (the stored derivation is a SQL self-join)."""
    question = load_set_file(set_path("crashes", "design")).questions[0]
    found = set()
    for (state,), rows in CRASHES.filter(pl.col("year").is_between(2000, 2005)).group_by("state"):
        below = set(rows.filter(pl.col("fatality_rate_per_100m_vmt") < 1.0)["year"])
        if any(year in below and year + 1 in below for year in range(2000, 2005)):
            found.add(state)
    assert sorted(found) == sorted(question.answer) == ["Connecticut", "Massachusetts", "Vermont"]
