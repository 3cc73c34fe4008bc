"""The moon domain: the USGS Gazetteer's table as built (SOURCE.md's counts and spot checks), the
replica's search (target, feature type, approval year and diameter ranges, bracketed names, name
contains; 100 rows a page), feature pages at /features/<target>/<name> with the origin text, and the
typed tool over the same rows. Expectations are recomputed from the built table, not copied from
the site."""
from __future__ import annotations

import hashlib
import html
import re

import polars as pl
import pytest
from starlette.testclient import TestClient

from armbench.domains import find_domain
from armbench.domains.moon import KIT
from armbench.paths import SHARED_DATA_DIR

SHARED_CSV = SHARED_DATA_DIR / "moon" / "features.csv"
FOOTER = re.compile(r"<footer>\s*<p>USGS Astrogeology Gazetteer of Planetary Nomenclature")


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    return find_domain("moon").tables.load("planetary_features")


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(KIT.create_app())


@pytest.fixture(scope="module")
def tool():
    return KIT.tool_classes()[0]()


def feature(table: pl.DataFrame, name: str, target: str = "Moon") -> dict:
    return table.filter((pl.col("feature_name") == name) & (pl.col("target") == target)).row(0, named=True)


# ---- the table --------------------------------------------------------------------------------


def test_the_table_is_the_gazetteers(table):
    """SOURCE.md's counts and spot checks."""
    assert table.height == 9_222
    assert dict(table["target"].value_counts().iter_rows()) == {"Moon": 9_200, "Phobos": 20, "Deimos": 2}
    assert table["name_in_brackets"].sum() == 115 and table["approval_year"].null_count() == 43
    assert table["feature_name"].n_unique() == 9_218  # names repeat across targets...
    assert table.select("target", "feature_name").n_unique() == 9_222  # ...but not within one
    assert (table["approval_year"].min(), table["approval_year"].max()) == (1935, 2026)
    copernicus = feature(table, "Copernicus")
    assert (copernicus["diameter_km"], copernicus["center_lat"], copernicus["center_lon"],
            copernicus["approval_year"]) == (96.07, 9.62, -20.08, 1935)
    tycho = feature(table, "Tycho")
    assert (tycho["diameter_km"], tycho["center_lat"], tycho["center_lon"]) == (85.29, -43.30, -11.22)
    assert feature(table, "Mare Imbrium")["diameter_km"] == 1_145.53
    assert feature(table, "Stickney", "Phobos")["diameter_km"] == 9.0
    assert feature(table, "Swift", "Deimos")["origin"] == "Jonathan; British writer (1667-1745)."
    assert feature(table, "Swift")["origin"] != feature(table, "Swift", "Deimos")["origin"]


def test_values_stay_as_exported(table):
    """Approval dates as text, brackets in the name, HTML-entity debris in the origin, longitudes per target."""
    assert feature(table, "8 Homeward")["approval_date"] == "Oct 05, 2018"
    abduh = feature(table, "[Abduh]")
    assert (abduh["approval_date"], abduh["approval_year"], abduh["name_in_brackets"]) == ("-", None, True)
    assert feature(table, "Aldrin")["origin"] == "Edwin Eugene, Jr. (“;Buzz“;); American astronaut (1930-Live)."
    bracketed = table.filter(pl.col("name_in_brackets"))
    assert bracketed["feature_name"].str.contains(r"^\[.*\]$").all()
    assert not table.filter(~pl.col("name_in_brackets"))["feature_name"].str.starts_with("[").any()
    moons = table.group_by("target").agg(pl.col("center_lon").min().alias("low"), pl.col("center_lon").max().alias("high"))
    ranges = {row["target"]: (row["low"], row["high"]) for row in moons.iter_rows(named=True)}
    assert -180 <= ranges["Moon"][0] < 0 and ranges["Moon"][1] <= 180
    assert ranges["Phobos"][1] > 180 and ranges["Deimos"][1] > 180  # 0 to 360 there


@pytest.mark.skipif(not SHARED_CSV.is_file(), reason="../shared/data/moon is not checked out")
def test_the_source_is_the_shared_file_byte_for_byte():
    copied = KIT.folder / "source" / "moon.csv"
    assert copied.read_bytes() == SHARED_CSV.read_bytes()
    digest = hashlib.sha256(copied.read_bytes()).hexdigest()
    assert f"sha256 {digest}" in (KIT.folder / "source" / "SOURCE.md").read_text()


# ---- the search -------------------------------------------------------------------------------


def matches(page: str) -> int:
    """The count a list or group page heads its rows with ("58 features match", "20 features")."""
    return int(re.search(r"<h2>([\d,]+) features?( match(es)?)?</h2>", page).group(1).replace(",", ""))


def listed(page: str) -> list[tuple[str, str]]:
    """(link, name) of each row of a list page."""
    return [(link, html.unescape(name))
            for link, name in re.findall(r'<th scope="row"><a href="(/features/[^"]+)">(.*?)</a></th>', page)]


def test_the_list_pages_100_features_at_a_time(client, table):
    first = client.get("/features").text
    assert matches(first) == 9_222 and len(listed(first)) == 100 and "Showing 1–100 of 9,222." in first
    last = client.get("/features", params={"page": 93}).text
    assert len(listed(last)) == 22 and "Showing 9,201–9,222 of 9,222." in last and 'rel="next"' not in last
    assert client.get("/features", params={"page": 94}).status_code == 404
    every = [link for page in range(1, 94) for link, _ in listed(client.get("/features", params={"page": page}).text)]
    assert len(set(every)) == 9_222


@pytest.mark.parametrize(
    ("params", "condition"),
    [
        ({"target": "Phobos"}, pl.col("target") == "Phobos"),
        ({"target": "Moon", "feature_type": "Mons, montes"},
         (pl.col("target") == "Moon") & (pl.col("feature_type") == "Mons, montes")),
        ({"target": "Moon", "feature_type": "Mons, montes", "name_in_brackets": "no"},
         (pl.col("target") == "Moon") & (pl.col("feature_type") == "Mons, montes") & ~pl.col("name_in_brackets")),
        ({"name_in_brackets": "yes"}, pl.col("name_in_brackets")),
        ({"approval_year_min": 1973, "approval_year_max": 1973}, pl.col("approval_year") == 1973),
        ({"approval_year_min": 2020}, pl.col("approval_year") >= 2020),
        ({"diameter_km_min": 100, "diameter_km_max": 200}, pl.col("diameter_km").is_between(100, 200)),
        ({"diameter_km_min": "5.5", "target": "Phobos"}, (pl.col("diameter_km") >= 5.5) & (pl.col("target") == "Phobos")),
        ({"diameter_km_max": 0}, pl.col("diameter_km") <= 0),
        ({"q": "copernicus"}, pl.col("feature_name").str.to_lowercase().str.contains("copernicus")),
        ({"q": "["}, pl.col("feature_name").str.contains("[", literal=True)),
    ],
)
def test_each_search_filter_matches_the_table(client, table, params, condition):
    page = client.get("/features", params=params)
    assert page.status_code == 200
    expected = table.filter(condition)
    assert matches(page.text) == expected.height
    if expected.height <= 100:
        shown = {(link.split("/")[2], name) for link, name in listed(page.text)}
        assert shown == set(expected.select("target", "feature_name").iter_rows())


def test_the_form_offers_the_gazetteers_search(client):
    page = client.get("/features").text
    for control in ('<select name="target">', '<select name="feature_type">', 'name="approval_year_min"',
                    'name="approval_year_max"', 'name="diameter_km_min"', 'name="diameter_km_max"',
                    '<select name="name_in_brackets">', '<input type="search" name="q"'):
        assert control in page, control
    assert "<option>Crater, craters</option>" in page and "<option>Mare, maria</option>" in page
    assert "Origin" not in page.split("<footer>")[0]  # the origin text is on the feature pages only


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("target=Mars", "Unknown Target 'Mars'. Choose one of: Deimos, Moon, Phobos."),
        ("feature_type=Crater", "Unknown Feature type 'Crater'."),
        ("diameter_km_min=big", "Diameter (km) min must be a number such as 1500 or 2.5; got 'big'."),
        ("diameter_km_min=10&diameter_km_max=5", "The Diameter range is empty: from 10 to 5."),
        ("approval_year_max=1973.x", "Approval year max must be a number"),
        ("name_in_brackets=true", "Unknown Name in brackets (dropped or not approved) 'true'. Choose one of: yes, no."),
        ("sort=origin", "Cannot sort by 'origin'."),
        ("page=0", "Page must be a whole number from 1"),
    ],
)
def test_a_query_the_search_cannot_honour_is_a_400_page(client, query, message):
    page = client.get(f"/features?{query}")
    assert page.status_code == 400 and FOOTER.search(page.text)
    assert message in html.unescape(page.text)


def test_group_pages_per_target_and_feature_type(client, table):
    phobos = client.get("/features-by-target/Phobos").text
    assert matches(phobos) == 20 and all(link.startswith("/features/Phobos/") for link, _ in listed(phobos))
    index = client.get("/features-by-feature_type").text
    assert '<a href="/features-by-feature_type/Mare%2C%20maria">Mare, maria</a>' in index
    maria = client.get("/features-by-feature_type/Mare%2C%20maria").text
    assert matches(maria) == table.filter(pl.col("feature_type") == "Mare, maria").height == 22


# ---- feature pages ----------------------------------------------------------------------------


def facts(page: str) -> dict[str, str]:
    return {html.unescape(label): html.unescape(value).strip()
            for label, value in re.findall(r'<th scope="row">([^<]+)</th>\s*<td>(.*?)</td>', page, re.S)}


def test_a_feature_page_has_every_field_and_the_origin(client):
    page = client.get("/features/Moon/Copernicus")
    assert page.status_code == 200 and "<h1>Copernicus</h1>" in page.text
    shown = facts(page.text)
    assert shown["Origin"] == "Nicholas; Polish astronomer (1473-1543)."
    assert (shown["Diameter"], shown["Center latitude"], shown["Center longitude"]) == (
        "96.07 km", "9.62 degrees", "-20.08 degrees")
    assert (shown["Approval date"], shown["Approval year"], shown["Target"]) == ("1935", "1935", "Moon")
    assert shown["Name in brackets (dropped or not approved)"] == "no"
    assert 'href="/features-by-target/Moon"' in page.text
    aldrin = facts(client.get("/features/Moon/Aldrin").text)["Origin"]
    assert aldrin == "Edwin Eugene, Jr. (“;Buzz“;); American astronaut (1930-Live)."  # the debris as exported


def test_names_on_two_targets_have_a_page_each(client, table):
    for name, targets in [("Hall", ("Moon", "Phobos")), ("Swift", ("Moon", "Deimos")),
                          ("D'Arrest", ("Moon", "Phobos")), ("Roche", ("Moon", "Phobos"))]:
        for target in targets:
            shown = facts(client.get(f"/features/{target}/{name}").text)
            assert shown["Target"] == target
            assert shown["Origin"] == feature(table, name, target)["origin"]
    assert facts(client.get("/features/Deimos/Swift").text)["Origin"] == "Jonathan; British writer (1667-1745)."
    missing = client.get("/features/Hall")
    assert missing.status_code == 404
    assert "has the pages /features/Moon/Hall, /features/Phobos/Hall." in html.unescape(missing.text)
    assert client.get("/features/Deimos/Hall").status_code == 404


def test_bracketed_names_are_shown_in_brackets_and_said_to_be_dropped(client):
    page = client.get("/features/Moon/%5BAbduh%5D")
    assert page.status_code == 200 and "<h1>[Abduh]</h1>" in page.text
    shown = facts(page.text)
    assert shown["Name in brackets (dropped or not approved)"] == "yes"
    assert shown["Approval date"] == "-" and shown["Approval year"].startswith("—")
    assert "in [square brackets] is, as in the Gazetteer, a dropped or not-approved name" in page.text
    mons = client.get("/features", params={"target": "Moon", "feature_type": "Mons, montes"}).text
    assert ("/features/Moon/%5BMons%20Euler%5D", "[Mons Euler]") in listed(mons)


# ---- the typed tool ---------------------------------------------------------------------------


async def call(tool, **args) -> dict:
    outcome = await tool.invoke(args)
    return outcome.result


def test_the_tool_describes_the_fields(tool):
    assert tool.name == "planetary_feature_query"
    description = tool.description
    assert " 9,222 rows, one per feature;" in description
    assert "- origin (text): The Gazetteer's origin text" in description and "search it with contains" in description
    assert "- name_in_brackets (true/false): Whether the Gazetteer writes the name in [square brackets]" in description
    assert "- diameter_km (number, km):" in description
    assert "text ops: eq, ne, in (list), contains, starts_with; all case-insensitive." in description
    assert '"value": "Mare, maria"' in description  # its worked example, no question's


async def test_origin_is_searchable_with_contains(tool, table):
    found = await call(tool, filters=[{"field": "origin", "op": "contains", "value": "DISCOVERER OF PHOBOS"}],
                       fields=["feature_name", "target", "origin"])
    assert [(row["feature_name"], row["target"]) for row in found["rows"]] == [("Hall", "Phobos")]
    assert found["rows"][0]["source_url"].endswith("/features/Phobos/Hall")
    poets = await call(tool, filters=[{"field": "origin", "op": "contains", "value": "poet"},
                                      {"field": "name_in_brackets", "op": "eq", "value": False}],
                       aggregate={"fn": "count"}, limit=1)
    expected = table.filter(pl.col("origin").str.to_lowercase().str.contains("poet") & ~pl.col("name_in_brackets"))
    assert poets["aggregate"]["value"] == expected.height > 0


async def test_the_tool_answers_from_the_same_rows_as_the_site(tool, client):
    found = await call(tool, filters=[{"field": "target", "op": "eq", "value": "Phobos"}], limit=50)
    page = client.get("/features", params={"target": "Phobos"}).text
    assert [row["source_url"].partition("/features")[2] for row in found["rows"]] == [
        link.removeprefix("/features") for link, _ in listed(page)]
    largest = await call(tool, filters=[{"field": "feature_type", "op": "eq", "value": "Mare, maria"}],
                         sort_by="diameter_km", limit=2)
    assert [row["feature_name"] for row in largest["rows"]] == ["Mare Frigoris", "Mare Imbrium"]
    bracketed = await call(tool, filters=[{"field": "name_in_brackets", "op": "eq", "value": True}],
                           aggregate={"fn": "count"}, limit=1)
    assert bracketed["aggregate"]["value"] == 115
    undated = await call(tool, filters=[{"field": "approval_year", "op": "is_null"}], aggregate={"fn": "count"})
    assert undated["aggregate"]["value"] == 43


@pytest.mark.parametrize(
    ("args", "error"),
    [
        ({"filters": [{"field": "diameter_km", "op": "contains", "value": "9"}]}, "bad_op"),
        ({"filters": [{"field": "origin", "op": "gt", "value": "a"}]}, "bad_op"),
        ({"filters": [{"field": "namesake", "op": "contains", "value": "writer"}]}, "unknown_field"),
        ({"filters": [{"field": "name_in_brackets", "op": "eq", "value": "maybe"}]}, "bad_value"),
        ({"filters": [{"field": "approval_year", "op": "eq", "value": "nineteen"}]}, "bad_value"),
        ({"aggregate": {"fn": "avg", "field": "origin"}}, "bad_aggregate"),
    ],
)
async def test_mistakes_are_tool_errors_naming_the_choices(tool, args, error):
    outcome = await tool.invoke(args)
    assert outcome.is_error and outcome.result["error"]["type"] == error
