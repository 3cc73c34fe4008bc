"""Rendering shared by the replica sites: templates, error pages and a list page's context.

Route handlers are `async def` in every replica: a page is a millisecond or so of CPU, and FastAPI
runs a plain `def` handler in a worker thread, a hop that cost a third of a page's server CPU.
"""
from __future__ import annotations

from collections.abc import Callable
from http import HTTPStatus
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from fastapi.templating import Jinja2Templates
from starlette.exceptions import HTTPException

from armbench.replicas.web.listing import BadQuery, ListQuery, page_count, page_numbers

SHARED_TEMPLATES = Path(__file__).resolve().parent / "templates"


def create_site(title: str, replica: str, data_hash: str, templates_dir: Path, home: str,
                home_label: str) -> tuple[FastAPI, Jinja2Templates]:
    """A replica website without its own pages yet: `/` redirects to `home`, `/healthz` names
    the replica and its data hash (for `armbench.replicas.serve`), and errors are pages linking to `home`.

    No /docs or /openapi.json: the browsing arm is to see a website, not a described API.
    """
    app = FastAPI(title=title, docs_url=None, redoc_url=None, openapi_url=None)
    # The site's own templates first, then the shared ones (`_layout.html`, `error.html`, ...).
    templates = Jinja2Templates(directory=[templates_dir, SHARED_TEMPLATES])
    templates.env.auto_reload = False  # they do not change while it serves: no stat() of them per page
    install_error_page(app, templates, home, home_label)

    @app.get("/")
    async def start() -> RedirectResponse:
        return RedirectResponse(home, status_code=302)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"replica": replica, "data_hash": data_hash}

    return app, templates


def install_error_page(app: FastAPI, templates: Jinja2Templates, home: str, home_label: str) -> None:
    """Every HTTP error as an HTML page in the site's layout, with a link back to `home`."""

    @app.exception_handler(HTTPException)
    async def error_page(request: Request, exc: HTTPException) -> Response:
        title = HTTPStatus(exc.status_code).phrase
        unrouted = exc.status_code == 404 and exc.detail == title
        message = f"There is no page at {request.url.path}." if unrouted else exc.detail
        context = {"status": exc.status_code, "title": title, "message": message,
                   "home": home, "home_label": home_label}
        return templates.TemplateResponse(request, "error.html", context, status_code=exc.status_code)


def add_list_page(app: FastAPI, templates: Jinja2Templates, path: str, catalog: Any,
                  parse: Callable[..., ListQuery], select: Callable[[Any, ListQuery], list[int]],
                  noun: tuple[str, str], form: dict[str, Any]) -> None:
    """The site's list page at `path`, rendered from its `list.html` (which extends
    `_list_page.html`). `noun` is (one, many): "1 GPU matches", "2,824 GPUs match"; `form` holds
    what the filter form offers. A parameter the site cannot honour is a 400 page."""
    one, many = noun

    def matches(count: int) -> str:
        return f"{count:,} {one} matches" if count == 1 else f"{count:,} {many} match"

    async def list_page(request: Request) -> Response:
        try:
            query = parse(request.query_params, catalog)
        except BadQuery as exc:
            raise HTTPException(400, str(exc)) from None
        context = results_context(query, select(catalog, query), catalog.cells, matches)
        return templates.TemplateResponse(request, "list.html", {**context, **form, "noun": many})

    app.add_api_route(path, list_page, methods=["GET"], response_class=HTMLResponse)


def results_context(query: ListQuery, matched: list[int], cells: list[dict[str, str]],
                    matches: Callable[[int], str]) -> dict[str, Any]:
    """What `_results.html` shows for one page of `matched` (row indices into `cells`).

    `matches(n)` words the count ("2,824 GPUs match"); a page past the end is a 404.
    """
    size = query.PAGE_SIZE
    pages = page_count(len(matched), size)
    if query.page > pages:
        raise HTTPException(404, f"Page {query.page} does not exist: {matches(len(matched))}, "
                                 f"{pages} page{'s' if pages > 1 else ''} of {size}.")
    start = (query.page - 1) * size
    shown = matched[start:start + size]
    return {
        "query": query,
        "columns": list(query.COLUMNS.values()),
        "rows": [cells[index] for index in shown],
        "matches": matches(len(matched)),
        "total": f"{len(matched):,}",
        "first": f"{start + 1:,}",
        "last": f"{start + len(shown):,}",
        "pages": pages,
        "page_numbers": page_numbers(query.page, pages),
    }
