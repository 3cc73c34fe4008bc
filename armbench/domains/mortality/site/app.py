"""The mortality replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes (the shapes of the CDC's "Stats of the States" pages):
- `/` redirects to `/sosmap/`, the index of causes and states; `/healthz` (JSON: replica name and
  data hash); `/about`: the source, what the site covers and what it does not.
- `/causes/{cause}`: one cause's age-adjusted death rate and deaths in every state and the District
  of Columbia for one year, `?year={1999..2017}&sort={state|rate|deaths}&order={asc|desc}` (default:
  the latest year, states A to Z), with the United States' figures above the table.
- `/states/{state}/{year}`: one state's year, its ten causes ranked by deaths, and all causes.
- `/national/{cause}`: the United States' deaths and rate from one cause, one row per year.
Causes and states are slugs of their names (`alzheimers-disease`, `district-of-columbia`). A path
value is looked up in what `catalog()` prepared; anything else is a 404 page.
"""
from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from markupsafe import Markup
from starlette.exceptions import HTTPException

from armbench.domains.mortality import TABLES
from armbench.domains.mortality.site.catalog import Cause, catalog
from armbench.domains.mortality.site.fields import CAUSE_COLUMNS, parse_cause_query
from armbench.replicas.web.listing import BadQuery, whole_number
from armbench.replicas.web.pages import create_site

TEMPLATES = Path(__file__).resolve().parent / "templates"


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("Stats of the States", "mortality", TABLES.hash(), TEMPLATES, "/sosmap/",
                                 "Stats of the States: all causes and states")
    years_held = f"{data.years[0]} to {data.years[-1]}"

    @app.get("/sosmap/", response_class=HTMLResponse)
    async def index(request: Request) -> Response:
        context = {"causes": data.causes, "states": data.states, "latest": data.years[-1], "years_held": years_held}
        return templates.TemplateResponse(request, "index.html", context)

    @app.get("/about", response_class=HTMLResponse)
    async def about(request: Request) -> Response:
        return templates.TemplateResponse(request, "about.html", {"years_held": years_held, "latest": data.years[-1]})

    def checked_cause(cause: str) -> Cause:
        found = data.causes.get(cause)
        if found is None:
            raise HTTPException(404, f"No cause of death has the address {cause[:40]!r}: the causes are "
                                     f"{', '.join(data.causes)}. See the list at /sosmap/.")
        return found

    @app.get("/causes/{cause}", response_class=HTMLResponse)
    async def cause_page(request: Request, cause: str) -> Response:
        found = checked_cause(cause)
        try:
            query = parse_cause_query(request.query_params, data.years)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        if query.page != 1:
            raise HTTPException(404, f"Page {query.page} does not exist: a cause's table is one page.")
        page = found.years[query.year]
        rows = page.rows[(query.sort, query.order)]
        context = {"key": cause, "cause": found, "page": page, "query": query, "columns": CAUSE_COLUMNS,
                   "years": data.years, "rows": Markup("\n").join(rows), "count": len(rows)}
        return templates.TemplateResponse(request, "cause.html", context)

    @app.get("/states/{state}/{year}", response_class=HTMLResponse)
    async def state_page(request: Request, state: str, year: str) -> Response:
        found = data.states.get(state)
        number = whole_number(year, max_digits=4)
        page = found.years.get(number) if found is not None and number is not None else None
        if page is None:
            raise HTTPException(404, f"No page at /states/{state[:40]}/{year[:40]}: states are written "
                                     f"as slugs (new-york, district-of-columbia), years {years_held}. "
                                     "See the list at /sosmap/.")
        context = {"key": state, "state": found, "year": number, "page": page, "years": data.years}
        return templates.TemplateResponse(request, "state.html", context)

    @app.get("/national/{cause}", response_class=HTMLResponse)
    async def national_page(request: Request, cause: str) -> Response:
        found = checked_cause(cause)
        context = {"key": cause, "cause": found, "rows": Markup("\n").join(found.national), "years_held": years_held}
        return templates.TemplateResponse(request, "national.html", context)

    return app
