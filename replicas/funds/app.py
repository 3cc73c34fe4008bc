"""The fund screener replica as an ASGI app; `create_app` is the factory `replicas.serve` runs.

Routes: `/` (redirects to `/funds`), `/funds` (the screener, see `listing`), `/funds/{symbol}`
(one fund, every field; closed funds too), `/healthz` (JSON: replica name and data hash).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from replicas.data import data_hash
from replicas.funds.catalog import catalog
from replicas.funds.fields import SECTIONS, STATUS_WORDS
from replicas.funds.listing import LOADS, RATINGS, parse_query, select
from replicas.web.listing import BadQuery
from replicas.web.pages import install_error_page, results_context, site_templates
from replicas.web.record import sections

REPLICA = "funds"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def plural(count: int) -> str:
    return f"{count:,} fund matches" if count == 1 else f"{count:,} funds match"


def create_app() -> FastAPI:
    data = catalog()
    templates = site_templates(TEMPLATES)
    # No /docs or /openapi.json: the browsing arm is to see a website, not a described API.
    app = FastAPI(title="Fund Screener", docs_url=None, redoc_url=None, openapi_url=None)
    install_error_page(app, templates, "/funds", "Screen all funds")

    @app.get("/")
    def home() -> RedirectResponse:
        return RedirectResponse("/funds", status_code=302)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"replica": REPLICA, "data_hash": data_hash()}

    @app.get("/funds", response_class=HTMLResponse)
    def fund_list(request: Request) -> Response:
        try:
            query = parse_query(request.query_params, data)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        context = results_context(query, select(data, query), data.cells, plural)
        form = {"categories": data.categories, "ratings": RATINGS, "loads": LOADS}
        return templates.TemplateResponse(request, "list.html", {**context, **form})

    @app.get("/funds/{symbol}", response_class=HTMLResponse)
    def fund_page(request: Request, symbol: str) -> Response:
        index = data.row_of_symbol.get(symbol.upper())
        if index is None:
            raise HTTPException(404, f"No fund has the symbol {symbol!r}. Find it in the screener at /funds.")
        fund = data.row(index)
        context = {
            "fund": fund,
            "status": STATUS_WORDS[fund["status"]],
            "sections": sections(SECTIONS, fund),
            "category_url": "/funds?" + urlencode({"category": fund["category"]}),
            "family_url": "/funds?" + urlencode({"family": fund["family"]}) if fund["family"] else None,
        }
        return templates.TemplateResponse(request, "fund.html", context)

    return app
