"""funds.parquet: the source's funds (when ../shared is present) plus generated metrics that are
deterministic, independent of row order, calibrated and labelled as generated in DATA.md."""
from __future__ import annotations

import polars as pl
import pytest

from armbench.domains.funds import TABLES
from armbench.domains.funds.data.build import KEPT_COLUMNS, read_universe
from armbench.domains.funds.data.metrics import AS_OF, GENERATED_COLUMNS, generate, share_class, uniform
from armbench.paths import SHARED_DATA_DIR

SOURCE = SHARED_DATA_DIR / "funds"
FUNDS = TABLES.load("funds")


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/funds is not checked out")
def test_the_table_is_the_named_and_categorised_source_funds_and_rebuilds_exactly():
    raw = pl.read_csv(SOURCE / "us_mutual_funds_financedatabase.csv", infer_schema_length=None)
    kept = raw.filter(pl.col("name").is_not_null() & pl.col("category").is_not_null())
    assert (raw.height, kept.height) == (31_432, 28_946)
    assert FUNDS.select(KEPT_COLUMNS).sort("symbol").equals(kept.select(KEPT_COLUMNS).sort("symbol"))
    rebuilt = generate(read_universe(SOURCE).sort("symbol"))
    assert rebuilt.equals(FUNDS.drop("source_url"))


def test_generated_values_do_not_depend_on_row_order():
    universe = FUNDS.select(KEPT_COLUMNS)
    shuffled = generate(universe.sample(fraction=1.0, shuffle=True, seed=7)).sort("symbol")
    assert shuffled.equals(FUNDS.drop("source_url"))


def test_the_random_source_is_a_fixed_hash():
    assert uniform("VFIAX", "assets") == uniform("VFIAX", "assets")
    assert uniform("VFIAX", "assets") != uniform("VFIAX", "expense") != uniform("VFIAXX", "assets")
    assert 0 < uniform("", "") < 1


@pytest.mark.parametrize(
    ("name", "portfolio", "kind"),
    [
        ("Invesco Global Core Equity Fund Class C", "Invesco Global Core Equity Fund", "deferred"),
        ("Lord Abbett Dividend Growth Fund Class A", "Lord Abbett Dividend Growth Fund", "front"),
        ("Sterling Capital Stratton Mid Cap Value Fund C Shares",
         "Sterling Capital Stratton Mid Cap Value Fund", "deferred"),
        ("DWS Floating Rate Fund - Class R6", "DWS Floating Rate Fund", "retirement"),
        ("Baird MidCap Fund Institutional Class", "Baird MidCap Fund", "institutional"),
        ("Vanguard 500 Index Fund Admiral Shares", "Vanguard 500 Index Fund", "other"),
        ("Fidelity Contrafund Fund", "Fidelity Contrafund Fund", "other"),
    ],
)
def test_share_classes_are_told_by_the_name(name, portfolio, kind):
    assert share_class(name) == (portfolio, kind)


def test_columns_and_size_stay_compact():
    assert FUNDS.columns == [*KEPT_COLUMNS, *GENERATED_COLUMNS, "source_url"]
    assert (TABLES.path("funds")).stat().st_size < 1_000_000
    assert FUNDS["symbol"].is_unique().all()
    assert FUNDS["source_url"].to_list() == [f"/funds/{s}" for s in FUNDS["symbol"]]


def test_about_five_percent_are_closed_and_share_classes_close_together():
    closed = FUNDS.filter(pl.col("status") == "closed")
    assert 0.04 < closed.height / FUNDS.height < 0.06
    portfolio = pl.Series([share_class(n)[0] for n in FUNDS["name"]])
    mixed = FUNDS.with_columns(portfolio.alias("portfolio")).group_by("portfolio", "category").agg(
        pl.col("status").n_unique().alias("statuses")).filter(pl.col("statuses") > 1)
    assert mixed.height == 0


def test_track_records_set_which_returns_and_ratings_exist():
    for years in (1, 3, 5):
        young = FUNDS["inception_date"] > AS_OF.replace(year=AS_OF.year - years)
        assert FUNDS.filter(young)[f"return_{years}y_pct"].null_count() == young.sum()
        assert FUNDS.filter(~young)[f"return_{years}y_pct"].null_count() == 0
    assert (FUNDS["rating"].is_null() == FUNDS["return_3y_pct"].is_null()).all()


def test_ratings_follow_the_percentile_rule_within_each_category():
    rated = FUNDS.filter(pl.col("rating").is_not_null())
    shares = rated["rating"].value_counts(normalize=True).sort("rating")["proportion"].to_list()
    assert shares == pytest.approx([0.10, 0.225, 0.35, 0.225, 0.10], abs=0.01)


def test_the_calibration_medians_hold_roughly():
    assert FUNDS["expense_ratio_pct"].median() == pytest.approx(0.89, abs=0.1)
    assert FUNDS["total_assets_musd"].median() == pytest.approx(1141.83, rel=0.05)
    assert FUNDS["min_investment_usd"].median() == 2500
    muni = FUNDS.filter(pl.col("category") == "Municipal Bonds")
    assert muni["expense_ratio_pct"].median() < FUNDS["expense_ratio_pct"].median()
    assert muni["return_5y_pct"].median() == pytest.approx(1.47, abs=0.6)


def test_loads_agree_with_their_type():
    assert FUNDS.filter(pl.col("load_type") == "none")["load_pct"].unique().to_list() == [0.0]
    assert FUNDS.filter(pl.col("load_type") == "deferred")["load_pct"].unique().to_list() == [1.0]
    assert FUNDS.filter(pl.col("load_type") == "front")["load_pct"].min() >= 2.25


def test_data_md_labels_every_generated_field():
    section = (TABLES.directory / "DATA.md").read_text().split("## funds.parquet")[1].split("\n## ")[0]
    assert "generated" in section.lower() and "28,946" in section
    for column in GENERATED_COLUMNS:
        assert f"| {column} |" in section and "generated" in section.split(f"| {column} |")[1].split("\n")[0]
