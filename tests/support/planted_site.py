"""The crashes site with one row planted that crash_query lacks: Texas's page shows a year 2014
(tests/domains/test_parity.py serves it as the crashes replica)."""
from __future__ import annotations

from fastapi import Request, Response

from armbench.domains.crashes.site.app import create_app as crashes_app

PLANTED_PAGE = "/states/texas"
PLANTED_ROW = b'<tr><th scope="row">2014</th>' + b"<td>1</td>" * 9 + b"</tr>\n"


def create_app():
    app = crashes_app()

    @app.middleware("http")
    async def plant(request: Request, call_next) -> Response:
        response = await call_next(request)
        if request.url.path != PLANTED_PAGE:
            return response
        body = b"".join([chunk async for chunk in response.body_iterator])
        headers = {name: value for name, value in response.headers.items() if name != "content-length"}
        return Response(body.replace(b"</tbody>", PLANTED_ROW + b"</tbody>", 1), response.status_code, headers)

    return app
