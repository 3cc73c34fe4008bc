"""The wb_* tables: exactly the CSVs' values (when ../shared is present) and the quirks."""
from __future__ import annotations

import polars as pl
import pytest

from armbench.domains.worldbank import TABLES
from armbench.paths import SHARED_DATA_DIR

SOURCE = SHARED_DATA_DIR / "worldbank"
COUNTRIES = TABLES.load("wb_countries")


@pytest.mark.skipif(not SOURCE.is_dir(), reason="../shared/data/worldbank is not checked out")
def test_wb_values_hold_exactly_the_csv_observations():
    values = TABLES.load("wb_values")
    for path in sorted((SOURCE / "values").glob("*.csv")):
        csv = pl.read_csv(path, schema_overrides={"Value": pl.Float64})
        table = values.filter(pl.col("indicator") == path.stem).sort("country", "year")
        expected = csv.sort("Country Code", "Year")
        assert table["country"].to_list() == expected["Country Code"].to_list(), path.stem
        assert table["year"].to_list() == expected["Year"].to_list(), path.stem
        assert table["value"].to_list() == expected["Value"].to_list(), path.stem


def test_aggregates_carry_the_api_placeholders():
    aggregates = COUNTRIES.filter(pl.col("is_aggregate"))
    assert aggregates.height == 79
    assert set(aggregates["region_code"]) == {"NA"} and set(aggregates["lending_type_code"]) == {""}
    assert set(aggregates["region"]) == {"Aggregates"}


def test_admin_region_is_the_developing_counterpart_for_low_and_middle_income():
    economies = COUNTRIES.filter(~pl.col("is_aggregate"))
    developing = pl.col("income_level_code").is_in(["LIC", "LMC", "UMC"])
    assert economies.filter(developing & pl.col("admin_region_code").is_null()).height == 0
    assert economies.filter(~developing & pl.col("admin_region_code").is_not_null()).height == 0
    pairs = economies.filter(developing).select("region_code", "admin_region_code").unique()
    assert dict(pairs.iter_rows()) == {
        "EAS": "EAP", "ECS": "ECA", "LCN": "LAC", "MEA": "MNA", "SAS": "SAS", "SSF": "SSA"
    }


def test_current_regions_and_api_spellings():
    south_asia = COUNTRIES.filter(pl.col("region_code") == "SAS")["code"].to_list()
    assert south_asia == ["BGD", "BTN", "IND", "LKA", "MDV", "NPL"]
    latin = COUNTRIES.filter(pl.col("code") == "MEX")["region"].item()
    assert latin == "Latin America & Caribbean "
