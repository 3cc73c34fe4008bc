"""The FDIC replica site (pages rendered by `create_app`): the HTML its scrapers read, and its trap.

The Failed Bank List holds failures only; BankFind lists assistance transactions beside them
unless told otherwise. Expected rows are rebuilt here with polars from the parquet, never copied
from the site.
"""
from __future__ import annotations

import html
import re
from datetime import date
from urllib.parse import quote

import polars as pl
import pytest
from fastapi.testclient import TestClient

from armbench.domains.banks import TABLES
from armbench.domains.banks.site.app import create_app
from tests.support.site_pages import check_error_page, row_value

TABLE = TABLES.load("bank_failures")
FAILED = TABLE.filter(pl.col("resolution_type") == "FAILURE")
FOOTER = re.compile(r"<footer>.*BankFind Suite.*public domain.*</footer>", re.S)
ROW = re.compile(r'<tr>\s*<th scope="row"><a href="/bank/(\d+)">([^<]*)</a></th>(.*?)</tr>', re.S)
FAILED_HEADERS = ["Bank name", "City", "State", "Cert", "Acquiring institution", "Closing date", "Fund"]
BANKFIND_HEADERS = ["Bank name", "Cert", "Location", "Effective date", "Resolution", "Transaction type",
                    "Insurance fund", "Total assets ($ thousands)", "Total deposits ($ thousands)",
                    "Estimated loss ($ thousands)"]
# sort key -> (table column, kind) of each list
FAILED_SORTS = {"name": ("bank_name", "text"), "city": ("city", "text"), "state": ("state", "text"),
                "cert": ("cert", "number"), "acquirer": ("acquirer_name", "text"), "closing": ("fail_date", "date"),
                "fund": ("fin", "number")}
BANKFIND_SORTS = {"name": ("bank_name", "text"), "cert": ("cert", "number"), "location": ("city_state", "text"),
                  "effective": ("fail_date", "date"), "resolution": ("resolution_type", "text"),
                  "transaction": ("transaction_type", "text"), "insurance_fund": ("insurance_fund", "text"),
                  "assets": ("total_assets_thousands", "number"), "deposits": ("total_deposits_thousands", "number"),
                  "loss": ("estimated_loss_thousands", "number")}


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def headers(page: str) -> list[str]:
    return [html.unescape(h).strip() for h in re.findall(r'<th scope="col"[^>]*>\s*<a href="[^"]*">([^<]*)</a>', page)]


def rows(page: str) -> list[tuple[int, str, list[str]]]:
    """(fdic_id, bank name, the other cells) of each listed row."""
    return [(int(fdic_id), html.unescape(name), [html.unescape(c).strip() for c in re.findall(r"<td>(.*?)</td>", cells, re.S)])
            for fdic_id, name, cells in ROW.findall(page)]


def every_row(site: TestClient, path: str) -> list[tuple[int, str, list[str]]]:
    """The rows of every page of a list, following its Next links."""
    found, url = [], path
    while url:
        page = site.get(url).text
        found += rows(page)
        following = re.search(r'<a href="([^"]+)" rel="next">', page)
        url = html.unescape(following.group(1)) if following else None
    return found


def h1(page: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", page, re.S).group(1)


def shown(value: object) -> str:
    """A list cell as the contract says: thousands separators for amounts, ISO dates, empty for null."""
    if value is None:
        return ""
    if isinstance(value, date):
        return value.isoformat()
    return str(value)


def amount(value: int | None) -> str:
    return "" if value is None else f"{value:,}"


def failed_cells(r: dict) -> list[str]:
    return [r["city"], r["state"], shown(r["cert"]), shown(r["acquirer_name"]), shown(r["fail_date"]), shown(r["fin"])]


def bankfind_cells(r: dict) -> list[str]:
    return [shown(r["cert"]), f"{r['city']}, {r['state']}", shown(r["fail_date"]), r["resolution_type"].title(),
            r["transaction_type"], r["insurance_fund"], amount(r["total_assets_thousands"]),
            amount(r["total_deposits_thousands"]), amount(r["estimated_loss_thousands"])]


def expected_order(frame: pl.DataFrame, column: str, kind: str, order: str) -> list[int]:
    """fdic_ids in the site's order: the column (text ignoring case), unknowns last, ties by name then id."""
    key = pl.col(column).str.to_lowercase() if kind == "text" else pl.col(column)
    tie = pl.col("bank_name").str.to_lowercase()
    return frame.sort([key, tie, "fdic_id"], descending=[order == "desc", False, False],
                      nulls_last=True)["fdic_id"].to_list()


# ---- home -----------------------------------------------------------------------------------


def test_home_says_what_the_site_holds(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/bank-failures"
    page = site.get("/bank-failures").text
    assert "3,521 failures and 593 assistance transactions" in page and "from 1934 to 2026" in page
    assert 'href="/failed-bank-list"' in page and 'href="/bankfind"' in page
    assert "An assistance transaction is not a failure" in page and "thousands of dollars" in page


# ---- the Failed Bank List -------------------------------------------------------------------


def test_failed_bank_list_is_every_failure_and_no_assistance(site):
    listed = every_row(site, "/failed-bank-list")
    assert sorted(fdic_id for fdic_id, _, _ in listed) == sorted(FAILED["fdic_id"].to_list())
    assisted = set(TABLE.filter(pl.col("resolution_type") == "ASSISTANCE")["fdic_id"])
    assert not assisted & {fdic_id for fdic_id, _, _ in listed}
    first = site.get("/failed-bank-list").text
    assert h1(first) == "Failed Bank List" and "<h2>3,521 banks failed</h2>" in first
    assert "CITIBANK, NATIONAL ASSOCIATION" not in "".join(name for _, name, _ in listed)


def test_failed_bank_list_rows_hold_the_contract_newest_first(site):
    page = site.get("/failed-bank-list").text
    assert headers(page) == FAILED_HEADERS
    assert "Sorted by closing date, newest first" in page and "Showing 1–100 of 3,521." in page
    expected = [FAILED.filter(pl.col("fdic_id") == i).row(0, named=True)
                for i in expected_order(FAILED, "fail_date", "date", "desc")[:100]]
    assert rows(page) == [(r["fdic_id"], r["bank_name"], failed_cells(r)) for r in expected]
    assert rows(page)[0][1] == "METROPOLITAN CAPITAL B&T"


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", list(FAILED_SORTS))
def test_failed_bank_list_sorts_by_every_column_both_ways(site, key, order):
    column, kind = FAILED_SORTS[key]
    expected = expected_order(FAILED, column, kind, order)
    for page in (1, 36):  # the first page, and the last one, where unknowns sort
        listed = rows(site.get(f"/failed-bank-list?sort={key}&order={order}&page={page}").text)
        assert listed and [fdic_id for fdic_id, _, _ in listed] == expected[(page - 1) * 100:page * 100], (
            key, order, page)


def test_failed_bank_list_pages_and_header_links(site):
    page = site.get("/failed-bank-list?sort=state&order=asc&page=2").text
    assert "Showing 101–200 of 3,521." in page and "Page 2 of 36" in page
    assert 'href="/failed-bank-list?sort=state&amp;order=asc" rel="prev"' in page
    assert 'href="/failed-bank-list?sort=state&amp;order=asc&amp;page=3" rel="next"' in page
    assert 'href="/failed-bank-list?sort=state&amp;order=desc">State</a>' in page  # the sorted column flips
    assert 'href="/failed-bank-list?sort=cert&amp;order=desc">Cert</a>' in page
    last = site.get("/failed-bank-list?page=36").text
    assert "Showing 3,501–3,521 of 3,521." in last and 'rel="next"' not in last


@pytest.mark.parametrize(("query", "status", "message"), [
    ("sort=assets", 400, "Cannot sort by 'assets'"),
    ("sort=Name", 400, "Cannot sort by 'Name'"),
    ("order=up", 400, "Unknown order 'up'"),
    ("page=0", 400, "Page must be a whole number from 1"),
    ("page=x", 400, "Page must be a whole number"),
    ("page=²", 400, "Page must be a whole number"),
    ("page=" + "9" * 5000, 400, "Page must be a whole number"),
    ("page=37", 404, "Page 37 does not exist: 3,521 banks failed, 36 pages of 100."),
    ("page=999999999", 404, "Page 999999999 does not exist"),
])
def test_bad_failed_bank_list_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/failed-bank-list?{query}", status, message, FOOTER)


def test_empty_sort_and_unknown_parameters_mean_the_default(site):
    default = site.get("/failed-bank-list").text
    assert site.get("/failed-bank-list?sort=&order=&state=GA&year=2011&page=1").text == default


# ---- BankFind -------------------------------------------------------------------------------


def test_bankfind_lists_assistance_beside_failures_by_default(site):
    year = TABLE.filter(pl.col("fail_year") == 2008)
    page = site.get("/bankfind?year=2008&sort=assets").text
    assert h1(page) == "BankFind: Bank Failures &amp; Assistance Transactions"
    assert headers(page) == BANKFIND_HEADERS
    assert f"<h2>{year.height} transactions match</h2>" in page
    listed = rows(page)
    assert listed[0][1] == "CITIBANK, NATIONAL ASSOCIATION" and listed[0][2][3] == "Assistance"
    expected = [year.filter(pl.col("fdic_id") == i).row(0, named=True)
                for i in expected_order(year, "total_assets_thousands", "number", "desc")]
    assert listed == [(r["fdic_id"], r["bank_name"], bankfind_cells(r)) for r in expected]


def test_bankfind_resolution_filter_tells_failures_from_assistance(site):
    def ids(query: str) -> set[int]:
        return {fdic_id for fdic_id, _, _ in every_row(site, f"/bankfind?{query}")}

    year = TABLE.filter(pl.col("fail_year") == 2009)
    assert ids("year=2009") == set(year["fdic_id"]) and len(ids("year=2009")) == 148
    assert ids("year=2009&resolution=failure") == set(year.filter(pl.col("resolution_type") == "FAILURE")["fdic_id"])
    assert len(ids("year=2009&resolution=failure")) == 140
    assert ids("year=2009&resolution=assistance") == set(
        year.filter(pl.col("resolution_type") == "ASSISTANCE")["fdic_id"])
    assert len(ids("resolution=assistance")) == 593


def test_bankfind_filters_by_state_year_and_name(site):
    georgia = TABLE.filter((pl.col("state") == "GA") & (pl.col("fail_year") == 2011))
    listed = every_row(site, "/bankfind?state=GA&year=2011&resolution=failure")
    assert sorted(i for i, _, _ in listed) == sorted(georgia["fdic_id"])
    named = every_row(site, "/bankfind?name=mutual")
    assert sorted(i for i, _, _ in named) == sorted(
        TABLE.filter(pl.col("bank_name").str.to_lowercase().str.contains("mutual"))["fdic_id"])
    page = site.get("/bankfind?state=GA&year=2011").text
    assert "<option selected>GA</option>" in page and "<option selected>2011</option>" in page
    assert 'href="/bankfind?state=GA&amp;year=2011&amp;sort=assets&amp;order=desc"' in page


def test_a_year_without_transactions_matches_nothing(site):
    page = site.get("/bankfind?year=2005").text
    assert "<h2>0 transactions match</h2>" in page and "No transactions match these filters." in page


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", list(BANKFIND_SORTS))
def test_bankfind_sorts_by_every_column_both_ways(site, key, order):
    column, kind = BANKFIND_SORTS[key]
    expected = expected_order(TABLE.filter(pl.col("fail_year") == 1988), column, kind, order)  # 470 rows, 5 without a loss
    for page in (1, 5):  # the first page, and the last one, where unknowns sort
        listed = rows(site.get(f"/bankfind?year=1988&sort={key}&order={order}&page={page}").text)
        assert listed and [i for i, _, _ in listed] == expected[(page - 1) * 100:page * 100], (key, order, page)


@pytest.mark.parametrize(("query", "status", "message"), [
    ("state=ZZ", 400, "Unknown state 'ZZ'. Choose one of: AK"),
    ("state=ga", 400, "Unknown state 'ga'"),
    ("year=1933", 400, "Unknown year '1933'"),
    ("year=2027", 400, "Unknown year '2027'"),
    ("year=2o09", 400, "Unknown year '2o09'"),
    ("year=２００９", 400, "Unknown year"),
    ("year=" + "9" * 5000, 400, "Unknown year"),
    ("resolution=FAILURE", 400, "Unknown resolution 'FAILURE'. Choose one of: failure, assistance."),
    ("sort=bank_name", 400, "Cannot sort by 'bank_name'"),
    ("order=descending", 400, "Unknown order"),
    ("page=-1", 400, "Page must be a whole number"),
    ("year=2009&page=3", 404, "Page 3 does not exist: 148 transactions match, 2 pages of 100."),
    ("year=2005&page=2", 404, "Page 2 does not exist"),
])
def test_bad_bankfind_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/bankfind?{query}", status, message, FOOTER)


# ---- bank pages -----------------------------------------------------------------------------


def test_washington_mutual_page_has_every_field(site):
    wamu = TABLE.filter(pl.col("bank_name") == "WASHINGTON MUTUAL BANK").row(0, named=True)
    page = site.get(f"/bank/{wamu['fdic_id']}").text
    assert h1(page) == "WASHINGTON MUTUAL BANK"
    assert "HENDERSON, NV. Failure, 2008-09-25." in page
    expected = {"Bank name": "WASHINGTON MUTUAL BANK", "City": "HENDERSON", "State": "NV",
                "FDIC certificate number (Cert)": "32633", "Charter class": "SB", "Bank number": "Not available",
                "Resolution type": "Failure", "Effective date": "2008-09-25", "Resolution date": "2008-09-25",
                "Transaction type": "PA", "Insurance fund": "DIF", "Fund code": "5", "Fund (FIN)": "10015",
                "Acquiring institution": "JPMORGAN CHASE BANK, NA", "Acquirer location": "COLUMBUS, OH",
                "Total assets": "307,021,614", "Total deposits": "188,260,793", "Estimated loss": "0",
                "Estimated loss as of": "2025-09-30", "Uninsured deposits": "Not available",
                "Comments": "Not available", "FDIC record id": str(wamu["fdic_id"])}
    assert {label: row_value(page, label).strip() for label in expected} == expected
    assert "At failure or assistance ($ thousands)" in page
    assert 'href="/bankfind?state=NV&amp;year=2008"' in page


def test_every_bank_page_shows_its_amounts_and_resolution(site):
    for r in TABLE.sample(60, seed=11).iter_rows(named=True):
        page = site.get(f"/bank/{r['fdic_id']}").text
        assert html.unescape(h1(page)) == r["bank_name"]
        assert row_value(page, "Resolution type").strip() == r["resolution_type"].title()
        for label, column in (("Total assets", "total_assets_thousands"), ("Total deposits", "total_deposits_thousands"),
                              ("Estimated loss", "estimated_loss_thousands")):
            value = r[column]
            assert row_value(page, label).strip() == ("Not available" if value is None else f"{value:,}"), (r, label)


def test_an_assistance_page_says_assistance(site):
    citi = TABLE.filter(pl.col("bank_name") == "CITIBANK, NATIONAL ASSOCIATION").row(0, named=True)
    page = site.get(f"/bank/{citi['fdic_id']}").text
    assert row_value(page, "Resolution type").strip() == "Assistance"
    assert row_value(page, "Total assets").strip() == "1,207,007,000"
    assert row_value(page, "Estimated loss").strip() == "Not available"


@pytest.mark.parametrize("fdic_id", ["0", "4115", "03568", "3568.0", " 3568", "x", "３５６８", "9" * 5000, "-1"])
def test_unknown_bank_is_a_404_page(site, fdic_id):
    check_error_page(site, f"/bank/{quote(fdic_id)}", 404, "No bank has the address /bank/", FOOTER)


@pytest.mark.parametrize("path", ["/bank", "/bank/", "/bank/3568/x", "/failed-bank-list/2", "/bankfind/GA"])
def test_unrouted_paths_are_404_pages(site, path):
    check_error_page(site, path, 404, "There is no page at", FOOTER)
