"""http_get: fetches from allowed origins only, redirects only within them, bodies bounded."""
from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from armbench.tools.web_tools import BODY_CHARS, HttpGetTool

BIG_BODY = "".join(str(i % 10) for i in range(2 * BODY_CHARS + 10_000))


class Site(BaseHTTPRequestHandler):
    other_origin = ""  # set by the fixture: where /to-other redirects
    hits: list[str] = []  # paths requested on the *other* server

    def do_GET(self):
        if self.server.label == "other":
            Site.hits.append(self.path)
            return self.reply(200, "text/plain", b"secret")
        if self.path.startswith("/to-"):
            target = {"/to-page": "/page", "/to-other": f"{self.other_origin}/secret"}
            return self.redirect(target.get(self.path, self.path))
        pages = {
            "/page": ("text/html; charset=utf-8", "<html><title>GPUs</title>é</html>".encode()),
            "/big": ("text/plain", BIG_BODY.encode()),
            "/image": ("image/png", b"\x89PNG\r\n\x1a\n" + bytes(200)),
        }
        if self.path == "/trickle":  # a byte a second: every read is quick, the body never ends in time
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", "60")
            self.end_headers()
            for _ in range(60):
                try:
                    self.wfile.write(b".")
                    self.wfile.flush()
                except OSError:  # the client gave up, as it should: end quietly, or the server's
                    return None  # thread prints a traceback into a later test's captured output
                time.sleep(1)
            return None
        if self.path not in pages:
            return self.reply(404, "text/plain", b"no such page")
        self.reply(200, *pages[self.path])

    def redirect(self, location: str):
        self.send_response(302)
        self.send_header("Location", location)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def reply(self, status: int, content_type: str, body: bytes):
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start(label: str) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Site)
    server.label = label
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def origins():
    site, other = start("site"), start("other")
    urls = [f"http://127.0.0.1:{server.server_address[1]}" for server in (site, other)]
    Site.other_origin = urls[1]
    yield urls
    for server in (site, other):
        server.shutdown()
        server.server_close()


@pytest.fixture
def tool(origins):
    Site.hits.clear()
    return HttpGetTool([origins[0] + "/"])


async def test_fetches_a_page_on_an_allowed_origin(tool, origins):
    outcome = await tool.invoke({"url": f"{origins[0]}/page"})
    assert outcome.result == {
        "url": f"{origins[0]}/page",
        "status": 200,
        "content_type": "text/html; charset=utf-8",
        "body": "<html><title>GPUs</title>é</html>",
        "truncated": False,
    }


@pytest.mark.parametrize(
    "url",
    [
        "{other}/secret",
        "http://localhost:{port}/page",
        "https://127.0.0.1:{port}/page",
        "http://127.0.0.1:{port}@example.com/",
        "https://example.com/",
        "file:///etc/passwd",
        "/page",
        "not a url at all",
    ],
)
async def test_other_origins_are_refused_without_a_request(tool, origins, url):
    port = origins[0].rsplit(":", 1)[1]
    outcome = await tool.invoke({"url": url.format(other=origins[1], port=port)})
    assert outcome.is_error
    assert outcome.result["error"]["type"] == "origin_not_allowed"
    assert outcome.result["error"]["allowed_origins"] == [origins[0]]
    assert origins[0] in outcome.result["error"]["message"]
    assert Site.hits == []


async def test_follows_redirects_within_the_allowed_origin(tool, origins):
    outcome = await tool.invoke({"url": f"{origins[0]}/to-page"})
    assert outcome.result["url"] == f"{origins[0]}/page" and outcome.result["status"] == 200


async def test_a_redirect_out_of_the_allowed_origins_is_refused(tool, origins):
    outcome = await tool.invoke({"url": f"{origins[0]}/to-other"})
    assert outcome.result["error"]["type"] == "redirect_not_allowed"
    assert Site.hits == []


async def test_redirect_loops_stop(tool, origins):
    outcome = await tool.invoke({"url": f"{origins[0]}/to-loop"})
    assert outcome.result["error"]["type"] == "too_many_redirects"


async def test_the_body_is_bounded_and_read_on_with_offset(tool, origins):
    url = f"{origins[0]}/big"
    first = (await tool.invoke({"url": url})).result
    assert first["truncated"] and first["body"] == BIG_BODY[:BODY_CHARS]
    assert f"offset={BODY_CHARS}" in first["notice"]
    last = (await tool.invoke({"url": url, "offset": 2 * BODY_CHARS})).result
    assert last["body"] == BIG_BODY[2 * BODY_CHARS :] and not last["truncated"]
    assert "notice" not in last
    past = await tool.invoke({"url": url, "offset": len(BIG_BODY)})
    assert past.result["error"]["type"] == "offset_out_of_range"


async def test_error_statuses_and_binary_bodies_come_back_as_results(tool, origins):
    missing = (await tool.invoke({"url": f"{origins[0]}/nope"})).result
    assert (missing["status"], missing["body"]) == (404, "no such page")
    image = (await tool.invoke({"url": f"{origins[0]}/image"})).result
    assert image["body"] == "" and image["notice"] == "binary content, not shown"


def test_the_description_names_the_allowed_origins(tool, origins):
    assert f"Allowed origins: {origins[0]}." in tool.description
    assert f'{{"url": "{origins[0]}/", "offset": 0}}' in tool.description


@pytest.mark.slow
async def test_a_body_that_trickles_in_ends_at_the_call_deadline(origins):
    tool = HttpGetTool([origins[0]], deadline_s=2)
    started = time.monotonic()
    outcome = await tool.invoke({"url": f"{origins[0]}/trickle"})
    assert outcome.is_error and outcome.result["error"]["type"] == "timeout"
    assert "no complete answer within 2 s" in outcome.result["error"]["message"]
    assert time.monotonic() - started < 3
