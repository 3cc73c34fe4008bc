"""bank_failures: exactly the CSV's rows (when ../shared is present), typed dates, and the FDIC's
spot checks."""
from __future__ import annotations

from datetime import date

import polars as pl
import pytest

from armbench.domains.banks import TABLES
from armbench.domains.banks.data.build import bank_failures
from armbench.paths import SHARED_DATA_DIR

SOURCE = SHARED_DATA_DIR / "banks"
FAILURES = TABLES.load("bank_failures")


def bank(name: str, fail_date: date) -> dict:
    return FAILURES.filter((pl.col("bank_name") == name) & (pl.col("fail_date") == fail_date)).row(0, named=True)


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/banks is not checked out")
def test_the_table_is_the_csv_with_its_dates_typed_and_rebuilds_exactly():
    csv = pl.read_csv(SOURCE / "failures.csv", infer_schema_length=None)
    assert FAILURES.columns == csv.columns
    assert FAILURES.equals(bank_failures(SHARED_DATA_DIR))
    as_text = FAILURES.with_columns(pl.col("fail_date", "resolution_date").dt.to_string("%Y-%m-%d"),
                                    pl.col("cost_as_of").dt.to_string("%d%b%Y").str.to_uppercase())
    assert as_text.equals(csv)


def test_rows_and_resolution_types():
    assert FAILURES.height == 4_114
    assert dict(FAILURES["resolution_type"].value_counts().iter_rows()) == {"FAILURE": 3_521, "ASSISTANCE": 593}
    assert FAILURES["fdic_id"].n_unique() == FAILURES.height
    assert (FAILURES["fail_date"].min(), FAILURES["fail_date"].max()) == (date(1934, 4, 19), date(2026, 1, 30))
    assert FAILURES.schema["fail_date"] == FAILURES.schema["resolution_date"] == FAILURES.schema["cost_as_of"] == pl.Date
    assert (FAILURES["fail_date"].dt.year() == FAILURES["fail_year"]).all()


def test_the_source_spot_checks_hold():
    wamu = bank("WASHINGTON MUTUAL BANK", date(2008, 9, 25))
    assert (wamu["total_assets_thousands"], wamu["total_deposits_thousands"], wamu["estimated_loss_thousands"]) == (
        307_021_614, 188_260_793, 0)
    assert round(wamu["total_assets_thousands"] / 1e6, 1) == 307.0 and wamu["resolution_type"] == "FAILURE"
    svb = bank("SILICON VALLEY BANK", date(2023, 3, 10))
    assert round(svb["total_assets_thousands"] / 1e6, 1) == 209.0
    assert round(svb["total_deposits_thousands"] / 1e6, 1) == 175.4
    assert round(svb["estimated_loss_thousands"] / 1e6, 2) == 18.96
    assert svb["cost_as_of"] == date(2025, 9, 30)


def test_the_gaps_data_md_states():
    newest = FAILURES.sort("fail_date").row(-1, named=True)
    assert newest["bank_name"] == "METROPOLITAN CAPITAL B&T" and newest["estimated_loss_thousands"] is None
    assert FAILURES.filter(pl.col("cert").is_null())["fail_year"].max() == 1976
    assert FAILURES.filter(pl.col("total_assets_thousands").is_null())["fail_year"].max() == 1981
    recent_unknown_loss = FAILURES.filter((pl.col("fail_year") >= 1990) & pl.col("estimated_loss_thousands").is_null())
    assert recent_unknown_loss.height == 15
    assert recent_unknown_loss.filter(pl.col("resolution_type") == "ASSISTANCE").height == 13
    assert (FAILURES["acquirer_name"] == "").sum() == 0  # no acquirer is null, never an empty name
