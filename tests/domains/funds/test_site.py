"""The fund screener replica site (pages rendered by `create_app`).

Page expectations are recomputed with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains.funds import TABLES
from armbench.domains.funds.site.app import create_app
from armbench.domains.funds.site.fields import SECTIONS
from tests.support.site_pages import check_error_page, row_value

FUNDS = TABLES.load("funds")
OPEN = FUNDS.filter(pl.col("status") == "open")
FOOTER = re.compile(r"<footer>.*FinanceDatabase.*MIT.*Generated data:.*not real fund data.*</footer>", re.S)


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def first_listed(frame: pl.DataFrame) -> list[str]:
    """The symbols of page 1 in the site's default order: relevance, highest first."""
    return frame.sort(["relevance", "symbol"], descending=[True, False])["symbol"].head(100).to_list()


def symbols(html: str) -> list[str]:
    """The funds listed in a list page's table, in order."""
    return re.findall(r'<th scope="row"><a href="/funds/([^"]+)">', html)


def matches(html: str) -> int:
    return int(re.search(r"<h2>([\d,]+) funds? match", html).group(1).replace(",", ""))


def first_row_cells(html: str) -> list[str]:
    return re.findall(r"<td>(.*?)</td>", html.split("<tbody>")[1].split("</tr>")[0])


# ---- the defaults: open funds only, in a hidden order -----------------------------------------


def test_home_leads_to_the_screener(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/funds"


def test_by_default_closed_funds_are_hidden_and_the_box_is_unticked(site):
    html = site.get("/funds").text
    assert matches(html) == OPEN.height and "Page 1 of 275" in html
    assert '<input type="checkbox" name="include_closed" value="1">' in html
    assert "Include funds closed to new investors" in html
    assert "<td>Closed</td>" not in html


def test_the_default_order_is_the_hidden_relevance_and_the_page_names_no_order(site):
    html = site.get("/funds").text
    assert symbols(html) == first_listed(OPEN)
    assert "Sorted by" not in html and "aria-sort" not in html and "relevance" not in html.lower()


def test_ticking_the_box_lists_closed_funds_too(site):
    html = site.get("/funds?include_closed=1").text
    assert matches(html) == FUNDS.height
    assert symbols(html) == first_listed(FUNDS)
    assert '<input type="checkbox" name="include_closed" value="1" checked>' in html
    assert "<td>Closed</td>" in html
    # page links keep the box ticked
    assert 'href="/funds?include_closed=1&amp;page=2" rel="next"' in html


def test_paging_covers_every_listed_fund_once(site):
    query = "category=Mid Cap&include_closed=1"
    expected = FUNDS.filter(pl.col("category") == "Mid Cap")
    pages = -(-expected.height // 100)
    seen = [s for page in range(1, pages + 1) for s in symbols(site.get(f"/funds?{query}&page={page}").text)]
    assert sorted(seen) == sorted(expected["symbol"]) and len(seen) == len(set(seen))
    last = site.get(f"/funds?{query}&page={pages}").text
    assert f"of {expected.height}." in last and ">Next</a>" not in last and ">Previous</a>" in last


# ---- filters ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("params", "condition"),
    [
        ({"category": "Health Care"}, pl.col("category") == "Health Care"),
        ({"family": "vanguard"}, pl.col("family").str.to_lowercase().str.contains("vanguard")),
        ({"q": "contrafund"}, pl.col("name").str.to_lowercase().str.contains("contrafund")),
        ({"q": "vfiax"}, pl.col("symbol") == "VFIAX"),
        ({"expense_min": "0.5", "expense_max": "0.75"}, pl.col("expense_ratio_pct").is_between(0.5, 0.75)),
        ({"min_rating": "4"}, pl.col("rating") >= 4),
        ({"max_minimum": "1000"}, pl.col("min_investment_usd") <= 1000),
        ({"load": "deferred"}, pl.col("load_type") == "deferred"),
        ({"load": "none", "category": "Value", "min_rating": "5"},
         (pl.col("load_type") == "none") & (pl.col("category") == "Value") & (pl.col("rating") == 5)),
        ({"category": "", "family": " ", "include_closed": ""}, pl.lit(True)),
    ],
)
@pytest.mark.parametrize("closed", [False, True], ids=["open", "with-closed"])
def test_each_filter_matches_the_table(site, params, condition, closed):
    expected = (FUNDS if closed else OPEN).filter(condition)
    html = site.get("/funds", params={**params, **({"include_closed": "1"} if closed else {})}).text
    assert matches(html) == expected.height
    assert symbols(html) == first_listed(expected)


def test_the_form_keeps_the_choices_and_stays_light(site):
    html = site.get("/funds?category=Value&family=Fidelity&min_rating=4&load=none&max_minimum=2500").text
    assert "<option selected>Value</option>" in html and '<option value="4" selected>' in html
    assert '<input type="text" name="family" value="Fidelity">' in html
    assert '<option value="none" selected>' in html and 'name="max_minimum" min="0" step="1" value="2500"' in html
    # the fund family is a text box: the whole form holds fewer than 100 options
    assert html.count("<option") < 100


# ---- sorting ----------------------------------------------------------------------------------


def test_sorting_by_a_column_header(site):
    html = site.get("/funds?sort=expense&order=asc&category=Bonds").text
    assert "Sorted by net expense ratio, lowest first" in html and 'aria-sort="ascending"' in html
    expected = OPEN.filter(pl.col("category") == "Bonds").sort(["expense_ratio_pct", "symbol"])
    assert symbols(html) == expected["symbol"].head(100).to_list()
    # the header link of the current sort column flips the order and keeps the filters
    assert 'href="/funds?category=Bonds&amp;sort=expense&amp;order=desc"' in html
    # a sorted form carries the sort along with the filters
    assert '<input type="hidden" name="sort" value="expense">' in html


def test_unknown_values_sort_last(site):
    young = OPEN.filter(pl.col("return_5y_pct").is_null() & (pl.col("category") == "Technology")).height
    assert young > 0
    html = site.get("/funds?category=Technology&sort=return_5y&order=desc&page=4").text
    assert re.search(r"<td>n/a</td>\s*<td>Not rated</td>", html)
    top = site.get("/funds?category=Technology&sort=return_5y").text
    assert "Sorted by 5-year return, highest first" in top
    best = OPEN.filter(pl.col("category") == "Technology").sort("return_5y_pct", descending=True, nulls_last=True)
    assert symbols(top)[0] == best["symbol"][0]


def test_rows_show_the_fund_columns(site):
    html = site.get("/funds?q=VFIAX").text
    fund = FUNDS.filter(pl.col("symbol") == "VFIAX").row(0, named=True)
    assert symbols(html) == ["VFIAX"]
    assert first_row_cells(html) == [
        fund["name"], fund["category"], fund["family"], f"{fund['expense_ratio_pct']:.2f}%",
        f"{fund['return_1y_pct']:.2f}%", f"{fund['return_3y_pct']:.2f}%", f"{fund['return_5y_pct']:.2f}%",
        f"{fund['rating']} stars", f"${fund['total_assets_musd']:,.1f} M", f"${fund['min_investment_usd']:,}",
        "None", "Open",
    ]


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("page=abc", 400, "Page must be a whole number"),
        ("page=0", 400, "Page must be a whole number"),
        ("page=276", 404, "Page 276 does not exist: 27,470 funds match, 275 pages"),
        ("category=Nope", 400, "Unknown category 'Nope'. Choose one of: Allocation, Alternative"),
        ("min_rating=6", 400, "Unknown rating '6'. Choose one of: 1, 2, 3, 4, 5"),
        ("load=some", 400, "Choose one of: none, front, deferred"),
        ("expense_min=cheap", 400, "must be a number from 0"),
        ("expense_max=-1", 400, "must be a number from 0"),
        ("expense_min=nan", 400, "must be a number from 0"),
        ("expense_min=2&expense_max=1", 400, "The expense ratio range is empty"),
        ("max_minimum=lots", 400, "The largest minimum investment ($) must be a number"),
        ("max_minimum=1e300", 400, "The largest minimum investment ($) must be a number"),
        ("include_closed=maybe", 400, "include_closed is a checkbox"),
        ("sort=relevance_score", 400, "Cannot sort by 'relevance_score'. Sortable columns: symbol, name"),
        ("order=up", 400, "use asc or desc"),
    ],
)
def test_bad_query_parameters_get_an_error_page(site, query, status, message):
    check_error_page(site, f"/funds?{query}", status, message, FOOTER)


def test_a_filter_set_to_0_stays_in_the_paging_links():
    from armbench.domains.funds.site.listing import FundQuery

    query = FundQuery(max_minimum=0, expense_min=0.0)
    assert query.url(page=2) == "/funds?expense_min=0.0&max_minimum=0&page=2"


# ---- fund pages -------------------------------------------------------------------------------


def test_fund_page_shows_every_field_and_says_what_is_generated(site):
    fund = FUNDS.filter(pl.col("symbol") == "VFIAX").row(0, named=True)
    html = site.get("/funds/VFIAX").text
    assert f"<h1>{fund['name']}</h1>" in html and FOOTER.search(html)
    assert row_value(html, "Inception date") == fund["inception_date"].isoformat()
    assert row_value(html, "Net expense ratio") == f"{fund['expense_ratio_pct']:.2f}%"
    assert row_value(html, "Minimum initial investment") == f"${fund['min_investment_usd']:,}"
    assert row_value(html, "Status") == "Open"
    for heading in ("Status and costs (generated)", "Performance as of 2022-07-31 (generated)",
                    "Size and history (generated)"):
        assert heading in html


def test_fund_page_covers_every_shown_column():
    shown = {column for _, specs in SECTIONS for spec in specs for column in spec.columns}
    assert shown == set(FUNDS.columns) - {"relevance", "source_url"}


def test_a_closed_fund_has_its_page_and_says_so(site):
    closed = FUNDS.filter(pl.col("status") == "closed").row(0, named=True)
    html = site.get(f"/funds/{closed['symbol'].lower()}").text
    assert row_value(html, "Status") == "Closed to new investors"
    assert f"{closed['symbol']}: " in html and "Closed to new investors." in html


def test_a_young_fund_reads_n_a_and_not_rated(site):
    young = FUNDS.filter(pl.col("return_3y_pct").is_null()).row(0, named=True)
    html = site.get(f"/funds/{young['symbol']}").text
    assert row_value(html, "3-year return (annualized)") == "n/a" and row_value(html, "Star rating") == "Not rated"


def test_unknown_symbol_is_a_404_page(site):
    response = site.get("/funds/NOSUCHX")
    assert response.status_code == 404 and "No fund has the symbol 'NOSUCHX'" in response.text.replace("&#39;", "'")
    assert FOOTER.search(response.text) and '<a href="/funds">Screen all funds</a>' in response.text
    assert site.get("/nowhere").status_code == 404
