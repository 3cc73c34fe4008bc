"""The exoplanets domain: the archive's table as built, the replica's pages (no page filters on
period, radius or system multiplicity), and the typed tool over the same rows."""
from __future__ import annotations

import re

import polars as pl
import pytest
from starlette.testclient import TestClient

from armbench.domains import find_domain
from armbench.domains.exoplanets import KIT


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    return find_domain("exoplanets").tables.load("exoplanets")


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(KIT.create_app())


def test_the_table_is_the_archives(table):
    """SOURCE.md's counts and spot checks."""
    assert table.height == 5_766 and table["pl_name"].n_unique() == 5_766
    assert dict(table["discoverymethod"].value_counts().iter_rows())["Transit"] == 4_295
    assert (table["pl_orbper"].is_not_null().sum(), table["st_spectype"].is_not_null().sum()) == (5_490, 2_062)
    peg = table.filter(pl.col("pl_name") == "51 Peg b").row(0, named=True)
    assert (peg["disc_year"], peg["discoverymethod"], round(peg["pl_orbper"], 4), round(peg["sy_dist"], 2)) == (
        1995, "Radial Velocity", 4.2308, 15.46)
    proxima = table.filter(pl.col("pl_name") == "Proxima Cen b").row(0, named=True)
    assert (proxima["disc_year"], round(proxima["sy_dist"], 2)) == (2016, 1.30)


def matches(html: str) -> int:
    """The count a list or system page heads its rows with ("18 planets match", "6 planets")."""
    return int(re.search(r"<h2>([\d,]+) planets?( match(es)?)?</h2>", html).group(1).replace(",", ""))


def test_a_years_discoveries_by_method_are_one_list(client, table):
    page = client.get("/planets", params={"disc_year_min": 2009, "disc_year_max": 2009, "discoverymethod": "Transit"})
    expected = table.filter((pl.col("disc_year") == 2009) & (pl.col("discoverymethod") == "Transit")).height
    assert page.status_code == 200 and matches(page.text) == expected == 18


@pytest.mark.parametrize("param", ["pl_orbper_min", "pl_rade_max", "sy_pnum_min", "sy_snum"])
def test_no_page_filters_on_orbits_sizes_or_multiplicity(client, param):
    """The archive's pages do not filter on these: the parameter is ignored, the list unchanged."""
    assert matches(client.get("/planets", params={param: 3}).text) == 5_766
    assert "Orbital period" not in client.get("/planets").text


def test_a_planet_page_has_its_system_and_orbit(client):
    page = client.get("/planets/CoRoT-7 b").text
    facts = dict(re.findall(r'<th scope="row">([^<]+)</th>\s*<td>(.*?)</td>', page, re.S))
    assert (facts["Stars in the system"], facts["Planets in the system"]) == ("1", "3")
    assert facts["Orbital period"].endswith(" days") and facts["Discovery facility"] == "CoRoT"


def test_a_system_page_lists_its_planets(client, table):
    page = client.get("/planets-by-hostname/Kepler-11")
    assert page.status_code == 200
    assert matches(page.text) == table.filter(pl.col("hostname") == "Kepler-11").height == 6


def test_a_discoveries_page_per_year(client, table):
    page = client.get("/planets-by-disc_year/2009")
    assert page.status_code == 200 and matches(page.text) == table.filter(pl.col("disc_year") == 2009).height
    years = client.get("/planets-by-disc_year").text
    assert '<a href="/planets-by-disc_year/1992">1992</a>' in years
    planet = client.get("/planets/CoRoT-7 b").text
    assert 'href="/planets-by-hostname/CoRoT-7"' in planet and 'href="/planets-by-disc_year/2009"' in planet


async def test_the_tool_answers_from_the_same_rows():
    tool = KIT.tool_classes()[0]()
    outcome = await tool.invoke({"filters": [{"field": "hostname", "op": "eq", "value": "kepler-11"}],
                                 "aggregate": {"fn": "max", "field": "pl_orbper"}})
    assert outcome.result["matched"] == 6 and round(outcome.result["aggregate"]["value"], 1) == 118.4
    assert outcome.result["rows"][0]["source_url"].endswith("/planets/Kepler-11%20b")
    assert tool.name == "exoplanet_query" and "Planets in the system" not in tool.description


def test_the_host_index_gives_no_planet_counts(client):
    """A count of planets per host would answer system multiplicity; the archive shows none."""
    index = client.get("/planets-by-hostname").text
    assert '<a href="/planets-by-hostname/Kepler-11">Kepler-11</a></th></tr>' in index
