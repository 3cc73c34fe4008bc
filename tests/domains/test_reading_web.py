"""The reading kit on the real web's frictions (`bench run --web`): what it reads from the GPU site
behind transient 503s, a consent page, a page cap and drifted chrome is what it reads from the
kind site; past a rate limit it waits as told; a stored script's own urlopen reads through it alike."""
from __future__ import annotations

import json
import re
import time
import urllib.request
from pathlib import Path

import pytest

from armbench.domains import DOMAINS, reading
from armbench.domains.gpus.site_reader import ENTITY_LINK
from armbench.questions import careful_call
from armbench.replicas.serve import load_reference
from armbench.replicas.web.frictions import Frictions
from armbench.types import RateLimit, ToolCall, TransientErrors, WebProfile
from armbench.web_profile import headers
from tests.support.loopback import serve

# Every friction that changes what a page holds; the cap at 3 of the list's 29 pages, so the kit
# reads it in parts (a manufacturer's GPUs, and within a large one, a year's).
ROUGH = WebProfile(name="rough", transient_errors=TransientErrors(probability=0.02), consent=True, page_cap=3,
                   chrome_bytes=2000, markup_drift=True)
THROTTLED = WebProfile(name="throttled", rate_limit=RateLimit(requests=4, window_s=1, retry_after_s=1))


class AsTheGateSends:
    """The app, each request carrying the run's web headers as the harness's gate adds them."""

    def __init__(self, app, profile: WebProfile, run_id: str) -> None:
        self.app = app
        self.sent = [(name.encode(), value.encode()) for name, value in headers(profile, run_id, "1").items()]

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            scope = {**scope, "headers": [*scope["headers"], *self.sent]}
        await self.app(scope, receive, send)


def gpu_site(profile: WebProfile, run_id: str):
    return serve(AsTheGateSends(Frictions(load_reference(DOMAINS["gpus"].app)()), profile, run_id))


@pytest.fixture(scope="module")
def kind_links() -> list[str]:
    with serve(load_reference(DOMAINS["gpus"].app)()) as base:
        return reading.list_links(base, "/gpus", ENTITY_LINK)


def test_a_capped_list_behind_a_consent_page_reads_as_on_the_kind_site(kind_links):
    with gpu_site(ROUGH, "gpus-design-01.browsing.r0") as base:
        rough = reading.list_links(base, "/gpus", ENTITY_LINK)
    assert len(kind_links) > 2000 and sorted(rough) == sorted(kind_links)


def test_pages_past_a_rate_limit_are_asked_again_after_its_retry_after(kind_links):
    with gpu_site(THROTTLED, "gpus-design-01.browsing.r0") as base:
        started = time.monotonic()
        pages = reading.fetch_pages(base, kind_links[:10]) + [reading.fetch(base + kind_links[10])]
        waited = time.monotonic() - started
    assert all(re.search(r"<h1>[^<]+</h1>", page) for page in pages) and waited >= 2  # 11 pages, 4 a second


@pytest.mark.parametrize("cap", [15, 3])
def test_without_a_filter_a_capped_list_is_read_from_both_ends_or_is_an_error_never_shorter(kind_links, cap):
    """A list up to twice what the site shows is read from its start and, sorted the other way,
    from its end, each GPU once; a longer one raises. (The first page without its form's selects.)"""
    with gpu_site(ROUGH.model_copy(update={"transient_errors": None, "page_cap": cap}), "r") as base:
        without_selects = re.sub(r"<select.*?</select>", "", reading.fetch(base + "/gpus"), flags=re.S)
        if cap * 100 * 2 < len(kind_links):
            with pytest.raises(RuntimeError, match=r"neither a filter of its form nor its two sort orders give them all"):
                reading.in_parts(base, "/gpus", without_selects)
            return
        pages = reading.in_parts(base, "/gpus", without_selects)
    links = [link for page in pages for link in re.findall(ENTITY_LINK, page)]
    assert sorted(links) == sorted(kind_links)


def test_a_stored_scripts_own_urlopen_reads_through_the_kit(monkeypatch):
    monkeypatch.setattr(urllib.request, "urlopen", urllib.request.urlopen)  # the prelude replaces it
    script = ("import json, urllib.request\n"
              "with urllib.request.urlopen(BASE + '/gpus?page=2', timeout=20) as reply:\n"
              "    print(json.dumps(reply.read().decode()))\n")
    call = careful_call(ToolCall(tool="python", args={"code": script}))
    assert call.args["code"].endswith(script)
    kit = Path(reading.__file__).read_text(encoding="utf-8")  # a derived solution's script carries it
    for untouched in ("print(1)", kit + script):
        assert careful_call(ToolCall(tool="python", args={"code": untouched})).args == {"code": untouched}
    with gpu_site(ROUGH.model_copy(update={"page_cap": None}), "gpus-design-02.browsing.r0") as base:
        namespace: dict = {"BASE": base}
        printed: list[str] = []
        namespace["print"] = printed.append
        exec(call.args["code"], namespace)
    page = json.loads(printed[0])
    assert "Showing 101–200 of" in page and "We value your privacy" not in page
