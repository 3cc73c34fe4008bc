"""The mortality replica site (pages rendered by `create_app`): the HTML contract its scrapers read.

Expected rows are rebuilt here with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re
from urllib.parse import quote

import polars as pl
import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from armbench.domains.mortality import TABLES
from armbench.domains.mortality.site.app import create_app
from tests.support.site_pages import check_error_page

TABLE = TABLES.load("mortality")
STATES = TABLE.filter(~pl.col("is_national_total"))
NATIONAL = TABLE.filter(pl.col("is_national_total"))
YEARS = list(range(1999, 2018))
FOOTER = re.compile(r"<footer>.*National Center for Health Statistics.*public domain.*</footer>", re.S)
CAUSE_ROW = re.compile(r'<tr><th scope="row"><a href="/states/([a-z-]+)/(\d{4})">([^<]+)</a></th>'
                       r"<td>(\d+\.\d)</td><td>(\d{1,3}(?:,\d{3})*)</td></tr>")
SORT_COLUMN = {"state": "state", "rate": "age_adjusted_rate_per_100k", "deaths": "deaths"}
CAUSE_SLUGS = {"All causes": "all-causes", "Heart disease": "heart-disease", "Cancer": "cancer",
               "Unintentional injuries": "unintentional-injuries", "CLRD": "clrd", "Stroke": "stroke",
               "Alzheimer's disease": "alzheimers-disease", "Diabetes": "diabetes",
               "Influenza and pneumonia": "influenza-and-pneumonia", "Kidney disease": "kidney-disease",
               "Suicide": "suicide"}


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def state_slug(state: str) -> str:
    return state.lower().replace(" ", "-")


def h1(html: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)


def body_rows(html: str) -> list[str]:
    return re.findall(r"<tr>.*?</tr>", html.split("<tbody>")[1].split("</tbody>")[0])


def expected_cause_row(r: dict) -> str:
    return (f'<tr><th scope="row"><a href="/states/{state_slug(r["state"])}/{r["year"]}">{r["state"]}</a></th>'
            f"<td>{r['age_adjusted_rate_per_100k']:.1f}</td><td>{r['deaths']:,}</td></tr>")


def of(frame: pl.DataFrame, **where: object) -> pl.DataFrame:
    return frame.filter(*(pl.col(name) == value for name, value in where.items()))


# ---- home, index, about ---------------------------------------------------------------------


def test_home_leads_to_the_index(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/sosmap/"


def test_index_links_every_cause_both_ways_and_every_state(site):
    html = site.get("/sosmap/").text
    assert h1(html) == "Stats of the States: leading causes of death"
    causes = re.findall(r'<tr><th scope="row"><a href="/causes/([a-z-]+)">([^<]+)</a></th>', html)
    latest = of(NATIONAL, year=2017).sort("deaths", descending=True)["cause"].to_list()
    assert causes == [(CAUSE_SLUGS[c], str(escape(c))) for c in latest]
    assert causes[0] == ("all-causes", "All causes") and causes[1] == ("heart-disease", "Heart disease")
    assert set(re.findall(r'<a href="/national/([a-z-]+)">', html)) == set(CAUSE_SLUGS.values())
    states = re.findall(r'<li><a href="/states/([a-z-]+)/2017">([^<]+)</a></li>', html)
    assert [name for _, name in states] == sorted(STATES["state"].unique().to_list())
    assert len(states) == 51 and ("district-of-columbia", "District of Columbia") in states
    assert "United States" not in [name for _, name in states]


def test_about_page_names_the_source_coverage_and_gaps(site):
    html = site.get("/about").text
    assert h1(html) == "About these data"
    for words in ("bi63-dtpu", "public domain", "1999 to 2017", "No year after 2017", "sex, race or age",
                  "national totals"):
        assert words in html, words


# ---- cause pages ----------------------------------------------------------------------------


def test_cause_page_defaults_to_the_latest_year_states_a_to_z_exactly_as_the_contract_says(site):
    html = site.get("/causes/cancer").text
    assert h1(html) == "Cancer: deaths by state, 2017"
    assert html.count("<table") == 1 and "Malignant neoplasms (C00-C97)" in html
    rows = body_rows(html)
    expected = of(STATES, cause="Cancer", year=2017).sort("state")
    assert len(rows) == expected.height == 51
    assert all(CAUSE_ROW.fullmatch(row) for row in rows)
    assert rows == [expected_cause_row(r) for r in expected.iter_rows(named=True)]
    assert "Sorted by state, A to Z" in html
    assert site.get("/causes/cancer?year=2017&sort=state&order=asc").text == html


def test_cause_page_shows_the_national_figures_above_the_table_not_in_it(site):
    html = site.get("/causes/cancer?year=2009").text
    us = of(NATIONAL, cause="Cancer", year=2009).row(0, named=True)
    assert us["age_adjusted_rate_per_100k"] == 173.5
    assert (f"United States, 2009: age-adjusted death rate 173.5, {us['deaths']:,} deaths" in html)
    assert '<a href="/national/cancer">' in html
    assert not any("United States" in row for row in body_rows(html))


def test_year_selector_links_every_other_year_and_keeps_the_sort(site):
    html = site.get("/causes/stroke?year=2003&sort=rate&order=desc").text
    selector = re.search(r'<nav aria-label="Year">(.*?)</nav>', html, re.S).group(1)
    links = re.findall(r'<a href="\?year=(\d{4})&sort=rate&order=desc">(\d{4})</a>', selector)
    assert [int(year) for year, _ in links] == [year for year in YEARS if year != 2003]
    assert all(year == shown for year, shown in links)
    assert "<strong>2003</strong>" in selector


@pytest.mark.parametrize("year", [1999, 2008, 2017])
@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", ["state", "rate", "deaths"])
def test_every_column_sorts_both_ways_for_every_cause_and_the_chosen_year(site, key, order, year):
    for cause, cause_slug in CAUSE_SLUGS.items():
        rows = body_rows(site.get(f"/causes/{cause_slug}?year={year}&sort={key}&order={order}").text)
        expected = of(STATES, cause=cause, year=year).sort(
            [SORT_COLUMN[key], "state"], descending=[order == "desc", False])
        assert rows == [expected_cause_row(r) for r in expected.iter_rows(named=True)], (cause, key, order)


def test_header_links_sort_each_column_and_flip_the_current_one(site):
    html = site.get("/causes/suicide?year=2010&sort=rate&order=desc").text
    headers = re.findall(r'<th scope="col"><a href="\?year=2010&sort=(\w+)&order=(asc|desc)">([^<]+)</a></th>', html)
    assert headers == [("state", "asc", "State"), ("rate", "asc", "Age-adjusted death rate"),
                       ("deaths", "desc", "Deaths")]
    assert "Sorted by age-adjusted death rate, highest first" in html
    default = site.get("/causes/suicide?year=2010").text
    assert 'href="?year=2010&sort=state&order=desc">State</a>' in default


def test_a_rate_ties_go_by_state_name(site):
    tied = (of(STATES, cause="Cancer", year=2009).group_by("age_adjusted_rate_per_100k").len()
            .filter(pl.col("len") > 1)["age_adjusted_rate_per_100k"].sort())
    assert len(tied) > 0
    rows = body_rows(site.get("/causes/cancer?year=2009&sort=rate&order=desc").text)
    shown = [(float(m.group(4)), m.group(3)) for m in map(CAUSE_ROW.fullmatch, rows)]
    assert shown == sorted(shown, key=lambda pair: (-pair[0], pair[1]))


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ("year=2018", "Unknown year '2018': this site holds the years 1999 to 2017"),
        ("year=1998", "Unknown year '1998'"),
        ("year=x", "Unknown year 'x'"),
        ("year=2017.0", "Unknown year"),
        ("year=-2017", "Unknown year"),
        ("year=02017", "Unknown year"),
        ("year=%D9%A2%D9%A0%D9%A1%D9%A7", "Unknown year"),  # Arabic-Indic digits
        ("year=" + "9" * 5000, "Unknown year"),
        ("sort=population", "Cannot sort by 'population'. Sortable columns: state, rate, deaths"),
        ("sort=Rate", "Cannot sort by 'Rate'"),
        ("sort=rate&order=up", "Unknown order 'up'"),
        ("page=x", "Page must be a whole number"),
        ("page=0", "Page must be a whole number"),
    ],
)
def test_bad_cause_query_is_a_400_page(site, query, message):
    check_error_page(site, f"/causes/cancer?{query}", 400, message, FOOTER)


def test_empty_values_and_unknown_parameters_mean_the_default(site):
    default = site.get("/causes/diabetes").text
    assert site.get("/causes/diabetes?year=&sort=&order=&state=Ohio&page=1").text == default


def test_a_second_page_does_not_exist(site):
    check_error_page(site, "/causes/cancer?page=2", 404, "a cause's table is one page", FOOTER)


@pytest.mark.parametrize("cause", ["Cancer", "cancer-mortality", "alzheimer's-disease", "heart disease", "x" * 5000,
                                   "chronic-lower-respiratory-diseases", "liver-disease"])
def test_unknown_cause_is_a_404_page(site, cause):
    check_error_page(site, f"/causes/{quote(cause)}", 404, "No cause of death has the address", FOOTER)
    check_error_page(site, f"/national/{quote(cause)}", 404, "No cause of death has the address", FOOTER)


# ---- state pages ----------------------------------------------------------------------------


def state_rows(html: str) -> list[tuple[str, str, str, str, str]]:
    return re.findall(r'<tr><th scope="row">(\d*)</th><td><a href="/causes/([a-z-]+)\?year=\d{4}">[^<]+</a></td>'
                      r"<td>([\d,]+)</td><td>(\d+\.\d)</td></tr>", html)


def test_state_page_ranks_the_ten_causes_by_deaths_and_ends_with_all_causes(site):
    html = site.get("/states/west-virginia/2017").text
    assert h1(html) == "West Virginia, 2017: leading causes of death"
    causes = of(STATES, state="West Virginia", year=2017).filter(pl.col("cause") != "All causes").sort(
        "deaths", descending=True)
    body = state_rows(html.split("<tbody>")[1].split("</tbody>")[0])
    assert body == [(str(rank), CAUSE_SLUGS[r["cause"]], f"{r['deaths']:,}", f"{r['age_adjusted_rate_per_100k']:.1f}")
                    for rank, r in enumerate(causes.iter_rows(named=True), start=1)]
    assert ("3", "unintentional-injuries", "1,892", "100.3") in body
    whole = of(STATES, state="West Virginia", year=2017, cause="All causes").row(0, named=True)
    foot = state_rows(html.split("<tfoot>")[1].split("</tfoot>")[0])
    assert foot == [("", "all-causes", f"{whole['deaths']:,}", f"{whole['age_adjusted_rate_per_100k']:.1f}")]


def test_equal_death_counts_share_a_rank_and_go_by_cause_name(site):
    body = state_rows(site.get("/states/california/2015").text.split("<tbody>")[1].split("</tbody>")[0])
    tied = of(STATES, state="California", year=2015).filter(pl.col("deaths") == 15065)["cause"].sort().to_list()
    assert tied == ["Alzheimer's disease", "Stroke"]
    assert [(rank, slug) for rank, slug, _, _ in body[:5]] == [
        ("1", "heart-disease"), ("2", "cancer"), ("3", "alzheimers-disease"), ("3", "stroke"), ("5", "clrd")]
    assert [rank for rank, *_ in body[5:]] == ["6", "7", "8", "9", "10"]


def test_state_page_links_its_other_years(site):
    html = site.get("/states/district-of-columbia/2008").text
    assert h1(html) == "District of Columbia, 2008: leading causes of death"
    selector = re.search(r'<nav aria-label="Year">(.*?)</nav>', html, re.S).group(1)
    assert re.findall(r'<a href="/states/district-of-columbia/(\d{4})">', selector) == [
        str(year) for year in YEARS if year != 2008]


@pytest.mark.parametrize("path", [
    "/states/alabama/1998", "/states/alabama/2018", "/states/alabama/02017", "/states/alabama/2017.0",
    "/states/alabama/x", "/states/Alabama/2017", "/states/united-states/2017", "/states/new_york/2017",
    "/states/georgia-usa/2017", f"/states/alabama/{'9' * 5000}", "/states/alabama/２０１７",
])
def test_unknown_state_or_year_is_a_404_page(site, path):
    check_error_page(site, quote(path), 404, "No page at /states/", FOOTER)


def test_unrouted_paths_are_404_pages(site):
    for path in ("/states/alabama", "/states/", "/causes/", "/national/", "/causes/cancer/2017", "/sosmap/cancer"):
        check_error_page(site, path, 404, f"There is no page at {path}", FOOTER)


# ---- national pages -------------------------------------------------------------------------


def test_national_page_has_one_row_per_year_oldest_first(site):
    html = site.get("/national/heart-disease").text
    assert h1(html) == "Heart disease: United States, 1999 to 2017"
    rows = re.findall(r'<tr><th scope="row"><a href="/causes/heart-disease\?year=(\d{4})">(\d{4})</a></th>'
                      r"<td>([\d,]+)</td><td>(\d+\.\d)</td></tr>", html)
    expected = of(NATIONAL, cause="Heart disease").sort("year")
    assert rows == [(str(r["year"]), str(r["year"]), f"{r['deaths']:,}", f"{r['age_adjusted_rate_per_100k']:.1f}")
                    for r in expected.iter_rows(named=True)]
    assert len(rows) == 19


def test_national_all_causes_2017_matches_the_nchs_figures(site):
    html = site.get("/national/all-causes").text
    assert '<a href="/causes/all-causes?year=2017">2017</a></th><td>2,813,503</td><td>731.9</td>' in html
    assert '<a href="/causes/all-causes?year=1999">1999</a></th><td>2,391,399</td><td>875.6</td>' in html
