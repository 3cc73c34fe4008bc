"""The GPU replica site as an ASGI app; `create_app` is the factory `replicas.serve` runs.

Routes: `/` (redirects to `/gpus`), `/gpus` (filterable list, see `listing`), `/gpus/{slug}`
(one GPU, every field), `/healthz` (JSON: replica name and data hash, for `replicas.serve`).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from starlette.exceptions import HTTPException

from replicas.data import data_hash
from replicas.gpus.catalog import catalog
from replicas.gpus.fields import SECTIONS, day
from replicas.gpus.listing import parse_query, select
from replicas.web.listing import BadQuery
from replicas.web.pages import install_error_page, results_context, site_templates
from replicas.web.record import sections

REPLICA = "gpus"
TEMPLATES = Path(__file__).resolve().parent / "templates"


def plural(count: int) -> str:
    return f"{count:,} GPU matches" if count == 1 else f"{count:,} GPUs match"


def create_app() -> FastAPI:
    data = catalog()
    templates = site_templates(TEMPLATES)
    # No /docs or /openapi.json: the browsing arm is to see a website, not a described API.
    app = FastAPI(title="GPU Database", docs_url=None, redoc_url=None, openapi_url=None)
    install_error_page(app, templates, "/gpus", "Browse all GPUs")

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
        context = results_context(query, select(data, query), data.cells, plural)
        return templates.TemplateResponse(request, "list.html", {**context, "catalog": data})

    @app.get("/gpus/{slug}", response_class=HTMLResponse)
    def gpu_page(request: Request, slug: str) -> Response:
        index = data.row_of_slug.get(slug)
        if index is None:
            raise HTTPException(404, f"No GPU has the address /gpus/{slug}. Find it in the list at /gpus.")
        gpu = data.row(index)
        context = {
            "gpu": gpu,
            "released": day(gpu["release_date"]),
            "sections": sections(SECTIONS, gpu),
            "manufacturer_url": "/gpus?" + urlencode({"manufacturer": gpu["manufacturer"]}),
            "generation_url": "/gpus?" + urlencode({"generation": gpu["generation"]}),
        }
        return templates.TemplateResponse(request, "gpu.html", context)

    return app
