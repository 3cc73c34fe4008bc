"""The World Bank replica as a FastAPI app: `/healthz` plus every `/v2/...` GET path.

The app has no docs pages: any path other than /healthz is the API's, as on api.worldbank.org.
"""
from __future__ import annotations

from fastapi import FastAPI, Request, Response

from armbench.domains.worldbank import TABLES
from armbench.domains.worldbank.api.catalog import catalog
from armbench.domains.worldbank.api.routes import respond

DOMAIN = "worldbank"


def create_app() -> FastAPI:
    catalog()  # load the tables before the first request, not during it
    app = FastAPI(title="World Bank API v2 replica", docs_url=None, redoc_url=None,
                  openapi_url=None)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"replica": DOMAIN, "data_hash": TABLES.hash()}

    @app.get("/{path:path}")
    async def api(path: str, request: Request) -> Response:
        reply = respond(path, request.query_params.multi_items())
        return Response(reply.body, status_code=reply.status, media_type=reply.media_type)

    return app
