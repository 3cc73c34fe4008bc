"""The fund screener replica as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes: `/` (redirects to `/funds`), `/funds` (the screener, see `listing`), `/funds/{symbol}`
(one fund, every field; closed funds too), `/healthz` (JSON: replica name and data hash).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

from armbench.domains.funds import TABLES
from armbench.domains.funds.site.catalog import catalog
from armbench.domains.funds.site.fields import SECTIONS, STATUS_WORDS
from armbench.domains.funds.site.listing import LOADS, RATINGS, parse_query, select
from armbench.replicas.web.pages import add_list_page, create_site
from armbench.replicas.web.record import sections

TEMPLATES = Path(__file__).resolve().parent / "templates"


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("Fund Screener", "funds", TABLES.hash(), TEMPLATES, "/funds", "Screen all funds")
    form = {"categories": data.categories, "ratings": RATINGS, "loads": LOADS}
    add_list_page(app, templates, "/funds", data, parse_query, select, ("fund", "funds"), form)

    @app.get("/funds/{symbol}", response_class=HTMLResponse)
    async def fund_page(request: Request, symbol: str) -> Response:
        index = data.row_of.get(symbol.upper())
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
