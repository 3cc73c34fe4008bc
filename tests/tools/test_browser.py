"""The browser session and tools against small pages served here (not the replicas).

One Chromium for the module; each test gets its own context. Every call is wrapped in a generous
asyncio.wait_for only so that a regression fails instead of hanging the suite. All tests are async
so that the module's event-loop mark applies to each without warnings.
"""
from __future__ import annotations

import asyncio
import os
import re
import signal
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
import pytest_asyncio

from armbench.errors import UserError
from armbench.tools import browser as browser_module
from armbench.tools import chromium_host
from armbench.tools.admission import TURNS_DIR_ENV, admitted, usable_cores
from armbench.tools.base import ToolInfraError
from armbench.tools.browser import Browser, PageView
from armbench.tools.browser_tools import MAX_SNAPSHOT_CHARS, browser_tools, observation
from armbench.tools.chromium_host import find_chromium

pytestmark = pytest.mark.asyncio(loop_scope="module")

LIVENESS_S = 30  # far above any step timeout used here
SHORT_STEP_S = 2.0

HOME = """<title>Home</title><h1>Catalog</h1>
<a href="/products">Products</a>
<a href="{other}/secret">Elsewhere</a>
<a href="/loop">Loop</a>
<a href="/redirect-out">Away</a>
<form action="/search"><input type="search" name="q" aria-label="Search"></form>
<select aria-label="Sort by"><option value="name">Name</option>
<option value="date">Release date</option></select>"""
PAGES = {
    "/products": '<title>Products</title><h1>Products</h1><a href="/">Home</a>',
    "/long": "<title>Long</title><ul>"
    + "".join(f"<li>Item {i}: a line of text that pads the snapshot</li>" for i in range(600))
    + "</ul>",
    # 5 MB in 100 long paragraphs: fast to load and read, 5 MB of snapshot.
    "/big": "<title>Big</title><h1>Big</h1>"
    + "".join(f"<p>{i} " + "lorem ipsum dolor sit amet " * 1900 + "</p>" for i in range(100)),
    # 45,000 elements: reading it takes several seconds, longer than the short step timeout.
    "/huge-dom": "<title>Huge</title><ul>"
    + "".join(f"<li>{i} lorem ipsum dolor sit amet</li>" for i in range(45_000))
    + "</ul>",
}


class Handler(BaseHTTPRequestHandler):
    server: Site

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        site, path = self.server, urlsplit(self.path).path
        site.hits.append(self.path)
        if path == "/hang":
            site.release.wait(60)
            return
        if path in ("/loop", "/redirect-out"):
            target = "/loop" if path == "/loop" else f"{site.other}/secret"
            self.send_response(302)
            self.send_header("Location", target)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if path == "/search":
            q = parse_qs(urlsplit(self.path).query).get("q", [""])[0]
            html = f"<title>Results for {q}</title><h1>Results for {q}</h1>"
        else:
            html = HOME.format(other=site.other) if path == "/" else PAGES.get(path, "<h1>x</h1>")
        body = html.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


class Site(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str):
        super().__init__((host, 0), Handler)
        self.hits: list[str] = []
        self.release = threading.Event()
        self.other = ""
        self.origin = f"http://{host}:{self.server_address[1]}"
        threading.Thread(target=self.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.release.set()
        self.shutdown()
        self.server_close()


@pytest.fixture(scope="module")
def sites():
    """The allowed site on 127.0.0.1 and a blocked one on 127.0.0.2 that records any request."""
    site, other = Site("127.0.0.1"), Site("127.0.0.2")
    site.other = other.origin
    yield site, other
    site.stop()
    other.stop()


@pytest.fixture(scope="module")
def site(sites):
    return sites[0]


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def browser():
    async with Browser() as started:
        yield started


async def tools_for(browser: Browser, site: Site, step_timeout_s: float = 10.0):
    session = await browser.new_session([site.origin], step_timeout_s=step_timeout_s)
    return session, {tool.name: tool for tool in browser_tools(session)}


@pytest_asyncio.fixture(loop_scope="module")
async def tools(browser, site):
    session, by_name = await tools_for(browser, site)
    yield by_name
    await session.close()


@pytest_asyncio.fixture(loop_scope="module")
async def short_tools(browser, site):
    session, by_name = await tools_for(browser, site, SHORT_STEP_S)
    yield by_name
    await session.close()


async def call(tools: dict, name: str, **arguments: Any) -> dict[str, Any]:
    outcome = await asyncio.wait_for(tools[name].invoke(arguments), LIVENESS_S)
    return outcome.result


async def error(tools: dict, name: str, **arguments: Any) -> dict[str, Any]:
    result = await call(tools, name, **arguments)
    assert "error" in result, result
    return result["error"]


def ref(snapshot: str, role: str, name: str) -> str:
    match = re.search(rf'- {role} "{re.escape(name)}".*?\[ref=(\w+)\]', snapshot)
    assert match, f"no {role} {name!r} in:\n{snapshot}"
    return match.group(1)


async def home(tools: dict, site: Site) -> dict[str, Any]:
    return await call(tools, "browser_navigate", url=f"{site.origin}/")


# ---- actions ---------------------------------------------------------------------------------


async def test_navigate_shows_headings_and_links_with_refs(tools, site):
    page = await home(tools, site)
    assert page["url"] == f"{site.origin}/"
    assert page["title"] == "Home"
    assert re.search(r'- heading "Catalog" \[level=1\] \[ref=\w+\]', page["snapshot"])
    assert re.search(r'- link "Products" \[ref=\w+\]', page["snapshot"])
    assert "/url: /products" in page["snapshot"]
    assert "truncated" not in page
    relative = await call(tools, "browser_navigate", url="/products?x=1")
    assert relative["url"] == f"{site.origin}/products?x=1"


async def test_snapshot_rereads_the_page_with_the_same_refs(tools, site):
    page = await home(tools, site)
    again = await call(tools, "browser_snapshot")
    assert again == page


async def test_click_a_link_changes_the_url(tools, site):
    page = await home(tools, site)
    clicked = await call(tools, "browser_click", ref=ref(page["snapshot"], "link", "Products"))
    assert clicked["url"] == f"{site.origin}/products"
    assert 'heading "Products"' in clicked["snapshot"]


async def test_type_into_a_search_box_with_and_without_submit(tools, site):
    page = await home(tools, site)
    box = ref(page["snapshot"], "searchbox", "Search")
    typed = await call(tools, "browser_type", ref=box, text="rtx")
    assert typed["url"] == f"{site.origin}/"
    assert re.search(r'searchbox "Search" .*: rtx', typed["snapshot"])
    submitted = await call(tools, "browser_type", ref=box, text="radeon", submit=True)
    assert submitted["url"] == f"{site.origin}/search?q=radeon"
    assert submitted["title"] == "Results for radeon"


@pytest.mark.slow
async def test_select_an_option_by_label_or_value(tools, site):
    page = await home(tools, site)
    sort = ref(page["snapshot"], "combobox", "Sort by")
    chosen = await call(tools, "browser_select", ref=sort, value="Release date")
    assert 'option "Release date" [selected]' in chosen["snapshot"]
    chosen = await call(tools, "browser_select", ref=sort, value="name")
    assert 'option "Name" [selected]' in chosen["snapshot"]
    missing = await error(tools, "browser_select", ref=sort, value="Price")
    assert missing["type"] == "no_such_option"
    assert missing["options"] == ["Name", "Release date"]
    link = ref(page["snapshot"], "link", "Products")
    assert (await error(tools, "browser_select", ref=link, value="x"))["type"] == "not_a_select"


async def test_back_returns_to_the_previous_page(tools, site):
    assert (await error(tools, "browser_back"))["type"] == "no_history"
    page = await home(tools, site)
    await call(tools, "browser_click", ref=ref(page["snapshot"], "link", "Products"))
    back = await call(tools, "browser_back")
    assert back["url"] == f"{site.origin}/"
    assert back["title"] == "Home"


async def test_a_bad_ref_is_named_with_what_to_do(tools, site):
    await home(tools, site)
    missing = await error(tools, "browser_click", ref="e99")
    assert missing["type"] == "no_such_ref"
    assert "no element [ref=e99] on this page; take a snapshot" in missing["message"]
    stale = await error(tools, "browser_click", ref="f9e1")  # a ref from an earlier page
    assert stale["type"] == "no_such_ref"
    assert (await error(tools, "browser_type", ref="the search box", text="x"))["type"] == "bad_ref"


async def test_a_link_copied_with_brackets_still_works(tools, site):
    page = await home(tools, site)
    products = ref(page["snapshot"], "link", "Products")
    clicked = await call(tools, "browser_click", ref=f"[ref={products}]")
    assert clicked["url"] == f"{site.origin}/products"


# ---- confinement -----------------------------------------------------------------------------


async def test_blocked_origins_are_refused_and_never_requested(tools, sites):
    site, other = sites
    for url in (f"{other.origin}/secret", "http://example.com/", "https://example.com/"):
        refused = await error(tools, "browser_navigate", url=url)
        assert refused["type"] == "blocked_url"
        assert "outside the sites this browser may visit" in refused["message"]
        assert site.origin in refused["message"]
    page = await home(tools, site)
    clicked = await error(tools, "browser_click", ref=ref(page["snapshot"], "link", "Elsewhere"))
    assert clicked["type"] == "blocked_url"
    assert "the page did not change" in clicked["message"]
    assert (await call(tools, "browser_snapshot"))["url"] == f"{site.origin}/"
    # Chromium does not route redirects; the dead proxy stops this one.
    redirected = await error(tools, "browser_navigate", url=f"{site.origin}/redirect-out")
    assert redirected["type"] == "blocked_url"
    assert other.origin in redirected["message"]
    assert other.hits == []


async def test_not_a_url_is_a_clear_error(tools):
    bad = await error(tools, "browser_navigate", url="products")
    assert bad["type"] == "bad_url"
    assert (await error(tools, "browser_navigate", url="file:///etc/passwd"))["type"] == "bad_url"


# ---- robustness ------------------------------------------------------------------------------


@pytest.mark.slow
async def test_a_hanging_page_times_out_and_the_tab_recovers(short_tools, site):
    await home(short_tools, site)
    timeout = await error(short_tools, "browser_navigate", url=f"{site.origin}/hang")
    assert timeout["type"] == "timeout"
    assert timeout["timeout_s"] == SHORT_STEP_S
    assert f"it was on {site.origin}/" in timeout["message"]
    assert (await home(short_tools, site))["title"] == "Home"


@pytest.mark.slow
async def test_a_page_too_big_to_read_in_time_times_out(short_tools, site):
    timeout = await error(short_tools, "browser_navigate", url=f"{site.origin}/huge-dom")
    assert timeout["type"] == "timeout"
    assert (await home(short_tools, site))["title"] == "Home"


@pytest.mark.slow
async def test_a_crashed_tab_is_replaced(tools, site):
    await home(tools, site)
    page = tools["browser_snapshot"].session.page
    devtools = await page.context.new_cdp_session(page)
    async with page.expect_event("crash"):
        crash = asyncio.create_task(devtools.send("Page.crash"))  # never answered
    crashed = await error(tools, "browser_snapshot")
    assert crashed["type"] == "page_crashed"
    assert f"it was on {site.origin}/" in crashed["message"]
    assert (await home(tools, site))["title"] == "Home"
    crash.cancel()


def chromium_browsers() -> set[int]:
    """The pids of the Chromium browser processes (not their renderers or helpers) of this process."""
    children: dict[int, list[int]] = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rpartition(")")[2].split()[1])
        except OSError:
            continue
        children.setdefault(parent, []).append(int(entry))
    descendants, todo = [], [os.getpid()]
    while todo:
        found = children.get(todo.pop(), [])
        descendants.extend(found)
        todo.extend(found)
    browsers, chromium = set(), find_chromium().encode()
    for pid in descendants:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
                arguments = cmdline.read().split(b"\0")
        except OSError:
            continue
        if arguments[0] == chromium and not any(argument.startswith(b"--type=") for argument in arguments):
            browsers.add(pid)
    return browsers


@pytest.mark.slow
async def test_a_wedged_browser_is_an_infra_error_and_lets_go_of_its_cores_turn(site, tmp_path, monkeypatch):
    """A browser that answers nothing (stopped here with SIGSTOP) fails the step with ToolInfraError,
    the harness's fault, within its timeouts, and the step does not keep its core's turn."""
    monkeypatch.setenv(TURNS_DIR_ENV, str(tmp_path))
    before = chromium_browsers()
    async with Browser() as browser:
        # Ours, and any this worker's earlier tests keep warm that was launched again meanwhile.
        wedged = chromium_browsers() - before
        assert wedged
        session, by_name = await tools_for(browser, site, SHORT_STEP_S)
        assert (await home(by_name, site))["title"] == "Home"
        # Short only for the wedged tab: opening the healthy session took 2.1 s under CI's load.
        monkeypatch.setattr(browser_module, "OPEN_TIMEOUT_S", 2.0)
        for pid in wedged:
            os.kill(pid, signal.SIGSTOP)
        try:
            with pytest.raises(ToolInfraError, match="did not open a new tab within 2 s"):
                await asyncio.wait_for(by_name["browser_navigate"].invoke({"url": f"{site.origin}/products"}),
                                       LIVENESS_S)
            every_turn = [admitted() for _ in range(usable_cores())]
            await asyncio.wait_for(asyncio.gather(*(turn.__aenter__() for turn in every_turn)), 5)
            for turn in every_turn:
                await turn.__aexit__(None, None, None)
        finally:
            for pid in wedged:
                os.kill(pid, signal.SIGCONT)
        await session.close()


async def test_a_5mb_page_gives_a_bounded_snapshot_with_a_notice(tools, site):
    page = await call(tools, "browser_navigate", url=f"{site.origin}/big")
    assert len(page["snapshot"]) == MAX_SNAPSHOT_CHARS
    assert page["truncated"] is True
    assert page["total_chars"] > 5_000_000
    assert f"offset={page['next_offset']}" in page["notice"]


async def test_a_redirect_loop_is_a_clear_error(tools, site):
    loop = await error(tools, "browser_navigate", url=f"{site.origin}/loop")
    assert loop["type"] == "navigation_failed"
    assert "redirects in a loop" in loop["message"]
    page = await home(tools, site)
    clicked = await error(tools, "browser_click", ref=ref(page["snapshot"], "link", "Loop"))
    assert clicked["type"] == "navigation_failed"
    assert "redirects in a loop" in clicked["message"]
    assert (await home(tools, site))["title"] == "Home"


async def test_snapshot_offset_pages_through_the_whole_snapshot(tools, site):
    first = await call(tools, "browser_navigate", url=f"{site.origin}/long")
    chunks, result = [first["snapshot"]], first
    while "next_offset" in result:
        assert result["snapshot"].endswith("\n")  # cut at a line end
        result = await call(tools, "browser_snapshot", offset=result["next_offset"])
        chunks.append(result["snapshot"])
    assert len(chunks) >= 3
    assert "".join(chunks).count("listitem") == 600
    assert len("".join(chunks)) == first["total_chars"]
    assert "that is the end" in result["notice"]
    past = await error(tools, "browser_snapshot", offset=first["total_chars"])
    assert past["type"] == "bad_offset"


# ---- without a browser -----------------------------------------------------------------------


async def test_observation_cuts_at_a_line_end_within_the_limit():
    lines = "\n".join(f"line {i:05d}" for i in range(3000))  # 11 characters a line
    result = observation(PageView("http://a:1/", "t" * 1000, lines))
    assert result["snapshot"].endswith("\n")
    assert MAX_SNAPSHOT_CHARS - 12 < result["next_offset"] <= MAX_SNAPSHOT_CHARS
    assert len(result["title"]) == 300
    assert "showing characters 0-" in result["notice"]


async def test_tools_have_the_playwright_mcp_names_and_strict_schemas():
    tools = browser_tools(session=None)
    assert [tool.name for tool in tools] == [
        "browser_navigate",
        "browser_snapshot",
        "browser_click",
        "browser_type",
        "browser_select",
        "browser_back",
    ]
    for tool in tools:
        schema = tool.schema()["function"]
        assert schema["parameters"].get("additionalProperties") is False
        assert "Example" in schema["description"]
    bad = await tools[1].invoke({"offset": -1})
    assert bad.result["error"]["type"] == "invalid_arguments"


async def test_no_chromium_is_a_user_error_saying_how_to_install(monkeypatch):
    monkeypatch.setattr(chromium_host, "CHROMIUM_CANDIDATES", ["/nonexistent/chromium"])
    monkeypatch.delenv("ARMBENCH_CHROMIUM", raising=False)
    with pytest.raises(UserError) as missing:
        find_chromium(bundled="/nonexistent/chrome")
    for advice in ("apt-get install chromium", "playwright install chromium", "ARMBENCH_CHROMIUM"):
        assert advice in str(missing.value)
    monkeypatch.setenv("ARMBENCH_CHROMIUM", "/nonexistent")
    with pytest.raises(UserError, match="ARMBENCH_CHROMIUM='/nonexistent' is not an executable"):
        find_chromium()


async def test_browser_start_without_chromium_is_a_user_error(monkeypatch):
    monkeypatch.setenv("ARMBENCH_CHROMIUM", "/nonexistent")
    with pytest.raises(UserError, match="apt-get install chromium"):
        await Browser().start()
