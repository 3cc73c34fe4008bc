"""A table domain's replica website, built from domain.yaml (armbench/tablekit/site.py): the list
with its filters, sorting and paging, one page per entity, the group pages, and error pages.

Expectations are recomputed with polars from the built table, never copied from the site.
"""
from __future__ import annotations

import asyncio
import re
import shutil
from pathlib import Path
from urllib.parse import quote, quote_plus

import polars as pl
import pytest
from fastapi.testclient import TestClient
from hypothesis import given, settings
from hypothesis import strategies as st

from armbench.tablekit import TableDomain, site
from armbench.tablekit.site import create_app
from tests.fuzz.hostile import FUZZ, examples, hostile_value
from tests.fuzz.test_replica_queries import RAW_PIECES, Request, answer, on_the_wire
from tests.support.site_pages import row_value

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
FOOTER = re.compile(r"<footer>\s*<p>Forty cities typed in by hand from Wikipedia \(CC BY-SA 4.0\)")
FRUITS_FOOTER = re.compile(r"<footer>\s*<p>Ten fruits made up for the tests.")
FRUITS_SPEC = """\
name: fruits
title: Fruit table (website)
port_offset: 11
table: fruits
source: source/fruits.csv
provenance: Ten fruits made up for the tests.
entity: {key: name, one: fruit, many: fruits}
fields:
  - {name: name, kind: text}
  - {name: row, kind: number, description: "The orchard row: the name the site's own row index once took"}
  - {name: colour, kind: text}
  - {name: year, kind: number}
  - {name: picked, kind: date}
  - {name: ripe, kind: bool}
site:
  path: /fruits
  heading: Fruits
  list_fields: [name, row, colour, year]
  filters: [row, colour]
  group_by: colour
tool:
  name: fruits_query
  intro: A table of ten fruits.
  default_fields: [name, row]
  tie: name
  example: {says: every ripe fruit, args: {filters: [{field: ripe, op: eq, value: true}]}}
"""
# Keys differing only in case, one spelled like the old group index's address; one null in each
# field from colour on.
FRUITS_CSV = """\
name,row,colour,year,picked,ripe
apple,3,Red,1998,2024-09-01,true
Apple,1,Green,1998,2024-09-02,false
Banana,2,Yellow,2001,,true
by-colour,4,Blue,,2024-08-15,
cherry,5,Red,2003,2024-06-20,true
Date,6,Brown,2001,2024-09-01,false
elderberry,7,,1998,2024-08-15,yes
Fig,8,Purple,2010,2024-06-20,no
kiwi,9,Brown,2003,2024-09-01,true
Kiwi,10,Green,2010,2024-06-20,false
"""


def fruit_domain(root: Path) -> TableDomain:
    """A small table domain with a field named `row`, mixed-case keys and a key `by-colour`, built."""
    folder = root / "fruits"
    (folder / "source").mkdir(parents=True)
    (folder / "domain.yaml").write_text(FRUITS_SPEC)
    (folder / "source" / "fruits.csv").write_text(FRUITS_CSV)
    (folder / "__init__.py").write_text("")
    domain = TableDomain(str(folder / "__init__.py"))
    domain.build(folder)
    return domain


@pytest.fixture(scope="module")
def cities_table(cities) -> pl.DataFrame:
    return cities.tables.load("cities")


@pytest.fixture(scope="module")
def client(cities) -> TestClient:
    return TestClient(cities.create_app())


@pytest.fixture(scope="module")
def wide(cities) -> TestClient:
    """The cities with every kind of filter: founded (dates, with nulls) listed and filtered, the
    name (40 values) a "contains" box by a lower limit of listed choices, no search and no groups."""
    spec = cities.spec
    edited = spec.model_copy(update={"site": spec.site.model_copy(update={
        "list_fields": ["name", "country", "founded", "capital", "elevation_m"],
        "filters": ["name", "country", "founded", "elevation_m"],
        "search": False,
        "group_by": [],
    })})
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(site, "MAX_LISTED_CHOICES", 20)
        return TestClient(create_app(edited, cities.tables))


@pytest.fixture(scope="module")
def fruits(tmp_path_factory) -> TableDomain:
    return fruit_domain(tmp_path_factory.mktemp("fruits"))


@pytest.fixture(scope="module")
def fruits_table(fruits) -> pl.DataFrame:
    return fruits.tables.load("fruits")


def grouped_by(domain: TableDomain, field: str) -> TestClient:
    """The domain's site grouped by `field`, whatever its kind."""
    spec = domain.spec
    edited = spec.model_copy(update={"site": spec.site.model_copy(update={"group_by": [field]})})
    return TestClient(create_app(edited, domain.tables))


@pytest.fixture(scope="module")
def towns(tmp_path_factory) -> TestClient:
    """250 generated rows under the cities spec, for paging: every fifth population unknown."""
    folder = tmp_path_factory.mktemp("towns")
    (folder / "source").mkdir()
    shutil.copy(FIXTURES / "cities_domain" / "domain.yaml", folder)
    rows = [f"Town {i:03d},Land {i % 7},{'' if i % 5 == 0 else 1000 + 37 * i % 900},{i + 1},,false,{i}"
            for i in range(250)]
    header = "name,country,population,area_km2,founded,capital,elevation_m"
    (folder / "source" / "cities.csv").write_text("\n".join([header, *rows]) + "\n")
    (folder / "__init__.py").write_text("")
    domain = TableDomain(str(folder / "__init__.py"))
    domain.build(folder)
    return TestClient(domain.create_app())


def names(html: str, path: str = "/cities") -> list[str]:
    """The entities listed in a list page's table, in order (their links' keys, unquoted)."""
    found = re.findall(rf'<th scope="row"><a href="{path}/[^"]+">([^<]+)</a>', html)
    return [cell.replace("&#39;", "'") for cell in found]


def matches(html: str) -> int:
    return int(re.search(r"<h2>([\d,]+) cit(?:y|ies)", html).group(1).replace(",", ""))


def in_site_order(frame: pl.DataFrame, column: str = "name", descending: bool = False) -> list[str]:
    """`frame`'s names as the site orders them: text ignoring case, bool as yes/no, nulls last, ties by name."""
    key = pl.col(column)
    if frame.schema[column] == pl.Boolean:
        key = pl.when(key).then(pl.lit("yes")).when(~key).then(pl.lit("no"))
    elif frame.schema[column] == pl.Utf8:
        key = key.str.to_lowercase()
    ordered = frame.sort([key, pl.col("name")], descending=[descending, False], nulls_last=True)
    return ordered["name"].to_list()


def error(client: TestClient, url: str, status: int, footer: re.Pattern = FOOTER) -> str:
    """The message of `url`'s error page, which must answer `status` in the site's layout."""
    response = client.get(url)
    assert response.status_code == status, (url, response.status_code)
    assert "text/html" in response.headers["content-type"] and footer.search(response.text)
    return re.search(r"<p>(.*?)</p>", response.text.split("<main>")[1], re.S).group(1).replace("&#39;", "'")


# ---- the list page ----------------------------------------------------------------------------


def test_home_leads_to_the_list_and_healthz_names_the_replica(client, cities):
    assert client.get("/", follow_redirects=False).headers["location"] == "/cities"
    assert client.get("/healthz").json() == {"replica": "cities", "data_hash": cities.tables.hash()}
    for path in ("/docs", "/openapi.json"):
        assert client.get(path).status_code == 404


def test_the_list_shows_every_city_by_name(client, cities_table):
    html = client.get("/cities").text
    assert "<h1>Cities</h1>" in html and matches(html) == 40 and "Showing 1–40 of 40." in html
    assert "Sorted by name, A to Z; unknown values last." in html
    assert names(html) == in_site_order(cities_table)
    headers = re.findall(r'<th scope="col"[^>]*>\s*<a href="[^"]*">([^<]+)</a>', html)
    assert headers == ["Name", "Country", "Population (people)", "Area km2 (km²)", "Capital"]
    tokyo = re.search(r'<tr>\s*<th scope="row"><a href="/cities/Tokyo">Tokyo</a></th>(.*?)</tr>', html, re.S).group(1)
    assert re.findall(r"<td>(.*?)</td>", tokyo) == ["Japan", "13960000", "2194", "yes"]
    assert '<a href="/cities/Rio%20de%20Janeiro">Rio de Janeiro</a>' in html  # keys are quoted in links
    assert FOOTER.search(html) and '<a href="/cities-by-country">Cities by country</a>' in html


@pytest.mark.parametrize("column", ["name", "country", "population", "area_km2", "capital"])
@pytest.mark.parametrize("order", ["asc", "desc"])
def test_every_list_column_sorts_both_ways(client, cities_table, column, order):
    html = client.get(f"/cities?sort={column}&order={order}").text
    assert names(html) == in_site_order(cities_table, column, order == "desc")
    assert f'aria-sort="{"ascending" if order == "asc" else "descending"}"' in html


def test_a_sorted_list_says_so_and_its_links_keep_the_filters(client):
    html = client.get("/cities?sort=population&capital=no").text
    assert "Sorted by population, highest first" in html  # numbers start highest first, as the web kit does
    assert 'href="/cities?capital=no&amp;sort=population&amp;order=asc"' in html  # the header flips the order
    assert '<input type="hidden" name="sort" value="population">' in html


def test_unknown_values_sort_last_either_way(wide, cities_table):
    for order in ("asc", "desc"):
        listed = names(wide.get(f"/cities?sort=founded&order={order}").text)
        assert listed == in_site_order(cities_table, "founded", order == "desc")
        unknown = cities_table.filter(pl.col("founded").is_null()).height
        assert set(listed[-unknown:]) == set(cities_table.filter(pl.col("founded").is_null())["name"])
    html = wide.get("/cities?q=paris&name=paris").text
    assert re.search(r'<a href="/cities/Paris">Paris</a></th>\s*<td>France</td>\s*<td>—</td>', html)


# ---- filters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "condition"),
    [
        ("country=Japan", pl.col("country") == "Japan"),
        ("capital=yes", pl.col("capital")),
        ("capital=no&country=Brazil", ~pl.col("capital") & (pl.col("country") == "Brazil")),
        ("population_min=2000000", pl.col("population") >= 2_000_000),
        ("population_max=500000", pl.col("population") <= 500_000),
        ("population_min=1000000&population_max=1500000.5", pl.col("population").is_between(1_000_000, 1_500_000)),
        ("population_min=-1", pl.lit(True)),
        ("q=AN", pl.col("name").str.to_lowercase().str.contains("an")),
        ("q= rio ", pl.col("name") == "Rio de Janeiro"),
        ("country=&capital=&population_min=&q=&unknown=1", pl.lit(True)),
    ],
)
def test_each_filter_matches_the_table(client, cities_table, query, condition):
    html = client.get(f"/cities?{query}").text
    expected = cities_table.filter(condition)
    assert matches(html) == expected.height and names(html) == in_site_order(expected)


@pytest.mark.parametrize(
    ("query", "condition"),
    [
        ("founded_min=1800", pl.col("founded") >= pl.date(1800, 1, 1)),
        ("founded_max=1500", pl.col("founded") <= pl.date(1500, 12, 31)),
        ("founded_min=1788-01-26&founded_max=1840-01-22", pl.col("founded").is_between(pl.date(1788, 1, 26),
                                                                                       pl.date(1840, 1, 22))),
        ("name=O", pl.col("name").str.to_lowercase().str.contains("o")),
        ("elevation_m_max=0", pl.col("elevation_m") <= 0),
        ("elevation_m_min=1000&country=Mexico", (pl.col("elevation_m") >= 1000) & (pl.col("country") == "Mexico")),
        ("q=paris", pl.lit(True)),  # no search box on this site: an unknown parameter
    ],
)
def test_date_ranges_and_contains_boxes_match_the_table(wide, cities_table, query, condition):
    html = wide.get(f"/cities?{query}").text
    expected = cities_table.filter(condition)
    assert matches(html) == expected.height and names(html) == in_site_order(expected)


def test_the_form_offers_each_filter_by_kind_and_keeps_the_choices(client, wide):
    html = client.get("/cities?country=Japan&capital=no&population_min=1000000&q=o").text
    assert "<option selected>Japan</option>" in html and html.count("<option") == 1 + 16 + 3
    assert '<select name="capital">\n      <option value="">Any</option>\n      <option>yes</option>\n' \
           '      <option selected>no</option>' in html
    assert '<input type="number" name="population_min" step="any" value="1000000">' in html
    assert '<input type="number" name="population_max" step="any" value="">' in html
    assert '<input type="search" name="q" value="o">' in html
    assert 'href="/cities?country=Japan&amp;capital=no&amp;population_min=1000000&amp;q=o&amp;sort=country' in html
    html = wide.get("/cities?name=ky&founded_min=1800").text
    assert '<label>Name contains\n    <input type="text" name="name" value="ky">' in html
    assert 'name="founded_min" placeholder="YYYY or YYYY-MM-DD" value="1800"' in html
    assert 'name="q"' not in html and "by-country" not in html


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("country=Atlantis", "Unknown country 'Atlantis'. Choose one of: Australia, Austria"),
        ("country=japan", "Unknown country 'japan'"),
        ("capital=true", "Unknown capital 'true'. Choose one of: yes, no."),
        ("population_min=lots", "Population (people) min must be a number such as 1500 or 2.5; got 'lots'."),
        ("population_max=1e6", "Population (people) max must be a number"),
        ("population_min=1,000", "Population (people) min must be a number"),
        ("population_min=١٠٠", "Population (people) min must be a number"),
        ("population_min=nan", "Population (people) min must be a number"),
        ("population_min=9999999999999999999", "Population (people) min must be a number"),
        ("population_min=5&population_max=1", "The population range is empty: from 5 to 1."),
        ("sort=founded", "Cannot sort by 'founded'. Sortable columns: name, country, population, area_km2, capital."),
        ("order=up", "Unknown order 'up': use asc or desc."),
        ("page=0", "Page must be a whole number from 1"),
        ("page=²", "Page must be a whole number from 1"),
    ],
)
def test_bad_values_are_a_400_page(client, query, message):
    assert error(client, f"/cities?{query}", 400).startswith(message)


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("founded_min=18000", "Founded min must be a year (YYYY) or a date (YYYY-MM-DD); got '18000'."),
        ("founded_max=1999-02-30", "Founded max must be a year"),
        ("founded_min=1800-1-1", "Founded min must be a year"),
        ("founded_min=0000", "Founded min must be a year"),
        ("founded_min=٢٠٠٠", "Founded min must be a year"),
        ("founded_min=1900&founded_max=1899", "The founded range is empty: from 1900 to 1899."),
        ("elevation_m_min=-", "Elevation m (m) min must be a number"),
    ],
)
def test_bad_dates_are_a_400_page(wide, query, message):
    assert error(wide, f"/cities?{query}", 400).startswith(message)


# ---- paging -----------------------------------------------------------------------------------


def test_pages_of_100_cover_every_row_once_and_unknowns_come_last(towns):
    first = towns.get("/cities?sort=population&order=asc").text
    assert "250 cities match" in first and "Showing 1–100 of 250." in first and "Page 1 of 3" in first
    assert 'href="/cities?sort=population&amp;order=asc&amp;page=2" rel="next"' in first
    pages = [names(towns.get(f"/cities?sort=population&order=asc&page={page}").text) for page in (1, 2, 3)]
    assert [len(page) for page in pages] == [100, 100, 50]
    listed = [name for page in pages for name in page]
    assert sorted(listed) == [f"Town {i:03d}" for i in range(250)]
    assert listed[-50:] == [f"Town {i:03d}" for i in range(0, 250, 5)]  # the unknown populations, by name
    last = towns.get("/cities?sort=population&order=asc&page=3").text
    assert ">Next</a>" not in last and 'rel="prev"' in last and "Showing 201–250 of 250." in last
    assert error(towns, "/cities?page=4", 404) == "Page 4 does not exist: 250 cities match, 3 pages of 100."


# ---- entity pages -----------------------------------------------------------------------------


def test_an_entity_page_shows_every_field_with_its_unit(client, cities):
    html = client.get("/cities/Tokyo").text
    assert "<h1>Tokyo</h1>" in html and "<title>Tokyo | Cities</title>" in html and FOOTER.search(html)
    labels = re.findall(r'<th scope="row">(.*?)</th>', html)
    assert labels == [field.header for field in cities.spec.fields]
    assert [row_value(html, label) for label in labels] == [
        "Tokyo", "Japan", "13960000 people", "2194 km²", "1457-01-01", "yes", "40 m"]
    assert '<a href="/cities-by-country/Japan">Japan</a>' in html and '<a href="/cities">All cities</a>' in html


def test_a_null_reads_as_a_dash_and_what_it_means(client):
    html = client.get("/cities/Paris").text
    assert row_value(html, "Founded") == "— (no single founding date is commonly given)"
    assert row_value(html, "Capital") == "yes" and row_value(html, "Elevation m") == "35 m"


def test_every_listed_link_leads_to_its_page_and_case_does_not_matter(client):
    for href, name in re.findall(r'<th scope="row"><a href="(/cities/[^"]+)">([^<]+)</a>', client.get("/cities").text):
        assert f"<h1>{name}</h1>" in client.get(href).text
    assert "<h1>Rio de Janeiro</h1>" in client.get("/cities/" + quote("rio DE janeiro")).text


def test_an_unknown_entity_is_a_404_page_naming_the_list(client):
    assert error(client, "/cities/Atlantis", 404) == "No city has the name 'Atlantis'. Find it in the list at /cities."
    assert '<a href="/cities">Browse all cities</a>' in client.get("/cities/Atlantis").text
    assert error(client, "/cities/", 404).startswith("No city has the name ''.")
    assert error(client, "/nowhere", 404) == "There is no page at /nowhere."


def test_a_field_named_row_lists_sorts_and_filters(fruits, fruits_table):
    client = TestClient(fruits.create_app())
    assert names(client.get("/fruits").text, "/fruits") == in_site_order(fruits_table)
    for order in ("asc", "desc"):
        html = client.get(f"/fruits?sort=row&order={order}").text
        assert names(html, "/fruits") == in_site_order(fruits_table, "row", order == "desc")
    expected = fruits_table.filter(pl.col("row") >= 9)
    assert names(client.get("/fruits?row_min=9").text, "/fruits") == in_site_order(expected)
    assert row_value(client.get("/fruits/Apple").text, "Row") == "1"


def test_a_key_spelled_like_a_group_address_has_its_own_page(fruits):
    client = TestClient(fruits.create_app())
    assert "<h1>by-colour</h1>" in client.get("/fruits/by-colour").text
    assert "<h1>Fruits by colour</h1>" in client.get("/fruits-by-colour").text


# ---- group pages ------------------------------------------------------------------------------


def test_the_group_index_lists_every_value_with_its_count(client, cities_table):
    html = client.get("/cities-by-country").text
    assert "<h1>Cities by country</h1>" in html and "16 values of country." in html
    listed = re.findall(r'<tr><th scope="row"><a href="([^"]+)">([^<]+)</a></th><td>(\d+)</td></tr>', html)
    counts = cities_table.group_by("country").len().sort("country")
    assert listed == [(f"/cities-by-country/{quote(country)}", country, str(count)) for country, count in counts.iter_rows()]


def test_a_group_page_lists_its_value_only_with_sorting(client, cities_table):
    html = client.get("/cities-by-country/New%20Zealand").text
    assert "<h1>Country: New Zealand</h1>" in html and "<h2>2 cities</h2>" in html
    assert names(html) == ["Auckland", "Wellington"]
    japan = cities_table.filter(pl.col("country") == "Japan")
    html = client.get("/cities-by-country/japan?sort=population").text  # case does not matter
    assert names(html) == in_site_order(japan, "population", descending=True)
    assert 'href="/cities-by-country/Japan?sort=population&amp;order=asc"' in html
    assert "<form" not in html and '<a href="/cities-by-country">Cities by country</a>' in html
    assert names(client.get("/cities-by-country/Japan?capital=yes").text) == in_site_order(japan)  # no filters here


def test_unknown_groups_bad_values_and_pages_past_the_end_are_error_pages(client):
    assert error(client, "/cities-by-country/Atlantis", 404) == (
        "No city has the country 'Atlantis'. See every country at /cities-by-country.")
    assert error(client, "/cities-by-country/Japan?page=2", 404).startswith("Page 2 does not exist: 3 cities,")
    assert error(client, "/cities-by-country/Japan?sort=founded", 400).startswith("Cannot sort by 'founded'.")


@pytest.mark.parametrize("field", ["colour", "year", "picked", "ripe"])
def test_group_pages_serve_a_field_of_any_kind_spelled_as_entity_pages_show_it(fruits, fruits_table, field):
    client = grouped_by(fruits, field)
    index = client.get(f"/fruits-by-{field}").text
    listed = re.findall(r'<tr><th scope="row"><a href="([^"]+)">([^<]+)</a></th><td>(\d+)</td></tr>', index)
    assert f"1 fruit has no {field}." in index
    spelled = {}  # each value as its entities' pages show it
    for name, value in fruits_table.select("name", field).iter_rows():
        page = client.get(f"/fruits/{quote(name)}").text
        if value is None:
            assert f"/fruits-by-{field}/" not in page
            continue
        spelled[value] = text = row_value(page, fruits.spec.field(field).header)
        href = f"/fruits-by-{field}/{quote(text)}"
        assert f'<a href="{href}">{text}</a>' in page
        members = fruits_table.filter(pl.col(field) == value)
        assert names(client.get(href).text, "/fruits") == in_site_order(members)
    values = sorted(spelled, key=lambda value: value.lower() if isinstance(value, str) else value)
    counts = dict(fruits_table[field].value_counts().iter_rows())
    assert listed == [(f"/fruits-by-{field}/{quote(spelled[value])}", spelled[value], str(counts[value]))
                      for value in values]
    unknown = error(client, f"/fruits-by-{field}/1999", 404, FRUITS_FOOTER)
    assert unknown == f"No fruit has the {field} '1999'. See every {field} at /fruits-by-{field}."


def test_a_group_value_may_be_typed_in_another_case(fruits):
    client = grouped_by(fruits, "ripe")
    assert "<h1>Ripe: yes</h1>" in client.get("/fruits-by-ripe/YES").text
    assert error(grouped_by(fruits, "year"), "/fruits-by-year/1998.0", 404, FRUITS_FOOTER).startswith(
        "No fruit has the year '1998.0'.")


# ---- no query string makes the site fail ------------------------------------------------------


@pytest.mark.slow
def test_no_generated_query_string_or_path_makes_the_site_answer_5xx(cities, cities_table):
    """Property: 400 generated GETs of the list, the group index, group pages and entity pages,
    with real and hostile path values, parameter names and values (raw bytes too), answer below 500."""
    app = cities.create_app()
    params = ["country", "capital", "population_min", "population_max", "q", "sort", "order", "page"]
    tokens = [*cities_table["name"].to_list()[::4], *cities_table["country"].unique().to_list(), "yes", "no", "asc",
              "desc", "1", "2", "1000000", "1800", "1800-01-01", *cities.spec.site.list_fields]
    value = st.one_of(hostile_value, st.sampled_from(tokens))
    country = st.sampled_from(sorted(cities_table["country"].unique()))
    # The list four times over, as the page that reads the most parameters; group pages real and not.
    pages = [st.just("/cities")] * 4 + [country.map("/cities-by-country/{}".format)] * 2 + [
        value.map("/cities-by-country/{}".format), value.map("/cities/{}".format), value.map("/cities/{}".format),
        st.just("/cities-by-country"), st.just("/")]
    path = st.sampled_from(pages).flatmap(lambda page: page)
    name = st.one_of(st.sampled_from(params), st.text(max_size=12))
    pair = st.one_of(
        st.tuples(name, value).map(lambda p: f"{quote_plus(p[0])}={quote_plus(p[1])}".encode()),
        st.tuples(name, value).map(lambda p: f"{p[0]}={p[1]}".encode()),
        st.sampled_from(RAW_PIECES),
    )
    query = st.lists(pair, max_size=6).map(lambda pairs: on_the_wire(b"&".join(pairs)))
    loop = asyncio.new_event_loop()
    statuses: list[int] = []
    drawn = examples(400)

    @settings(FUZZ, max_examples=drawn)
    @given(st.builds(Request, path, query))
    def check(request: Request) -> None:
        status, _, trace = loop.run_until_complete(answer(app, request))
        statuses.append(status)
        assert status < 500, f"GET {request.path[:200]!r} ? {request.query[:300]!r} answered {status}\n{trace}"

    try:
        check()
    finally:
        loop.close()
    assert len(statuses) >= drawn * 3 // 4 and {200, 400, 404} <= set(statuses)


def test_the_spec_sets_the_page_size(cities):
    spec = cities.spec.model_copy(update={"site": cities.spec.site.model_copy(update={"page_size": 15})})
    client = TestClient(create_app(spec, cities.tables))
    pages = [client.get("/cities", params={"page": n}) for n in (1, 2, 3)]
    assert [page.status_code for page in pages] == [200, 200, 200]
    assert [len(names(page.text)) for page in pages] == [15, 15, 10]
    assert "Showing 31–40 of 40" in pages[2].text and client.get("/cities?page=4").status_code == 404


def test_several_groupings_and_indexes_without_counts(cities):
    spec = cities.spec
    site_spec = spec.site.model_copy(update={"group_by": ["country", "capital"], "group_counts": False})
    client = TestClient(create_app(spec.model_copy(update={"site": site_spec}), cities.tables))
    assert client.get("/cities-by-capital/yes").status_code == 200
    assert client.get("/cities-by-country/Japan").status_code == 200
    assert "<td>3</td>" not in client.get("/cities-by-country").text  # Japan's 3 cities: no count shown
    page = client.get("/cities/Tokyo").text
    assert 'Country: <a href="/cities-by-country/Japan">Japan</a>' in page
    assert 'Capital: <a href="/cities-by-capital/yes">yes</a>' in page


def test_a_field_grouped_twice_is_refused(cities):
    from pydantic import ValidationError

    from armbench.tablekit.spec import TableSpec

    raw = cities.spec.model_dump()
    raw["site"]["group_by"] = ["country", "country"]
    with pytest.raises(ValidationError, match="names a field twice"):
        TableSpec.model_validate(raw)
