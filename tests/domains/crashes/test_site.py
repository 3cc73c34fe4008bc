"""The crashes replica site (pages rendered by `create_app`): the HTML contract its scrapers read.

Expected rows are rebuilt here with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains.crashes import TABLES
from armbench.domains.crashes.site.app import create_app
from tests.support.site_pages import check_error_page, row_value

CRASHES = TABLES.load("crashes")
NATIONAL = TABLES.load("crashes_national")
PROFILES = TABLES.load("crashes_driver_profiles")
FOOTER = re.compile(r"<footer>.*NHTSA Fatality Analysis Reporting System.*FiveThirtyEight.*CC BY 4\.0.*</footer>",
                    re.S)
# (sort key, column), in table order after the state; counts have thousands separators, rates two decimals.
FIGURES = [("fatalities", "fatalities"), ("population", "population_thousands"),
           ("rate_population", "fatality_rate_per_100k_pop"), ("drivers", "licensed_drivers_thousands"),
           ("rate_drivers", "fatality_rate_per_100k_drivers"), ("vehicles", "registered_vehicles_thousands"),
           ("rate_vehicles", "fatality_rate_per_100k_vehicles"), ("vmt", "vmt_billions"),
           ("rate_vmt", "fatality_rate_per_100m_vmt")]
SORT_KEYS = ["state", *(key for key, _ in FIGURES)]
HEADERS = ["Fatalities", "Population (thousands)", "Fatalities per 100,000 population", "Licensed drivers (thousands)",
           "Fatalities per 100,000 licensed drivers", "Registered vehicles (thousands)",
           "Fatalities per 100,000 registered vehicles", "Vehicle miles traveled (billions)",
           "Fatalities per 100 million VMT"]


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def shown(value: int | float) -> str:
    return f"{value:.2f}" if isinstance(value, float) else f"{value:,}"


def slug(state: str) -> str:
    return state.lower().replace(" ", "-")


def expected_row(header: str, r: dict) -> str:
    return f'<tr><th scope="row">{header}</th>' + "".join(f"<td>{shown(r[c])}</td>" for _, c in FIGURES) + "</tr>"


def state_row(r: dict) -> str:
    return expected_row(f'<a href="/states/{slug(r["state"])}">{r["state"]}</a>', r)


def body_rows(html: str) -> list[str]:
    """The rows of the page's first table body."""
    return re.findall(r'<tr><th scope="row">.*?</tr>', html.split("<tbody>")[1].split("</tbody>")[0])


def cells(row: str) -> list[str]:
    header = re.sub(r"<[^>]+>", "", re.match(r'<tr><th scope="row">(.*?)</th>', row).group(1))
    return [header, *re.findall(r"<td>([^<]*)</td>", row)]


def h1(html: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)


def main(html: str) -> str:
    return html.split("<main>")[1].split("</main>")[0]


# ---- home, index, about ---------------------------------------------------------------------


def test_home_leads_to_the_index(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/fatality-facts/"


def test_index_links_every_year_and_every_state_but_south_carolina(site):
    html = site.get("/fatality-facts/").text
    assert h1(html) == "Fatality Facts: state by state, 1994–2013"
    years = re.findall(r'<a href="/years/(\d{4})">(\d{4})</a>', html)
    assert [int(year) for year, _ in years] == list(range(2013, 1993, -1)) and all(a == b for a, b in years)
    states = re.findall(r'<a href="/states/([a-z-]+)">([^<]+)</a>', html)
    assert [name for _, name in states] == sorted(CRASHES["state"].unique())
    assert all(href == slug(name) for href, name in states)
    assert "<li>South Carolina (not available; see" in html and "/states/south-carolina" not in html
    assert '<a href="/national">' in main(html) and '<a href="/about">' in main(html)


def test_about_page_gives_source_coverage_and_why_south_carolina_is_missing(site):
    text = " ".join(main(site.get("/about").text).split())
    assert h1(site.get("/about").text) == "About the data"
    for part in ("Fatality Analysis Reporting System", "public domain", "danielcolinjames/CarCrashData",
                 "bad-drivers", "CC BY 4.0", "1994 to 2013", "50 jurisdictions",
                 "South Carolina is missing", "duplicate of Rhode Island",
                 "rounded to whole billions"):
        assert part in text, part


# ---- year pages -----------------------------------------------------------------------------


def test_year_page_has_every_state_exactly_and_the_us_total_in_its_footer(site):
    html = site.get("/years/2013").text
    assert h1(html) == "Fatalities and fatality rates by state, 2013"
    rows = body_rows(html)
    expected = CRASHES.filter(pl.col("year") == 2013)
    assert len(rows) == expected.height == 50
    assert sorted(rows) == sorted(state_row(r) for r in expected.iter_rows(named=True))
    assert ('<tr><th scope="row"><a href="/states/california">California</a></th><td>3,000</td><td>38,333</td>'
            "<td>7.83</td>") in html
    total = html.split("<tfoot>")[1].split("</tfoot>")[0].strip()
    assert total == expected_row("United States", NATIONAL.filter(pl.col("year") == 2013).row(0, named=True))
    assert cells(total)[1] == "32,719" and cells(total)[-1] == "1.09"
    assert re.findall(r'<th scope="col"[^>]*><a [^>]*>([^<]+)</a></th>', html) == ["State", *HEADERS]


def test_year_page_footnote_says_south_carolina_is_not_included(site):
    text = " ".join(main(site.get("/years/2001").text).split())
    assert "South Carolina is not included" in text and "duplicate of Rhode Island's" in text
    assert "/states/south-carolina" not in text


def test_default_order_is_fatalities_highest_first_and_headers_link_the_sorts(site):
    html = site.get("/years/2013").text
    fatalities = [int(cells(row)[1].replace(",", "")) for row in body_rows(html)]
    assert fatalities == sorted(fatalities, reverse=True)
    assert "Sorted by fatalities, highest first" in html
    links = re.findall(r'<a href="/years/2013(?:\?sort=(\w+)&amp;order=(asc|desc))?">', html)
    header_links = links[:len(SORT_KEYS)]
    assert [key for key, _ in header_links] == SORT_KEYS
    orders = dict(header_links)
    assert orders["fatalities"] == "asc" and orders["state"] == "asc" and orders["rate_vmt"] == "desc"
    assert 'aria-sort="descending"><a href="/years/2013?sort=fatalities&amp;order=asc">' in html
    # From another order, the fatalities header leads back to the page's default address.
    other = site.get("/years/2013?sort=vmt&order=asc").text
    assert '<a href="/years/2013">Fatalities</a>' in other and "Sorted by vehicle miles traveled, lowest first" in other


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", SORT_KEYS)
def test_every_column_sorts_both_ways_ties_by_state(site, key, order):
    for year in (1994, 2010):
        rows = body_rows(site.get(f"/years/{year}?sort={key}&order={order}").text)
        frame = CRASHES.filter(pl.col("year") == year)
        column = dict(FIGURES).get(key, "state")
        expected = frame.sort([pl.col(column), pl.col("state")], descending=[order == "desc", False])
        assert [cells(row)[0] for row in rows] == expected["state"].to_list(), (year, key, order)


def test_empty_sort_and_unknown_parameters_mean_the_default(site):
    default = site.get("/years/2013").text
    assert site.get("/years/2013?sort=&order=&x=1&page=1").text == default


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("sort=deaths", 400, "Cannot sort by 'deaths'"),
        ("sort=Fatalities", 400, "Cannot sort by 'Fatalities'"),
        ("sort=rate_vmt&order=up", 400, "Unknown order 'up'"),
        ("order=descending", 400, "Unknown order"),
        ("page=x", 400, "Page must be a whole number"),
        ("page=²", 400, "Page must be a whole number"),
        (f"page={'9' * 5000}", 400, "Page must be a whole number"),
        ("page=0", 400, "Page must be a whole number"),
        ("page=2", 404, "a year's table is one page"),
    ],
)
def test_bad_year_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/years/2013?{query}", status, message, FOOTER)


@pytest.mark.parametrize("year", ["1993", "2014", "0", "02013", "２０１３", "x", "-2013", "2013.0", "9" * 5000])
def test_unknown_year_is_a_404_page(site, year):
    check_error_page(site, f"/years/{quote(year)}", 404, "it holds the years 1994 to 2013", FOOTER)


# ---- state pages ----------------------------------------------------------------------------


def test_state_page_has_its_twenty_years_oldest_first(site):
    html = site.get("/states/texas").text
    assert h1(html) == "Texas"
    rows = body_rows(html)
    expected = CRASHES.filter(pl.col("state") == "Texas").sort("year")
    assert rows == [expected_row(str(r["year"]), r) for r in expected.iter_rows(named=True)]
    assert re.findall(r'<th scope="col">([^<]+)</th>', html) == ["Year", *HEADERS]
    assert "Texas (TX)" in html


@pytest.mark.parametrize("state", ["District of Columbia", "New Hampshire", "Vermont", "Wyoming"])
def test_every_state_address_is_its_slugged_name(site, state):
    rows = body_rows(site.get(f"/states/{slug(state)}").text)
    assert [cells(row)[1] for row in rows] == [shown(v) for v in CRASHES.filter(pl.col("state") == state)
                                               .sort("year")["fatalities"]]


def test_state_page_shows_the_driver_profile_with_its_years_and_source(site):
    html = site.get("/states/alabama").text
    profile = PROFILES.filter(pl.col("state") == "Alabama").row(0, named=True)
    assert "Driver profile (FiveThirtyEight" in html
    assert row_value(html, "Drivers involved in fatal collisions per billion miles (NHTSA, 2012)").strip() == "18.8"
    assert row_value(html, "Drivers in fatal collisions who were speeding (NHTSA, 2009)").strip() == "39%"
    assert row_value(html, "Drivers in fatal collisions who were alcohol-impaired (NHTSA, 2012)").strip() == (
        f"{profile['pct_drivers_alcohol_impaired_2012']}%")
    assert row_value(html, "Drivers in fatal collisions who were not distracted (NHTSA, 2012)").strip() == "96%"
    assert row_value(html, "Drivers in fatal collisions with no previous accidents (NHTSA, 2012)").strip() == "80%"
    assert row_value(html, "Car insurance premium (NAIC, 2011)").strip() == "$784.55"
    assert row_value(html, "Collision losses of insurers per insured driver (NAIC, 2010)").strip() == "$145.08"
    text = " ".join(re.sub(r"<[^>]+>", "", main(html)).split())
    assert "FiveThirtyEight's bad-drivers data" in text and "CC BY 4.0" in text


def test_south_carolina_is_a_404_page_that_says_why(site):
    response = site.get("/states/south-carolina")
    text = " ".join(response.text.replace("&#39;", "'").split())
    assert response.status_code == 404 and FOOTER.search(response.text)
    assert "South Carolina's figures are not on this site" in text
    assert "South Carolina's file is a duplicate of Rhode Island's" in text


@pytest.mark.parametrize("state", ["Texas", "TEXAS", "tx", "new_mexico", "new%20mexico", "texas.html", "x" * 5000,
                                   "südtirol", "%00"])
def test_unknown_state_is_a_404_page(site, state):
    check_error_page(site, f"/states/{quote(state, safe='%')}", 404, "No state page at /states/", FOOTER)


# ---- national page --------------------------------------------------------------------------


def test_national_page_has_the_twenty_us_years(site):
    html = site.get("/national").text
    assert h1(html) == "United States: fatalities and fatality rates, 1994–2013"
    rows = body_rows(html)
    assert rows == [expected_row(str(r["year"]), r) for r in NATIONAL.sort("year").iter_rows(named=True)]
    assert cells(rows[0])[:2] == ["1994", "40,716"] and cells(rows[0])[-1] == "1.73"


@pytest.mark.parametrize("path", ["/years/", "/states/", "/years", "/national/1994", "/about/x", "/fatality-facts/x"])
def test_unknown_paths_are_404_pages(site, path):
    check_error_page(site, path, 404, "There is no page at", FOOTER)
