"""The GPU replica site as an ASGI app; `create_app` is the factory `replicas.serve` runs.

Routes: `/` (redirects to `/gpus`), `/gpus` (filterable list, see `listing`), `/gpus/{slug}`
(one GPU, every field), `/healthz` (JSON: replica name and data hash, for `replicas.serve`).
"""
from __future__ import annotations

from http import HTTPStatus
from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException

from replicas.data import data_hash
from replicas.gpus.catalog import catalog
from replicas.gpus.fields import COLUMNS, day, sections
from replicas.gpus.listing import PAGE_SIZE, BadQuery, page_count, page_numbers, parse_query, select

REPLICA = "gpus"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def plural(count: int) -> str:
    return f"{count:,} GPU matches" if count == 1 else f"{count:,} GPUs match"


def create_app() -> FastAPI:
    data = catalog()
    templates = Jinja2Templates(directory=TEMPLATES)
    # No /docs or /openapi.json: the browsing arm is to see a website, not a described API.
    app = FastAPI(title="GPU Database", docs_url=None, redoc_url=None, openapi_url=None)

    @app.exception_handler(HTTPException)
    async def error_page(request: Request, exc: HTTPException) -> Response:
        title = HTTPStatus(exc.status_code).phrase
        unrouted = exc.status_code == 404 and exc.detail == title
        message = f"There is no page at {request.url.path}." if unrouted else exc.detail
        context = {"status": exc.status_code, "title": title, "message": message}
        return templates.TemplateResponse(request, "error.html", context, status_code=exc.status_code)

    @app.get("/")
    def home() -> RedirectResponse:
        return RedirectResponse("/gpus", status_code=302)

    @app.get("/healthz")
    def healthz() -> dict[str, str]:
        return {"replica": REPLICA, "data_hash": data_hash()}

    @app.get("/gpus", response_class=HTMLResponse)
    def gpu_list(request: Request) -> Response:
        try:
            query = parse_query(request.query_params, data)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        matched = select(data, query)
        pages = page_count(len(matched))
        if query.page > pages:
            raise HTTPException(404, f"Page {query.page} does not exist: {plural(len(matched))}, "
                                     f"{pages} page{'s' if pages > 1 else ''} of {PAGE_SIZE}.")
        start = (query.page - 1) * PAGE_SIZE
        shown = matched[start:start + PAGE_SIZE]
        context = {
            "query": query,
            "catalog": data,
            "columns": COLUMNS,
            "rows": [data.cells[index] for index in shown],
            "matches": plural(len(matched)),
            "total": f"{len(matched):,}",
            "first": f"{start + 1:,}",
            "last": f"{start + len(shown):,}",
            "pages": pages,
            "page_numbers": page_numbers(query.page, pages),
        }
        return templates.TemplateResponse(request, "list.html", context)

    @app.get("/gpus/{slug}", response_class=HTMLResponse)
    def gpu_page(request: Request, slug: str) -> Response:
        index = data.row_of_slug.get(slug)
        if index is None:
            raise HTTPException(404, f"No GPU has the address /gpus/{slug}. Find it in the list at /gpus.")
        gpu = data.row(index)
        context = {
            "gpu": gpu,
            "released": day(gpu["release_date"]),
            "sections": sections(gpu),
            "manufacturer_url": "/gpus?" + urlencode({"manufacturer": gpu["manufacturer"]}),
            "generation_url": "/gpus?" + urlencode({"generation": gpu["generation"]}),
        }
        return templates.TemplateResponse(request, "gpu.html", context)

    return app
