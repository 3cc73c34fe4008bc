"""The frictions of a web profile (armbench/web_profile.py), applied to a replica app: `Frictions(app)`.

Every replica app is served inside it. A request without the profile header is the kind web and
passes straight through; one with it meets the profile's frictions, in this order: its latency,
the run's rate limit (a 429 is not counted against it), a transient 503, then, until the run has
accepted cookies, an interstitial in place of any HTML page, and past the page cap a "refine your
search" page in place of an HTML list page. Every HTML page the run gets is then dressed in the
profile's chrome and markup drift (page_chrome.py). What the middleware keeps per run
(its requests in the window, each URL's count and last answer, its consent) is bounded: the
least recently seen runs are forgotten first, and a run's URL counts stop growing at
MAX_URLS_PER_RUN. A run's key is `<run key>.<attempt>`: its draws follow the run key, its state the
attempt, so a run played again starts afresh and meets the same draws.
"""
from __future__ import annotations

import asyncio
import hashlib
import html
import math
import time
from collections import Counter, OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from armbench.replicas.web.listing import whole_number
from armbench.replicas.web.page_chrome import dressed
from armbench.types import WebProfile
from armbench.web_profile import WEB_PROFILE_HEADER, WEB_RUN_HEADER, decoded

CONSENT_PATH = "/cookies/accept"
MAX_RUNS = 4096  # runs remembered at once (a run set's concurrency is far below)
MAX_URLS_PER_RUN = 100_000  # requests a run's draws count apart; beyond, a new one counts as first
MAX_PROFILES = 64
PROFILE_NAME, RUN_NAME = WEB_PROFILE_HEADER.encode(), WEB_RUN_HEADER.encode()  # as ASGI gives them


@dataclass
class RunState:
    requests: deque[float] = field(default_factory=deque)  # when its counted requests came, within the window
    seen: Counter[str] = field(default_factory=Counter)  # requests per URL so far
    failed: set[str] = field(default_factory=set)  # URLs whose last answer was a transient error
    consented: bool = False


class Frictions:
    """The ASGI `app`, with the frictions of the web profile each request carries."""

    def __init__(self, app: Any, clock: Any = time.monotonic) -> None:
        self.app = app
        self.clock = clock
        self.runs: OrderedDict[str, RunState] = OrderedDict()
        self.profiles: dict[str, WebProfile] = {}

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        encoded = key = None  # every replica request passes here: only the two names are read
        for name, value in scope.get("headers", ()):
            if name == PROFILE_NAME:
                encoded = value.decode("latin-1")
            elif name == RUN_NAME:
                key = value.decode("latin-1")
        if encoded is None:
            await self.app(scope, receive, send)
            return
        try:
            profile = self.profile(encoded)
        except ValueError as error:
            await answer(send, 400, str(error))
            return
        if not key:
            await answer(send, 400, f"{WEB_PROFILE_HEADER} without {WEB_RUN_HEADER}")
            return
        # The draws follow the run (the key's first part), the state its attempt (the whole key).
        await self.serve(profile, key.split(".")[0], self.run(key), scope, receive, send)

    async def serve(self, profile: WebProfile, key: str, run: RunState, scope: dict, receive: Any, send: Any) -> None:
        if profile.chrome_bytes or profile.markup_drift:  # every HTML page of the run, its replacements too
            send = html_rewritten(send, lambda page: dressed(page, profile, key))
        url = as_sent(scope)
        request = f"{scope['method']} {url}"
        nth = run.seen[request]  # counted once served: a refused request moves no draw
        if profile.latency is not None:
            await asyncio.sleep(profile.latency.seconds(draw(key, "latency", request, nth), profile.latency_scale))
        if profile.rate_limit is not None:
            limit, now = profile.rate_limit, self.clock()
            while run.requests and run.requests[0] <= now - limit.window_s:
                run.requests.popleft()
            if len(run.requests) >= limit.requests:
                wait = max(limit.retry_after_s, math.ceil(run.requests[0] + limit.window_s - now))
                await answer(send, 429, f"Too many requests: at most {limit.requests} per {limit.window_s:g} s. "
                             f"Retry after {wait} s.", {"retry-after": str(wait)})
                return
            run.requests.append(now)
        if len(run.seen) < MAX_URLS_PER_RUN or request in run.seen:
            run.seen[request] += 1
        if profile.transient_errors is not None:
            if request not in run.failed and draw(key, "transient", request, nth) < profile.transient_errors.probability:
                run.failed.add(request)
                await answer(send, 503, "Service temporarily unavailable. Please retry.", {"retry-after": "1"})
                return
            run.failed.discard(request)
        if profile.consent and scope["path"] == CONSENT_PATH:  # accepted once more, too: no 404
            run.consented = True
            await answer(send, 303, "Cookies accepted.", {"location": next_page(scope)})
            return
        if profile.consent and not run.consented:
            await self.app(scope, receive, html_replaced(send, consent_page(url)))
            return
        if profile.page_cap is not None and page_number(scope) > profile.page_cap:
            await self.app(scope, receive, html_replaced(send, refine_page(profile.page_cap)))
            return
        await self.app(scope, receive, send)

    def profile(self, encoded: str) -> WebProfile:
        if encoded not in self.profiles:
            if len(self.profiles) >= MAX_PROFILES:  # a run set has one: a handful, in practice
                self.profiles.clear()
            self.profiles[encoded] = decoded(encoded)
        return self.profiles[encoded]

    def run(self, key: str) -> RunState:
        state = self.runs.pop(key, None) or RunState()
        self.runs[key] = state
        while len(self.runs) > MAX_RUNS:
            self.runs.popitem(last=False)
        return state


def draw(key: str, what: str, request: str, nth: int) -> float:
    """A number in (0, 1) fixed by the run, the friction, the request and its repeat."""
    digest = hashlib.sha256(f"{key}\0{what}\0{request}\0{nth}".encode()).digest()
    return (int.from_bytes(digest[:8], "big") + 0.5) / 2**64


def next_page(scope: dict) -> str:
    """Where accepting leads: the `next` page asked for if it is a path on this site (no scheme, no
    host, no backslash or control character a browser would read as another site), quoted; else /."""
    wanted = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("next", ["/"])[-1]
    parts = urlsplit(wanted)
    on_site = (wanted.startswith("/") and not parts.scheme and not parts.netloc and "\\" not in wanted
               and not any(ord(char) < 0x20 or ord(char) == 0x7F for char in wanted))
    return quote(wanted, safe="/?&=%:;,+@!$'()*~.-_") if on_site and not wanted.startswith("//") else "/"


def as_sent(scope: dict) -> str:
    """The request's path and query as the client sent them (still percent-encoded)."""
    path = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
    return path + ("?" + scope["query_string"].decode("latin-1") if scope.get("query_string") else "")


def page_number(scope: dict) -> int:
    """The list page a request asks for, read as the sites read it (the last `page` parameter,
    stripped); 1 when it names none or no number."""
    asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("page", ["1"])[-1]
    return whole_number(asked.strip()) or 1


def html_replaced(send: Any, page: str) -> Any:
    """`send`, but an HTML reply is replaced by `page` (other replies, an API's JSON, pass)."""
    replaced = False

    async def sending(message: dict) -> None:
        nonlocal replaced
        if message["type"] == "http.response.start":
            content_type = dict(message.get("headers", ())).get(b"content-type", b"")
            replaced = content_type.startswith(b"text/html")
            if replaced:
                await answer(send, 200, "", page=page)
                return
        if not replaced:
            await send(message)

    return sending


def html_rewritten(send: Any, rewrite: Any) -> Any:
    """`send`, but an HTML reply's body is gathered and sent as `rewrite(body)` (others pass)."""
    start: dict | None = None
    parts: list[bytes] = []

    async def sending(message: dict) -> None:
        nonlocal start
        if message["type"] == "http.response.start":
            if dict(message.get("headers", ())).get(b"content-type", b"").startswith(b"text/html"):
                start = message
                return
        elif start is not None and message["type"] == "http.response.body":
            parts.append(message.get("body", b""))
            if message.get("more_body"):
                return
            body = rewrite(b"".join(parts).decode("utf-8", "replace")).encode()
            headers = [(name, value) for name, value in start.get("headers", ()) if name != b"content-length"]
            await send({**start, "headers": [*headers, (b"content-length", str(len(body)).encode())]})
            await send({"type": "http.response.body", "body": body})
            return
        await send(message)

    return sending


def refine_page(cap: int) -> str:
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Refine your search</title></head>"
        "<body><main><h1>Refine your search</h1>"
        f"<p>Only the first {cap} pages of results are shown. Use the filters to narrow your search.</p>"
        "</main></body></html>"
    )


def consent_page(url: str) -> str:
    return (
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Before you continue</title></head>"
        "<body><main><h1>We value your privacy</h1>"
        "<p>We use cookies to run this site and to measure how it is used. Accept to continue to the page "
        "you asked for.</p>"
        f"<form action=\"{CONSENT_PATH}\" method=\"get\"><input type=\"hidden\" name=\"next\" "
        f"value=\"{html.escape(url)}\"><button type=\"submit\">Accept all cookies</button></form>"
        "</main></body></html>"
    )


async def answer(send: Any, status: int, text: str, headers: dict[str, str] | None = None,
                 page: str | None = None) -> None:
    """A whole reply: `page` as HTML, or else `text` as plain text."""
    body = (page if page is not None else text).encode()
    kind = b"text/html; charset=utf-8" if page is not None else b"text/plain; charset=utf-8"
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", kind), (b"content-length", str(len(body)).encode()),
        *[(name.encode(), value.encode()) for name, value in (headers or {}).items()]]})
    await send({"type": "http.response.body", "body": body})
