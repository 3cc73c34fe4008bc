"""The GPU replica site as an ASGI app; `create_app` is the factory `replicas.serve` runs.

Routes: `/` (redirects to `/gpus`), `/gpus` (filterable list, see `listing`), `/gpus/{slug}`
(one GPU, every field), `/healthz` (JSON: replica name and data hash, for `replicas.serve`).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

from replicas.gpus.catalog import catalog
from replicas.gpus.fields import SECTIONS, day
from replicas.gpus.listing import parse_query, select
from replicas.web.pages import create_site, parse_or_400, results_context
from replicas.web.record import sections

TEMPLATES = Path(__file__).resolve().parent / "templates"


def plural(count: int) -> str:
    return f"{count:,} GPU matches" if count == 1 else f"{count:,} GPUs match"


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("GPU Database", "gpus", TEMPLATES, "/gpus", "Browse all GPUs")

    @app.get("/gpus", response_class=HTMLResponse)
    def gpu_list(request: Request) -> Response:
        query = parse_or_400(parse_query, request, data)
        context = results_context(query, select(data, query), data.cells, plural)
        return templates.TemplateResponse(request, "list.html", {**context, "catalog": data})

    @app.get("/gpus/{slug}", response_class=HTMLResponse)
    def gpu_page(request: Request, slug: str) -> Response:
        index = data.row_of.get(slug)
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
