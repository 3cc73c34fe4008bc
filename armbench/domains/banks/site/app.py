"""The FDIC replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes (the FDIC's shapes):
- `/` redirects to `/bank-failures`, the home page (what the site holds, terms); `/healthz` (JSON:
  replica name and data hash).
- `/failed-bank-list`: the Failed Bank List, failures only (no assistance transactions), newest
  closing first; `?sort={column}&order={asc|desc}&page={n}`, 100 banks a page.
- `/bankfind`: BankFind's failures and assistance search, `?state=&year=&resolution=&name=`
  plus sort, order and page (see `listing`); both kinds of transaction unless `resolution` picks one.
- `/bank/{fdic_id}`: one failure or assistance transaction, every field.
A parameter the site cannot honour is a 400 page, a page past the end or an unknown bank a 404 page.
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

from armbench.domains.banks import TABLES
from armbench.domains.banks.site.catalog import catalog
from armbench.domains.banks.site.fields import RESOLUTION_WORDS, SECTIONS
from armbench.domains.banks.site.listing import (
    RESOLUTIONS,
    bankfind,
    failed_banks,
    parse_bankfind_query,
    parse_failed_bank_query,
)
from armbench.replicas.web.listing import BadQuery
from armbench.replicas.web.pages import add_list_page, create_site, results_context
from armbench.replicas.web.record import sections

TEMPLATES = Path(__file__).resolve().parent / "templates"
HOME = "/bank-failures"


def banks(count: int) -> str:
    return f"{count:,} bank{'' if count == 1 else 's'}"


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("FDIC Bank Failures", "banks", TABLES.hash(), TEMPLATES, HOME,
                                 "Bank failures and assistance")
    counts = dict(data.table["resolution_type"].value_counts().iter_rows())
    home = {"failures": f"{counts['FAILURE']:,}", "assisted": f"{counts['ASSISTANCE']:,}",
            "first": data.years[-1], "last": data.years[0]}

    @app.get(HOME, response_class=HTMLResponse)
    async def home_page(request: Request) -> Response:
        return templates.TemplateResponse(request, "home.html", home)

    @app.get("/failed-bank-list", response_class=HTMLResponse)
    async def failed_bank_list(request: Request) -> Response:
        try:
            query = parse_failed_bank_query(request.query_params)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        context = results_context(query, failed_banks(data, query), data.cells, lambda n: f"{banks(n)} failed")
        return templates.TemplateResponse(request, "failed_bank_list.html", {**context, "noun": "failed banks"})

    form = {"states": data.states, "years": data.years, "resolutions": RESOLUTIONS}
    add_list_page(app, templates, "/bankfind", data, parse_bankfind_query, bankfind,
                  ("transaction", "transactions"), form)

    @app.get("/bank/{fdic_id}", response_class=HTMLResponse)
    async def bank_page(request: Request, fdic_id: str) -> Response:
        index = data.row_of.get(fdic_id)
        if index is None:
            raise HTTPException(404, f"No bank has the address /bank/{fdic_id[:40]}. Find it with BankFind "
                                     "at /bankfind or in the Failed Bank List at /failed-bank-list.")
        bank = data.row(index)
        context = {
            "bank": bank,
            "resolution": RESOLUTION_WORDS[bank["resolution_type"]],
            "sections": sections(SECTIONS, bank),
            "state_url": "/bankfind?" + urlencode({"state": bank["state"], "year": bank["fail_year"]}),
        }
        return templates.TemplateResponse(request, "bank.html", context)

    return app
