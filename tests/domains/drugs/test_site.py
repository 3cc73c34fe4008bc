"""The Drugs@FDA replica site (pages rendered by `create_app`): the HTML contract its scrapers read.

Expected rows are rebuilt here with polars from the parquet, never copied from the site.
"""
from __future__ import annotations

import re
from datetime import date
from urllib.parse import quote, urlencode

import polars as pl
import pytest
from fastapi.testclient import TestClient
from markupsafe import escape

from armbench.domains.drugs import TABLES
from armbench.domains.drugs.site.app import create_app
from tests.support.site_pages import check_error_page, row_value

APPLICATIONS = TABLES.load("drug_applications")
PRODUCTS = TABLES.load("drug_products")
SUBMISSIONS = TABLES.load("drug_submissions")
APPROVALS = TABLES.load("drug_approvals")
FOOTER = re.compile(r"<footer>.*Drugs@FDA data files.*public domain.*</footer>", re.S)
REPORT_ROW = re.compile(r'<tr><th scope="row">(\d{4}-\d\d-\d\d)</th>((?:<td>.*?</td>){7})</tr>')
SORT_KEYS = ["drug", "ingredient", "application", "company"]


@pytest.fixture(scope="module")
def site() -> TestClient:
    return TestClient(create_app())


def text(value: object) -> str:
    if value is None:
        return ""
    return value.isoformat() if isinstance(value, date) else str(escape(value))


def h1(html: str) -> str:
    return re.search(r"<h1>(.*?)</h1>", html, re.S).group(1)


def body_rows(html: str, after: str = "") -> list[str]:
    """The <tbody> rows of the first table after `after`."""
    tail = html.split(after, 1)[1] if after else html
    return re.findall(r"<tr>.*?</tr>", tail.split("<tbody>")[1].split("</tbody>")[0], re.S)


def cells(row: str) -> list[str]:
    return re.findall(r"<td>(.*?)</td>", row, re.S)


# ---- home ------------------------------------------------------------------------------------


def test_home_is_the_about_page_with_the_search_form(site):
    assert site.get("/", follow_redirects=False).headers["location"] == "/daf/"
    html = site.get("/daf/").text
    assert h1(html) == "Drugs@FDA: FDA-Approved Drugs"
    assert '<form method="get" action="/daf/search"' in html and 'name="q"' in html
    assert "the latest action\nthey record is dated 2018-06-25" in html
    assert "Accelerated approval: the data files do not flag it." in html
    assert "1900-01-01" in html and "1,753 applications" in html and "23,200 applications" in html
    assert FOOTER.search(html)


# ---- search ----------------------------------------------------------------------------------


def search_rows(html: str) -> list[tuple[str, str, str, str, str]]:
    """(href, drug, ingredient, application, company) per result row."""
    if "<caption>" not in html:
        return []
    return [(href, drug, *cells(row)) for row in body_rows(html, "<caption>")
            for href, drug in [re.search(r'<th scope="row"><a href="([^"]+)">(.*?)</a></th>', row).groups()]]


def expected_results(q: str, appl_type: str = "") -> list[tuple[str, str, str, str, str]]:
    found = (PRODUCTS.select("appl_no", "drug_name", "active_ingredient").unique()
             .filter(pl.col("drug_name").str.to_lowercase().str.contains(q.lower(), literal=True)
                     | pl.col("active_ingredient").str.to_lowercase().str.contains(q.lower(), literal=True))
             .join(APPLICATIONS, on="appl_no", how="left")
             .filter(pl.col("appl_type") == appl_type if appl_type else pl.lit(True))
             .sort(pl.col("drug_name").str.to_lowercase(), "drug_name", "active_ingredient", "appl_no"))
    return [(f"/daf/application/{r['appl_no']}", text(r["drug_name"]), text(r["active_ingredient"]),
             f"{r['appl_type']} {r['appl_no']}" if r["appl_type"] else r["appl_no"], text(r["sponsor_name"]))
            for r in found.iter_rows(named=True)]


def test_search_finds_a_brand_name_in_any_case(site):
    html = site.get("/daf/search?q=LiPiToR").text
    assert search_rows(html) == [("/daf/application/020702", "LIPITOR", "ATORVASTATIN CALCIUM", "NDA 020702", "PFIZER")]
    assert "<h2>1 result matches</h2>" in html and 'value="LiPiToR"' in html


@pytest.mark.parametrize(("q", "appl_type"), [("atorvastatin", ""), ("pembrolizumab", ""), ("filgrastim", "BLA"),
                                               ("insulin", "NDA"), ("ceftriaxone", "")])
def test_search_matches_drug_names_and_ingredients_by_drug_name(site, q, appl_type):
    expected = expected_results(q, appl_type)
    shown = []
    for page in range(1, len(expected) // 100 + 2):
        shown += search_rows(site.get("/daf/search?" + urlencode({"q": q, "type": appl_type, "page": page})).text)
    assert shown == expected and expected


def test_an_application_missing_from_the_list_is_found_without_type_or_company(site):
    assert ("/daf/application/209004", "CLOBETASOL PROPIONATE", "CLOBETASOL PROPIONATE", "209004", "") in (
        search_rows(site.get("/daf/search?q=clobetasol&page=1").text)
        + search_rows(site.get("/daf/search?q=clobetasol&page=2").text))


@pytest.mark.parametrize("order", ["asc", "desc"])
@pytest.mark.parametrize("key", SORT_KEYS)
def test_every_column_sorts_both_ways_with_unknowns_last(site, key, order):
    rows = search_rows(site.get(f"/daf/search?q=clobetasol&sort={key}&order={order}").text)
    index = SORT_KEYS.index(key) + 1
    shown = [row[index].split()[-1] if key == "application" else row[index] for row in rows]
    known = [value for value in shown if value]
    assert known == sorted(known, key=str.lower, reverse=order == "desc")
    assert shown == known + [""] * (len(shown) - len(known))


def test_search_pages_by_one_hundred(site):
    first = site.get("/daf/search?q=hydrochloride").text
    total = len(expected_results("hydrochloride"))
    assert f"<h2>{total:,} results match</h2>" in first and len(search_rows(first)) == 100
    assert 'href="/daf/search?q=hydrochloride&amp;page=2" rel="next"' in first
    last = -(-total // 100)
    assert len(search_rows(site.get(f"/daf/search?q=hydrochloride&page={last}").text)) == total - 100 * (last - 1)
    check_error_page(site, f"/daf/search?q=hydrochloride&page={last + 1}", 404, f"Page {last + 1} does not exist",
                     FOOTER)


def test_without_a_search_the_page_is_the_form(site):
    html = site.get("/daf/search").text
    assert h1(html) == "Search Drugs@FDA" and 'name="q"' in html and "<caption>" not in html
    assert site.get("/daf/search?type=NDA&sort=company").status_code == 200


@pytest.mark.parametrize(
    ("query", "status", "message"),
    [
        ("q=", 400, "Enter a drug name or an active ingredient"),
        ("q=+++", 400, "Enter a drug name or an active ingredient"),
        (f"q={'a' * 101}", 400, "A search is at most 100 characters"),
        ("q=a&type=OTC", 400, "Unknown application type 'OTC'"),
        ("q=a&type=nda", 400, "Unknown application type 'nda'"),
        ("q=a&sort=strength", 400, "Cannot sort by 'strength'"),
        ("q=a&order=up", 400, "Unknown order 'up'"),
        ("q=a&page=x", 400, "Page must be a whole number"),
        ("q=a&page=0", 400, "Page must be a whole number"),
        ("q=a&page=²", 400, "Page must be a whole number"),
        (f"q=a&page={'9' * 5000}", 400, "Page must be a whole number"),
        ("page=2", 404, "no search was asked for"),
        ("q=zzzqqq&page=2", 404, "Page 2 does not exist"),
    ],
)
def test_bad_search_query_is_an_error_page(site, query, status, message):
    check_error_page(site, f"/daf/search?{query}", status, message, FOOTER)


def test_a_search_without_matches_says_so(site):
    html = site.get("/daf/search?q=zzzqqq").text
    assert "<h2>0 results match</h2>" in html and "No results match these filters." in html


# ---- application pages -----------------------------------------------------------------------


def expected_products(appl_no: str) -> list[str]:
    flag = {1: "Yes", 0: "No"}
    return [f'<tr><th scope="row">{p["product_no"]}</th>' + "".join(f"<td>{c}</td>" for c in [
        text(p["drug_name"]), text(p["active_ingredient"]), text(p["strength"]), text(p["form_route"]),
        text(p["marketing_status"]), flag.get(p["reference_drug"], ""), flag.get(p["reference_standard"], "")])
        + "</tr>" for p in PRODUCTS.filter(pl.col("appl_no") == appl_no).sort("product_no").iter_rows(named=True)]


def expected_history(appl_no: str) -> list[str]:
    actions = {"AP": "Approval", "TA": "Tentative Approval", "CR": "Complete Response"}
    history = SUBMISSIONS.filter(pl.col("appl_no") == appl_no).sort(
        ["submission_status_date", "submission_type", "submission_no"], descending=[True, False, True], nulls_last=True)
    return [f'<tr><th scope="row">{text(s["submission_status_date"])}</th>' + "".join(f"<td>{c}</td>" for c in [
        f"{s['submission_type']}-{s['submission_no']}", actions[s["submission_status"]],
        text(s["submission_class_description"]), text(s["review_priority"]), "Orphan" if s["orphan_flag"] else ""])
        + "</tr>" for s in history.iter_rows(named=True)]


def test_lipitor_page_has_its_application_products_and_history(site):
    html = site.get("/daf/application/020702").text
    assert h1(html) == "NDA 020702: LIPITOR"
    assert row_value(html, "Application Type") == "NDA (New Drug Application)"
    assert row_value(html, "Company") == "PFIZER"
    assert row_value(html, "Original Approval") == "1996-12-17 (ORIG-1)"
    assert body_rows(html, "<h2>Products</h2>") == expected_products("020702")
    history = body_rows(html, "<h2>Approval Date(s) and History</h2>")
    assert history == expected_history("020702") and len(history) == 49
    assert ('<tr><th scope="row">1996-12-17</th><td>ORIG-1</td><td>Approval</td>'
            "<td>Type 1 - New Molecular Entity</td><td>PRIORITY</td><td></td></tr>") in history


def test_keytruda_page_shows_its_orphan_status(site):
    history = body_rows(site.get("/daf/application/125514").text, "<h2>Approval Date(s) and History</h2>")
    assert ('<tr><th scope="row">2014-09-04</th><td>ORIG-1</td><td>Approval</td>'
            "<td>Type 1 - New Molecular Entity</td><td>PRIORITY</td><td>Orphan</td></tr>") in history


@pytest.mark.parametrize("appl_no", ["000004", "207997", "209004", "060904", "009658", "091003", "002139", "761060", "021703"])
def test_application_pages_show_every_product_and_submission(site, appl_no):
    html = site.get(f"/daf/application/{appl_no}").text
    products, history = expected_products(appl_no), expected_history(appl_no)
    if products:
        assert body_rows(html, "<h2>Products</h2>") == products
    else:
        assert "The data files list no products for this application." in html
    if history:
        assert body_rows(html, "<h2>Approval Date(s) and History</h2>") == history
    else:
        assert "The data files list no submissions for this application." in html


def test_pages_state_what_the_files_lack(site):
    unlisted = site.get("/daf/application/209004").text
    assert h1(unlisted) == "Application 209004: CLOBETASOL PROPIONATE"
    assert row_value(unlisted, "Application Type") == row_value(unlisted, "Company") == "not in the data files"
    assert row_value(site.get("/daf/application/060904").text, "Original Approval") == "date unknown (ORIG-1)"
    tentative = SUBMISSIONS.filter(pl.col("submission_status") == "TA").join(APPROVALS, on="appl_no", how="anti")
    html = site.get(f"/daf/application/{tentative['appl_no'][0]}").text
    assert row_value(html, "Original Approval") == "none as of 2018-06-25"
    assert row_value(site.get("/daf/application/207997").text, "Original Approval") == "2017-04-28 (ORIG-2)"


@pytest.mark.parametrize("appl_no", ["20702", "0020702", "999999", "02070x", "０２０７０２", "", "020702.html",
                                     "9" * 5000, "%00"])
def test_unknown_application_is_a_404_page(site, appl_no):
    check_error_page(site, f"/daf/application/{quote(appl_no, safe='')}", 404, "", FOOTER)


# ---- monthly reports -------------------------------------------------------------------------


def expected_report(year: int, month: int) -> list[tuple]:
    """(date, drug, submission, ingredient, company, classification, priority, status) per row."""
    approved = APPROVALS.filter((pl.col("approval_date").dt.year() == year)
                                & (pl.col("approval_date").dt.month() == month))
    rows = [(r["approval_date"], r["drug_name"], r["appl_type"], r["appl_no"], r["submission_no"],
             r["active_ingredient"], r["sponsor_name"], r["chemical_type"], r["review_priority"], "Approval")
            for r in approved.iter_rows(named=True)]
    tentative = SUBMISSIONS.filter((pl.col("submission_type") == "ORIG") & (pl.col("submission_status") == "TA")
                                   & (pl.col("submission_status_date").dt.year() == year)
                                   & (pl.col("submission_status_date").dt.month() == month))
    for s in tentative.join(APPLICATIONS, on="appl_no", how="left").iter_rows(named=True):
        products = PRODUCTS.filter(pl.col("appl_no") == s["appl_no"]).sort("product_no")
        rows.append((s["submission_status_date"], " | ".join(products["drug_name"].unique(maintain_order=True)) or None,
                     s["appl_type"], s["appl_no"], s["submission_no"],
                     " | ".join(products["active_ingredient"].unique(maintain_order=True)) or None, s["sponsor_name"],
                     s["submission_class_description"], s["review_priority"], "Tentative Approval"))
    rows.sort(key=lambda r: (r[0], r[1] is None, r[1] or "", r[3]))
    return [(r[0].isoformat(), text(r[1]),
             f'<a href="/daf/application/{r[3]}">{f"{r[2]} " if r[2] else ""}{r[3]} ORIG-{r[4]}</a>',
             text(r[5]), text(r[6]), text(r[7]), text(r[8]), r[9]) for r in rows]


def report_rows(html: str) -> list[tuple]:
    return [(day, *cells(row)) for day, row in REPORT_ROW.findall(html)]


@pytest.mark.parametrize(("year", "month"), [(2018, 6), (2017, 4), (2014, 9), (1996, 12), (2008, 1), (1939, 2)])
def test_a_monthly_report_lists_the_original_approvals_and_tentative_approvals(site, year, month):
    html = site.get(f"/daf/reports/{year}/{month:02d}").text
    expected = expected_report(year, month)
    assert report_rows(html) == expected and expected
    assert len(body_rows(html)) == len(expected)
    assert h1(html) == f"Original Approvals and Tentative Approvals: {date(year, month, 1):%B %Y}"


def test_reports_hold_each_dated_original_approval_once(site):
    months = {(d.year, d.month) for d in APPROVALS["approval_date"].drop_nulls()}
    shown = 0
    for year, month in sorted(months)[-24:]:
        shown += sum(row[-1] == "Approval" for row in report_rows(site.get(f"/daf/reports/{year}/{month}").text))
    expected = APPROVALS.filter(pl.col("approval_date") >= date(*sorted(months)[-24:][0], 1)).height
    assert shown == expected


def test_the_design_question_reads_off_the_april_to_june_2018_reports(site):
    rows = [row for month in (4, 5, 6) for row in report_rows(site.get(f"/daf/reports/2018/{month:02d}").text)
            if row[-1] == "Approval" and row[5].startswith("Type 1 -") and row[6] == "PRIORITY"]
    assert {"CRYSVITA", "DOPTELET", "PALYNZIQ", "MOXIDECTIN", "EPIDIOLEX"} <= {row[1] for row in rows}
    assert "Orphan" not in "".join(str(row) for row in rows)  # orphan status is on the application pages


def test_reports_index_links_every_month_with_a_report_and_neighbours_link(site):
    html = site.get("/daf/reports/").text
    links = re.findall(r'<a href="/daf/reports/(\d{4})/(\d\d)">(\d\d)</a>', html)
    dated = pl.concat([APPROVALS.select(pl.col("approval_date").alias("day")),
                       SUBMISSIONS.filter((pl.col("submission_type") == "ORIG") & (pl.col("submission_status") == "TA"))
                       .select(pl.col("submission_status_date").alias("day"))])["day"].drop_nulls()
    assert {(int(y), int(m)) for y, m, _ in links} == {(d.year, d.month) for d in dated}
    assert links[0][:2] == ("2018", "01") and all(m == shown for _, m, shown in links)
    june = site.get("/daf/reports/2018/06").text
    assert 'href="/daf/reports/2018/05" rel="prev"' in june and 'rel="next"' not in june
    assert 'href="/daf/reports/1939/03" rel="next"' in site.get("/daf/reports/1939/02").text


def test_a_month_without_actions_says_so_and_months_read_either_way(site):
    assert site.get("/daf/reports/2018/6").text == site.get("/daf/reports/2018/06").text
    empty = next((y, m) for y in range(1940, 1950) for m in range(1, 13) if not report_rows(
        site.get(f"/daf/reports/{y}/{m}").text))
    html = site.get(f"/daf/reports/{empty[0]}/{empty[1]}").text
    assert "No original approvals or tentative approvals on record" in html


@pytest.mark.parametrize("path", ["2018/07", "1939/01", "2018/13", "2018/00", "2018/x", "x/06", "02018/06",
                                  "2018/006", "２０１８/06", "2018/-6", f"{'9' * 5000}/01", "2018", "2018/06/01"])
def test_unknown_month_is_a_404_page(site, path):
    check_error_page(site, f"/daf/reports/{quote(path)}", 404, "", FOOTER)


def test_unknown_query_parameters_are_ignored(site):
    assert site.get("/daf/reports/2018/06?page=x&sort=1").text == site.get("/daf/reports/2018/06").text
    assert site.get("/daf/search?q=lipitor&x=1&page=1").text == site.get("/daf/search?q=lipitor").text
