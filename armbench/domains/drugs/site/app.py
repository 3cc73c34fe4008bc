"""The Drugs@FDA replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes (stable URLs):
- `/` redirects to `/daf/`: about this copy (snapshot, what is missing) and the search form;
  `/healthz` (JSON: replica name and data hash).
- `/daf/search?q={text}&type={NDA|ANDA|BLA}&sort={column}&order={asc|desc}&page={n}`: every
  application, drug name and active ingredient whose name or ingredient contains `q` (any case),
  100 a page; without `q`, the search form alone.
- `/daf/application/{appl_no}` (six digits, e.g. 000004): the application's type, company and
  original approval, its products, and its submission history (action date, submission, action,
  classification, review priority, orphan status), newest first.
- `/daf/reports/`: the months with a report, then the original approvals without a date (in no
  month), as a report lists them; `/daf/reports/{YYYY}/{MM}`: that month's original approvals (each
  application's first ORIG approval) and original tentative approvals, with submission
  classification and review priority.
A path value is looked up in what `catalog()` prepared (ASCII, bounded); anything else is a 404
page, and a query string the site cannot honour a 400 page.
"""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from starlette.exceptions import HTTPException

from armbench.domains.drugs import TABLES
from armbench.domains.drugs.site.catalog import catalog
from armbench.domains.drugs.site.fields import APPLICATION_TYPES, NOT_LISTED, month_name
from armbench.domains.drugs.site.search import parse_search, select
from armbench.replicas.web.listing import BadQuery, whole_number
from armbench.replicas.web.pages import create_site, results_context

TEMPLATES = Path(__file__).resolve().parent / "templates"
APPL_NO_LENGTH = 6


def shift(month: tuple[int, int], by: int) -> tuple[int, int]:
    """(2018, 1) shifted by -1 -> (2017, 12)."""
    year, index = divmod(month[0] * 12 + month[1] - 1 + by, 12)
    return year, index + 1


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("Drugs@FDA", "drugs", TABLES.hash(), TEMPLATES, "/daf/", "Drugs@FDA home")
    first_month, last_month = min(data.months), max(data.months)
    months_held = f"{month_name(*first_month)} to {month_name(*last_month)}"
    years: dict[int, list[int]] = {}
    for year, month in sorted(data.months, reverse=True):
        years.setdefault(year, []).insert(0, month)
    undated = Markup("\n").join(data.undated_rows())

    @app.get("/daf/", response_class=HTMLResponse)
    async def home(request: Request) -> Response:
        context = {"latest": data.latest_action, "types": APPLICATION_TYPES, "months_held": months_held,
                   "applications": f"{len(data.application_rows):,}",
                   "unlisted": f"{data.applications['appl_type'].null_count():,}"}
        return templates.TemplateResponse(request, "home.html", context)

    def matches(count: int) -> str:
        return f"{count:,} result matches" if count == 1 else f"{count:,} results match"

    @app.get("/daf/search", response_class=HTMLResponse)
    async def search(request: Request) -> Response:
        try:
            query = parse_search(request.query_params)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        context = {"query": query, "types": APPLICATION_TYPES, "noun": "results"}
        if query.q is not None:
            context |= results_context(query, select(data.search, query), data.search.cells, matches)
        elif query.page != 1:
            raise HTTPException(404, f"Page {query.page} does not exist: no search was asked for.")
        return templates.TemplateResponse(request, "search.html", context)

    @app.get("/daf/application/{appl_no}", response_class=HTMLResponse)
    async def application_page(request: Request, appl_no: str) -> Response:
        application = data.application(appl_no) if len(appl_no) == APPL_NO_LENGTH else None
        if application is None:
            raise HTTPException(404, f"No application has the number {appl_no[:40]!r}: application numbers "
                                     "are six digits, with leading zeros. Search by drug name at /daf/search.")
        context = {"application": application, "type_name": APPLICATION_TYPES.get(application.appl_type),
                   "not_listed": NOT_LISTED, "latest": data.latest_action,
                   "products": Markup("\n").join(data.product_rows(application)),
                   "submissions": Markup("\n").join(data.submission_rows(application))}
        return templates.TemplateResponse(request, "application.html", context)

    @app.get("/daf/reports/", response_class=HTMLResponse)
    async def reports(request: Request) -> Response:
        return templates.TemplateResponse(request, "reports.html", {"years": years, "undated": undated})

    @app.get("/daf/reports/{year}/{month}", response_class=HTMLResponse)
    async def report(request: Request, year: str, month: str) -> Response:
        key = (whole_number(year, max_digits=4), whole_number(month, max_digits=2))
        if None in key or not 1 <= key[1] <= 12 or not first_month <= key <= last_month:
            raise HTTPException(404, f"No report for {year[:40]!r}/{month[:40]!r}: reports run from "
                                     f"{months_held}, at /daf/reports/YYYY/MM. See the list at /daf/reports/.")
        rows = data.report_rows(key)
        earlier, later = shift(key, -1), shift(key, 1)
        context = {"month": month_name(*key), "rows": Markup("\n").join(rows), "count": len(rows),
                   "earlier": earlier if earlier >= first_month else None,
                   "later": later if later <= last_month else None}
        return templates.TemplateResponse(request, "report.html", context)

    return app
