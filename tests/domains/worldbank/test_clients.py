"""The World Bank's Python clients, pointed at the replica over HTTP, read the data's values.

wbdata 1.1.0 builds its URLs from module constants in `wbdata.client` (BASE_URL, COUNTRIES_URL,
...); wbgapi 1.0.14 from the module global `wbgapi.endpoint`; pandas-datareader 0.11 from
`pandas_datareader.wb.WB_API_URL`. wbgapi reads data through the advanced `sources/2/...`
queries, wbdata and pandas-datareader through `countries/.../indicators/...`; pandas-datareader
asks for pages of 25,000 data rows and 50,000 indicators.
"""
from __future__ import annotations

import datetime as dt

import pandas_datareader.wb
import polars as pl
import pytest
import wbdata.client as wbdata_client
import wbgapi

from armbench.domains.worldbank import TABLES
from armbench.domains.worldbank.api.app import create_app
from tests.support.loopback import serve

URL_CONSTANTS = ("COUNTRIES_URL", "ILEVEL_URL", "INDICATOR_URL", "LTYPE_URL", "SOURCE_URL",
                 "TOPIC_URL")
VALUES = TABLES.load("wb_values")
COUNTRIES = TABLES.load("wb_countries")
INDICATORS = TABLES.load("wb_indicators")


@pytest.fixture(scope="module")
def base_url():
    with serve(create_app()) as url:
        yield f"{url}/v2"


@pytest.fixture
def wbdata(base_url, tmp_path, monkeypatch):
    for name in URL_CONSTANTS:
        real = getattr(wbdata_client, name)
        monkeypatch.setattr(wbdata_client, name, real.replace(wbdata_client.BASE_URL, base_url))
    return wbdata_client.Client(cache_path=tmp_path / "wbdata-cache")


@pytest.fixture
def wb(base_url, monkeypatch):
    monkeypatch.setattr(wbgapi, "endpoint", base_url)
    return wbgapi


@pytest.fixture
def pdr(base_url, monkeypatch):
    monkeypatch.setattr(pandas_datareader.wb, "WB_API_URL", base_url)
    monkeypatch.setattr(pandas_datareader.wb, "_cached_series", None)  # it caches the indicator list
    return pandas_datareader.wb


def observed(indicator: str, countries: list[str] | None = None,
             since: int = 1960, until: int = 2025) -> dict[tuple[str, int], float]:
    rows = VALUES.filter((pl.col("indicator") == indicator) & pl.col("year").is_between(since, until))
    if countries is not None:
        rows = rows.filter(pl.col("country").is_in(pl.Series(countries).implode()))
    return dict(zip(zip(rows["country"], rows["year"]), rows["value"]))


def members(**conditions: str) -> set[str]:
    frame = COUNTRIES.filter(~pl.col("is_aggregate"))
    for column, value in conditions.items():
        frame = frame.filter(pl.col(column) == value)
    return set(frame["code"])


# ---- wbdata -----------------------------------------------------------------------------------


def test_wbdata_reads_every_population_value_across_pages(wbdata):
    rows = wbdata.get_data("SP.POP.TOTL", date=("2000", "2025"))
    assert len(rows) == 265 * 26 and rows.last_updated == dt.datetime(2026, 7, 1)
    values = {(r["countryiso3code"], int(r["date"])): r["value"] for r in rows}
    assert {k: v for k, v in values.items() if v is not None} == observed(
        "SP.POP.TOTL", since=2000
    )


def test_wbdata_reads_a_series_with_its_gaps(wbdata):
    rows = wbdata.get_data("NY.GDP.MKTP.KD.ZG", country=["GRC", "FRA"], date=("1960", "2025"))
    values = {(r["countryiso3code"], int(r["date"])): r["value"] for r in rows}
    assert len(values) == 2 * 66
    assert {k: v for k, v in values.items() if v is not None} == observed(
        "NY.GDP.MKTP.KD.ZG", ["GRC", "FRA"]
    )
    assert values[("GRC", 1960)] is None


def test_wbdata_metadata(wbdata):
    low = wbdata.get_countries(incomelevel="LIC")
    assert {c["id"] for c in low} == members(income_level_code="LIC")
    assert len(wbdata.get_countries()) == 296
    assert [i["id"] for i in wbdata.get_incomelevels()] == [
        "HIC", "INX", "LIC", "LMC", "LMY", "MIC", "UMC"
    ]
    assert [t["value"] for t in wbdata.get_lendingtypes()] == ["IBRD", "Blend", "IDA",
                                                                "Not classified"]
    assert len(wbdata.get_indicators()) == 19
    assert wbdata.get_indicators(indicator="SP.DYN.IMRT.IN")[0]["name"] == (
        "Mortality rate, infant (per 1,000 live births)"
    )


# ---- wbgapi -----------------------------------------------------------------------------------


def test_wbgapi_fetches_the_infant_mortality_tie(wb):
    rows = list(wb.data.fetch("SP.DYN.IMRT.IN", ["FRA", "NLD"], time=2022))
    assert {(r["economy"], r["time"], r["value"]) for r in rows} == {
        ("FRA", "YR2022", 3.4), ("NLD", "YR2022", 3.4)
    }


def test_wbgapi_fetches_series_for_every_economy_across_pages(wb):
    rows = list(wb.data.fetch("NY.GDP.MKTP.KD.ZG", time=range(2000, 2026), skipBlanks=True,
                              numericTimeKeys=True))
    assert {(r["economy"], r["time"]): r["value"] for r in rows} == observed(
        "NY.GDP.MKTP.KD.ZG", since=2000
    )
    assert any(r["aggregate"] for r in rows) and not all(r["aggregate"] for r in rows)


def test_wbgapi_economies_and_groups(wb):
    economies = list(wb.economy.list(skipAggs=True))
    assert {e["id"] for e in economies} == members()
    france = wb.economy.get("FRA")
    assert (france["value"], france["region"], france["incomeLevel"]) == (
        "France", "ECS", "HIC"
    )
    assert wb.region.members("SAS") == members(region_code="SAS")
    assert wb.income.members("LIC") == members(income_level_code="LIC")
    assert {"WLD", "1W", "EUU"} <= wb.economy.aggregates()
    assert len(list(wb.series.list())) == 19


# ---- pandas-datareader ------------------------------------------------------------------------


def by_code(frame, indicator: str) -> dict[tuple[str, int], float]:
    """pandas-datareader's (country name, year) -> value column, keyed like `observed`."""
    codes = dict(zip(COUNTRIES["name"], COUNTRIES["code"]))
    return {(codes[name], int(year)): value for (name, year), value in frame[indicator].dropna().items()}


def test_pandas_datareader_downloads_a_few_countries_over_a_date_range(pdr):
    frame = pdr.download(indicator="SP.POP.TOTL", country=["USA", "FRA", "JPN"], start=2000, end=2010)
    expected = observed("SP.POP.TOTL", ["USA", "FRA", "JPN"], since=2000, until=2010)
    assert len(expected) == 33 and by_code(frame, "SP.POP.TOTL") == expected


def test_pandas_datareader_downloads_every_economy(pdr):
    indicators = ["SP.POP.TOTL", "NY.GDP.MKTP.KD.ZG"]
    frame = pdr.download(indicator=indicators, country="all", start=2020, end=2020)
    for indicator in indicators:
        assert by_code(frame, indicator) == observed(indicator, since=2020, until=2020)


def test_pandas_datareader_lists_countries_and_indicators(pdr):
    countries = pdr.get_countries()
    assert set(countries["iso3c"]) == set(COUNTRIES["code"])
    france = countries.set_index("iso3c").loc["FRA"]
    assert (france["name"], france["region"], france["incomeLevel"]) == (
        "France", "Europe & Central Asia", "High income"
    )
    assert set(pdr.get_indicators()["id"]) == set(INDICATORS["code"])


def test_pandas_datareader_searches_the_indicator_list(pdr):
    found = pdr.search("population")
    expected = INDICATORS.filter(pl.col("name").str.to_lowercase().str.contains("population"))
    assert set(found["id"]) == set(expected["code"]) and len(found) >= 3
