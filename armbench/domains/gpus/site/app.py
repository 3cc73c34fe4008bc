"""The GPU replica site as an ASGI app; `create_app` is the factory `armbench.replicas.serve` runs.

Routes: `/` (redirects to `/gpus`), `/gpus` (filterable list, see `listing`), `/gpus/{slug}`
(one GPU, every field), `/healthz` (JSON: replica name and data hash, for `armbench.replicas.serve`).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlencode

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

from armbench.domains.gpus import TABLES
from armbench.domains.gpus.site.catalog import catalog
from armbench.domains.gpus.site.fields import SECTIONS, day
from armbench.domains.gpus.site.listing import parse_query, select
from armbench.replicas.web.pages import add_list_page, create_site
from armbench.replicas.web.record import sections

TEMPLATES = Path(__file__).resolve().parent / "templates"


def create_app() -> FastAPI:
    data = catalog()
    app, templates = create_site("GPU Database", "gpus", TABLES.hash(), TEMPLATES, "/gpus", "Browse all GPUs")
    add_list_page(app, templates, "/gpus", data, parse_query, select, ("GPU", "GPUs"), {"catalog": data})

    @app.get("/gpus/{slug}", response_class=HTMLResponse)
    async def gpu_page(request: Request, slug: str) -> Response:
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
