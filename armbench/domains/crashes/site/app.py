"""The crashes replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes (NHTSA's FARS state tables, IIHS's "Fatality Facts: state by state"):
- `/` redirects to `/fatality-facts/`, the index of years and states; `/healthz` (JSON: replica
  name and data hash).
- `/years/{year}` (1994 to 2013): every state's fatalities and rates in one table, plus the U.S.
  total, `?sort={column}&order={asc|desc}` (default: fatalities, highest first).
- `/states/{slug}` (e.g. `/states/new-mexico`): a state's 20 years, oldest first, and its
  FiveThirtyEight driver profile. `/states/south-carolina` is a 404 page saying why it is missing.
- `/national`: the United States' totals and rates, 1994 to 2013.
- `/about`: source, licences, coverage and gaps.
A path value is looked up in what `catalog()` prepared; anything else is a 404 page.
"""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from starlette.exceptions import HTTPException

from armbench.domains.crashes import TABLES
from armbench.domains.crashes.site.catalog import catalog
from armbench.domains.crashes.site.fields import FIGURES, YEAR_COLUMNS, parse_year_query
from armbench.replicas.web.listing import BadQuery, whole_number
from armbench.replicas.web.pages import create_site

TEMPLATES = Path(__file__).resolve().parent / "templates"
HOME = "/fatality-facts/"
# States the site has no figures for, by slug -> (name, why): said on their 404 page.
MISSING = {"south-carolina": ("South Carolina", (
    "South Carolina's figures are not on this site: in the copy of NHTSA's state tables this site "
    "is built from, South Carolina's file is a duplicate of Rhode Island's, so it was left out. The "
    "United States totals (on every year page and at /national) do include South Carolina. See /about."))}


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("Traffic Fatality Facts", "crashes", TABLES.hash(), TEMPLATES, HOME,
                                 "Browse states and years")
    first_year, last_year = min(data.years), max(data.years)
    states = sorted([(state.name, f"/states/{key}") for key, state in data.states.items()]
                    + [(name, None) for name, _ in MISSING.values()])

    @app.get(HOME, response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        context = {"years": list(data.years), "states": states, "first_year": first_year, "last_year": last_year}
        return templates.TemplateResponse(request, "index.html", context)

    @app.get("/years/{year}", response_class=HTMLResponse)
    async def year_page(request: Request, year: str) -> Response:
        number = whole_number(year, max_digits=4)
        page = data.years.get(number) if number is not None else None
        if page is None:
            raise HTTPException(404, f"No year {year[:40]!r} on this site: it holds the years {first_year} "
                                     f"to {last_year}. See the list at {HOME}.")
        try:
            query = parse_year_query(request.query_params)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        if query.page != 1:
            raise HTTPException(404, f"Page {query.page} does not exist: a year's table is one page.")
        rows = page.rows[(query.sort, query.order)]
        context = {"year": number, "query": query, "columns": YEAR_COLUMNS, "rows": Markup("\n").join(rows),
                   "total": page.total, "count": len(rows), "years": list(data.years)}
        return templates.TemplateResponse(request, "year.html", context)

    @app.get("/states/{state}", response_class=HTMLResponse)
    async def state_page(request: Request, state: str) -> Response:
        if state in MISSING:
            raise HTTPException(404, MISSING[state][1])
        page = data.states.get(state)
        if page is None:
            raise HTTPException(404, f"No state page at /states/{state[:40]}: a state's address is its name in "
                                     f"lower case, words joined by hyphens (e.g. /states/new-mexico). See the "
                                     f"list at {HOME}.")
        context = {"state": page, "rows": Markup("\n").join(page.rows), "figures": FIGURES,
                   "sections": page.profile, "first_year": first_year, "last_year": last_year}
        return templates.TemplateResponse(request, "state.html", context)

    @app.get("/national", response_class=HTMLResponse)
    async def national(request: Request) -> Response:
        context = {"rows": Markup("\n").join(data.national), "figures": FIGURES, "first_year": first_year,
                   "last_year": last_year}
        return templates.TemplateResponse(request, "national.html", context)

    @app.get("/about", response_class=HTMLResponse)
    async def about(request: Request) -> Response:
        context = {"first_year": first_year, "last_year": last_year, "count": len(data.states)}
        return templates.TemplateResponse(request, "about.html", context)

    return app
