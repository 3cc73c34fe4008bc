"""Fuzz: http_get fetches only from its allowed origins, whatever URL or redirect it is given.

No socket is opened: httpx's AsyncClient gets a mock transport that records every request it is
asked to send and answers each with a page, or, at /redirect, with a redirect to a generated
Location. The URLs play the usual tricks on the allowed origin: other hosts and loopback spellings
(localhost, 127.1, 0x7f.1, decimal and octal IPv4, IPv6, a trailing dot, IDNA full stops,
full-width letters), userinfo@, backslashes, other schemes (file://, ftp://) and forms (scheme-
relative, no slashes), other ports (0, 65536, leading zeros, blanks), percent-encoding, control
characters and very long URLs; plus the allowed origin with junk spliced in anywhere.
"""
from __future__ import annotations

import asyncio

import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from armbench.tools.web_tools import HttpGetTool
from tests.fuzz.hostile import FUZZ, examples

EXAMPLES = examples(600)
REDIRECT_EXAMPLES = examples(300)
PORTS = (18080, 18081)
ORIGINS = [f"http://127.0.0.1:{port}" for port in PORTS]
ALLOWED = {("http", "127.0.0.1", port) for port in PORTS}
# What a refusal or a failed fetch may say; "tool_failure" (an exception the tool did not expect) is not here.
EXPECTED_ERRORS = {"origin_not_allowed", "redirect_not_allowed", "too_many_redirects", "fetch_failed", "timeout",
                   "invalid_arguments", "offset_out_of_range"}

SCHEMES = ["http://", "https://", "HTTP://", "hTtP://", "http:/", "http:", "http:\\\\", "//", "///", "", "file://",
           "ftp://", "gopher://", "ws://", "javascript:", "data:text/plain,", "http+unix://", " http://", "\thttp://"]
HOSTS = ["127.0.0.1", "localhost", "LOCALHOST", "localhost.", "127.0.0.1.", "127.1", "127.0.1", "0x7f.1",
         "0x7f000001", "2130706433", "017700000001", "0177.0.0.1", "0.0.0.0", "0", "127.0.0.2", "[::1]",
         "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[0:0:0:0:0:0:0:1]", "[::1%25lo]", "[127.0.0.1]", "127。0。0。1",
         "127．0．0．1", "ｌｏｃａｌｈｏｓｔ", "١٢٧.0.0.1", "%31%32%37.0.0.1", "127%2E0%2E0%2E1", "example.com",
         "127.0.0.1.nip.io", "xn--nxasmq6b", "ⓛⓞⓒⓐⓛⓗⓞⓢⓣ", "a" * 300, "", "@", "127.0.0.1\x00.evil.com"]
USERINFO = ["", "", "user@", "user:pass@", "127.0.0.1@", "127.0.0.1:18080@", "evil.com@", "@", ":@", "%40@",
            "a\\@", "user@evil.com@"]
PORT_PARTS = [":18080", ":18081", "", ":", ":80", ":443", ":0", ":65535", ":65536", ":-1", ":018080", ":18080 ",
              ": 18080", ":1_8080", ":１８０８０", ":18080:18080", ":99999999999999999999", ":0x46a0"]
AFTER = ["/", "", "/page", "/redirect", "?q=1", "#frag", "#@evil.com/", "\\@evil.com/", "/..%2F..%2Fetc/passwd",
         "/%00", "/\x00", "/\n", "/\r\nHost: evil.com", "/ /", "@evil.com/", ".evil.com/", "/" + "x" * 70_000]

assembled = st.tuples(*(st.sampled_from(part) for part in (SCHEMES, USERINFO, HOSTS, PORT_PARTS, AFTER))).map("".join)
spliced = st.tuples(st.sampled_from(ORIGINS), st.integers(0, 40), st.text(max_size=12)).map(
    lambda parts: parts[0][: parts[1]] + parts[2] + parts[0][parts[1]:] + "/")
urls = st.one_of(assembled, assembled, spliced, st.text(max_size=60))


class Transport:
    """Every request the tool sends: /redirect answers 302 to `location`, anything else a page."""

    def __init__(self):
        self.requested: list[httpx.URL] = []
        self.location = "/"

    def handle(self, request: httpx.Request) -> httpx.Response:
        self.requested.append(request.url)
        if request.url.path == "/redirect":
            return httpx.Response(302, headers={"Location": self.location})
        return httpx.Response(200, text="a page", headers={"Content-Type": "text/plain"})


@pytest.fixture
def transport(monkeypatch):
    recorder, real_client = Transport(), httpx.AsyncClient

    class MockedClient(real_client):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **{**kwargs, "transport": httpx.MockTransport(recorder.handle)})

    monkeypatch.setattr(httpx, "AsyncClient", MockedClient)
    return recorder


def origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return url.scheme, url.host, url.port or {"http": 80, "https": 443}.get(url.scheme)


def check_call(tool: HttpGetTool, transport: Transport, url: str) -> dict:
    """One call: every request went to an allowed origin; the outcome is a page or an expected error."""
    transport.requested.clear()
    outcome = asyncio.run(tool.invoke({"url": url}))
    stray = [str(sent) for sent in transport.requested if origin(sent) not in ALLOWED]
    assert not stray, f"{url!r} made requests to {stray}"
    if outcome.is_error:
        kind = outcome.result["error"]["type"]
        assert kind in EXPECTED_ERRORS, f"{url!r}: {outcome.result['error']}"
        if kind == "origin_not_allowed":
            assert not transport.requested, f"{url!r} was refused after a request"
    else:
        assert origin(httpx.URL(outcome.result["url"])) in ALLOWED
    return outcome.result


def test_http_get_requests_only_allowed_origins_whatever_the_url(transport):
    """Property: for 600 generated URLs, http_get sends requests only to its allowed origins
    (a refused URL sends none), and answers a page or one of its own errors, never a tool failure
    (an exception it did not expect)."""
    tool = HttpGetTool(ORIGINS)

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(urls)
    def check(url: str) -> None:
        check_call(tool, transport, url)

    check()


def test_http_get_follows_redirects_only_within_allowed_origins(transport):
    """Property: for 300 generated redirect targets (the same tricks, absolute and relative),
    a redirect from an allowed page is followed only when the target is on an allowed origin;
    otherwise it is refused without a request to it, never a tool failure."""
    tool = HttpGetTool(ORIGINS)
    # A Location header holds printable ASCII (httpx refuses to build any other); relative ones too.
    header_safe = st.one_of(urls, st.sampled_from(AFTER)).map(
        lambda url: "".join(c for c in url if " " <= c <= "~")[:8_000])

    @settings(FUZZ, max_examples=REDIRECT_EXAMPLES)
    @given(header_safe)
    def check(location: str) -> None:
        transport.location = location
        check_call(tool, transport, f"{ORIGINS[0]}/redirect")
        assert len(transport.requested) <= 6  # MAX_REDIRECTS + 1: a redirect loop stops

    check()
