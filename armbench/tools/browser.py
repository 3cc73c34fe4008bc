"""The Playwright session behind the browser tools: one Chromium per run set (or one per process,
kept between run sets, chromium_host.py), one context per run.

Safety and liveness, each learnt the hard way against Chromium 1.65:
- Only the run's allowed origins are reachable. `context.route` refuses everything else before
  any request is made, but Chromium follows redirects without routing them, so each context also
  has a proxy that is a bound, never-listening local port: anything not on the bypass list (the
  allowed host:port pairs) fails to connect instead of reaching the network or another port.
- Every step (action + settle + snapshot) runs under one deadline. Playwright cannot cancel work
  inside the page (a snapshot of a huge DOM, a busy script) and a timed-out or failed navigation
  leaves the tab in a state later navigations trip over, so after a timeout or a failed navigation
  the tab is replaced by a fresh one and the model is told so.
- A navigation to a blocked origin from a click is answered with 204 No Content, which leaves the
  page where it was (aborting it would show a browser error page instead).
- Chromium's work is CPU work: a step waits for a free core (admission.py) before its deadline
  starts, and the wait, and a step stopped by its deadline, go to the call's meter (call_usage.py).
"""
from __future__ import annotations

import asyncio
import contextlib
import re
import socket
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urljoin, urlsplit

from playwright.async_api import BrowserContext, Locator, Page, Request, Route
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeoutError

from armbench.errors import UserError, first_line
from armbench.tools.admission import admitted
from armbench.tools.base import ToolError, ToolInfraError
from armbench.tools.call_usage import charge
from armbench.tools.chromium_host import KEPT_CHROMIUM, LAUNCH_ARGS, ChromiumHost

DEFAULT_STEP_TIMEOUT_S = 10.0
CLOSE_TIMEOUT_S = 5.0
# A browser that cannot open a context or a tab in this long is wedged (a stopped Chromium never
# answers): the harness's fault, never the agent's, and a step must not hold its core's turn while
# it waits (the turns are the machine's: every process would wait behind it).
OPEN_TIMEOUT_S = 30.0
T = TypeVar("T")
REF_PATTERN = re.compile(r"(?:f\d+)?e\d+")
NET_ERROR = re.compile(r"net::(ERR_[A-Z_]+)(?: at (\S+))?")
NET_ERROR_MEANING = {
    "ERR_TOO_MANY_REDIRECTS": "it redirects in a loop",
    "ERR_CONNECTION_REFUSED": "nothing is listening there",
    "ERR_EMPTY_RESPONSE": "the server closed the connection without answering",
}
# The dead proxy refuses it: a redirect (or anything unrouted) toward a blocked origin.
BLOCKED_NET_ERROR = "ERR_PROXY_CONNECTION_FAILED"


def origin_of(url: str) -> str | None:
    """`scheme://host:port` with the port spelled out; None for anything but http(s)."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{parts.scheme}://{host}:{port}"


@dataclass(frozen=True)
class PageView:
    """What the model sees after a step: the full snapshot; the tools bound it."""

    url: str
    title: str
    snapshot: str


class Browser:
    """Chromium for one run set: `async with Browser() as browser:`, launched on this loop and
    stopped with it; with `warm`, the one this process keeps between run sets (chromium_host.py),
    asked for at each run's session, so a run set outlives a kept Chromium that died."""

    def __init__(self, warm: bool = False) -> None:
        self.warm = warm
        self._own: ChromiumHost | None = None  # launched for this run set (not warm)
        self._sessions: weakref.WeakSet[BrowserSession] = weakref.WeakSet()  # closed with this Browser
        self._dead_port: socket.socket | None = None

    async def start(self) -> Browser:
        """Raises UserError when no Chromium is found or it does not start."""
        if self.warm:
            await asyncio.to_thread(KEPT_CHROMIUM.get, LAUNCH_ARGS)  # launched now, not in a run's time
        else:
            self._own = await ChromiumHost.launch(LAUNCH_ARGS)
        # Bound but never listening: a connection to it is refused at once.
        self._dead_port = socket.socket()
        self._dead_port.bind(("127.0.0.1", 0))
        return self

    async def close(self) -> None:
        """Closes the sessions its runs left open, and its own Chromium."""
        await asyncio.gather(*(session.close() for session in list(self._sessions)))
        if self._own is not None:
            await self._own.stop()
        if self._dead_port is not None:
            self._dead_port.close()
        self._own = self._dead_port = None

    async def __aenter__(self) -> Browser:
        return await self.start()

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def new_session(
        self, allowed_origins: list[str], step_timeout_s: float = DEFAULT_STEP_TIMEOUT_S,
        headers: dict[str, str] | None = None,
    ) -> BrowserSession:
        """A fresh context (no cookies, cache or history from other runs) for one run, whose
        requests carry `headers` (the run's web profile, armbench/web_profile.py)."""
        if self._dead_port is None:
            raise RuntimeError("Browser.start() first")
        allowed = []
        for url in allowed_origins:
            origin = origin_of(url)
            if origin is None:
                raise ValueError(f"not an http(s) origin: {url!r}")
            allowed.append(origin)
        try:
            host = self._own or await asyncio.to_thread(KEPT_CHROMIUM.get, LAUNCH_ARGS)
            return await host.run(self._open_session(host, allowed, step_timeout_s, headers))
        except (UserError, PlaywrightError) as error:  # a kept Chromium that could not be launched again
            raise ToolInfraError(f"the browser could not open a page for this run: {first_line(error)}") from None

    async def _open_session(self, host: ChromiumHost, allowed: list[str], step_timeout_s: float,
                            headers: dict[str, str] | None) -> BrowserSession:
        """On the host's loop, so that a session its run stopped waiting for is still closed with this Browser."""
        assert self._dead_port is not None
        context = await opening("a browser context", host.browser.new_context(
            service_workers="block",  # a service worker's requests would bypass routing
            accept_downloads=False,
            extra_http_headers=headers or None,
            proxy={
                "server": f"http://127.0.0.1:{self._dead_port.getsockname()[1]}",
                "bypass": ",".join(origin.split("://")[1] for origin in allowed),
            },
        ))
        session = BrowserSession(host, context, allowed, step_timeout_s)
        self._sessions.add(session)
        try:
            await session.open()
        except BaseException:
            await session.close()
            raise
        return session


async def opening(what: str, opened: Awaitable[T]) -> T:
    """`opened`, or ToolInfraError when the browser does not give it within OPEN_TIMEOUT_S."""
    try:
        return await asyncio.wait_for(opened, OPEN_TIMEOUT_S)
    except TimeoutError:
        raise ToolInfraError(f"the browser did not open {what} within {OPEN_TIMEOUT_S:g} s") from None


class BrowserSession:
    """One run's tab. Every public method is one step: it finishes within `step_timeout_s` or
    raises ToolError("timeout"), and returns the page as it is afterwards. Await steps one at a
    time (the agent loop runs tool calls in order)."""

    def __init__(self, host: ChromiumHost, context: BrowserContext, allowed_origins: list[str],
                 step_timeout_s: float):
        self.host = host  # each step runs on its loop
        self.allowed_origins = allowed_origins
        self.step_timeout_s = step_timeout_s
        self._context = context
        self._page: Page | None = None
        self._blocked: list[str] = []  # main-frame navigations refused during this step
        self._failed: list[tuple[str, str]] = []  # (url, net error) of failed main-frame loads
        self._crashed = False  # the renderer died (out of memory, say); only a new tab helps
        self._closed = False

    async def open(self) -> None:
        await self.host.run(self._open())

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        with contextlib.suppress(ToolInfraError):  # its Chromium was stopped, and the context with it
            await asyncio.shield(self.host.run(self._close()))  # finished even if its run is cancelled

    async def _open(self) -> None:
        self._context.set_default_timeout(self.step_timeout_s * 1000)
        self._context.set_default_navigation_timeout(self.step_timeout_s * 1000)
        await self._context.route("**/*", self._route)
        await self._new_tab()

    async def _close(self) -> None:
        with contextlib.suppress(PlaywrightError, TimeoutError):
            await asyncio.wait_for(self._context.close(), CLOSE_TIMEOUT_S)

    async def __aenter__(self) -> BrowserSession:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    @property
    def page(self) -> Page:
        assert self._page is not None, "BrowserSession.open() first"
        return self._page

    # ---- the steps ---------------------------------------------------------------------------

    async def navigate(self, url: str) -> PageView:
        target = self._resolve(url)
        return await self._step(
            f"loading {target}", lambda: self.page.goto(target, wait_until="domcontentloaded")
        )

    async def snapshot(self) -> PageView:
        return await self._step("reading the page", None)

    async def click(self, ref: str) -> PageView:
        async def act() -> None:
            await (await self._element(ref)).click()

        return await self._step(f"clicking [ref={ref}]", act)

    async def type(self, ref: str, text: str, submit: bool = False) -> PageView:
        async def act() -> None:
            element = await self._element(ref)
            await element.fill(text)
            if submit:
                await element.press("Enter")

        return await self._step(f"typing into [ref={ref}]", act)

    async def select(self, ref: str, value: str) -> PageView:
        async def act() -> None:
            element = await self._element(ref)
            await element.select_option(value=await option_value(element, ref, value))

        return await self._step(f"selecting in [ref={ref}]", act)

    async def back(self) -> PageView:
        async def act() -> None:
            before = self.page.url
            response = await self.page.go_back(wait_until="domcontentloaded")
            if response is None and self.page.url == before:
                raise ToolError("no_history", "there is no earlier page in this tab")

        return await self._step("going back", act)

    # ---- machinery ---------------------------------------------------------------------------

    async def _step(self, what: str, action: Callable[[], Awaitable[object]] | None) -> PageView:
        async with admitted():
            return await self.host.run(self._admitted_step(what, action))

    async def _admitted_step(self, what: str, action: Callable[[], Awaitable[object]] | None) -> PageView:
        self._blocked.clear()
        self._failed.clear()
        last_url = self.page.url
        if self._crashed:
            raise await self._crash_error(last_url)
        try:
            async with asyncio.timeout(self.step_timeout_s):
                if action is not None:
                    await action()
                    await self.page.wait_for_load_state("domcontentloaded")
                if not (self._blocked or self._failed):
                    title, snapshot = await asyncio.gather(
                        self.page.title(), self.page.aria_snapshot(mode="ai")
                    )
                    return PageView(self.page.url, title, snapshot)
        except (TimeoutError, PlaywrightTimeoutError):
            charge(limit="step_timeout")
            await self._new_tab()
            raise ToolError(
                "timeout",
                f"{what} did not finish within {self.step_timeout_s:g} s: the page hangs or is "
                f"too large to read. The tab was reset to a blank page{was_on(last_url)}; "
                "navigate to continue",
                timeout_s=self.step_timeout_s,
            ) from None
        except PlaywrightError as error:
            if not await self.host.answers():
                raise ToolInfraError(f"the browser died while {what}: {first_line(error)}") from None
            if self._crashed:
                raise await self._crash_error(last_url) from None
            code = NET_ERROR.search(error.message)
            if not (code or self._failed):
                raise ToolError("action_failed", f"{what} failed: {first_line(error)}") from None
            if not self._failed:
                self._failed.append((code.group(2) or "the page", code.group(1)))
        raise await self._navigation_error(last_url)

    async def _navigation_error(self, last_url: str) -> ToolError:
        """A refused navigation leaves the page as it was; a failed one replaces the tab."""
        if self._blocked:
            return self._blocked_error(self._blocked[0], "the page did not change")
        await self._new_tab()
        url, net_error = self._failed[0]
        reset = f"the tab was reset to a blank page{was_on(last_url)}"
        if net_error == BLOCKED_NET_ERROR:
            return self._blocked_error(url, f"the page led there; {reset}")
        meaning = NET_ERROR_MEANING.get(net_error, "the browser could not load it")
        return ToolError(
            "navigation_failed", f"{url} could not be loaded: {meaning} ({net_error}); {reset}"
        )

    async def _crash_error(self, last_url: str) -> ToolError:
        await self._new_tab()
        return ToolError(
            "page_crashed",
            f"the tab crashed (the page may be too large); it was reset to a blank "
            f"page{was_on(last_url)}; navigate to continue",
        )

    def _blocked_error(self, url: str, consequence: str) -> ToolError:
        return ToolError(
            "blocked_url",
            f"{url} is outside the sites this browser may visit "
            f"({', '.join(self.allowed_origins)}); it was not requested and {consequence}",
        )

    def _resolve(self, url: str) -> str:
        """An absolute allowed URL; a relative one is taken relative to the current page."""
        url = url.strip()
        current = self.page.url
        target = urljoin(current, url) if origin_of(current) else url
        if origin_of(target) is None:
            raise ToolError(
                "bad_url",
                f"{url!r} is not a full http(s) URL such as http://host:port/path "
                f"(this browser may visit {', '.join(self.allowed_origins)})",
            )
        if origin_of(target) not in self.allowed_origins:
            raise self._blocked_error(target, "the page did not change")
        return target

    async def _element(self, ref: str) -> Locator:
        """The element a snapshot ref names, or a ToolError the model can act on."""
        ref = ref.strip().removeprefix("[").removesuffix("]").removeprefix("ref=")
        if not REF_PATTERN.fullmatch(ref):
            raise ToolError(
                "bad_ref",
                f"{ref!r} is not an element ref; refs look like e12 or f1e12: copy one from "
                "the latest snapshot",
            )
        element = self.page.locator(f"aria-ref={ref}")
        try:
            found = await element.count()
        except PlaywrightError:  # a ref from an earlier page ("Invalid frame")
            found = 0
        if not found:
            raise ToolError(
                "no_such_ref",
                f"no element [ref={ref}] on this page; take a snapshot (browser_snapshot) and "
                "use a ref from it",
            )
        return element

    async def _new_tab(self) -> None:
        """Open a fresh tab and close the old one, which may be stuck."""
        old, self._page = self._page, await opening("a new tab", self._context.new_page())
        self._crashed = False
        self._page.on("requestfailed", self._on_request_failed)
        self._page.on("crash", self._on_crash)
        if old is not None:
            with contextlib.suppress(PlaywrightError, TimeoutError):
                await asyncio.wait_for(old.close(run_before_unload=False), CLOSE_TIMEOUT_S)

    def _is_main_navigation(self, request: Request) -> bool:
        return (
            request.is_navigation_request()
            and self._page is not None
            and request.frame == self._page.main_frame
        )

    def _on_crash(self, page: Page) -> None:
        self._crashed = self._crashed or page is self._page

    def _on_request_failed(self, request: Request) -> None:
        code = NET_ERROR.search(request.failure or "")
        # ERR_ABORTED is a navigation superseded by another one (or a download): not a failure.
        if code and code.group(1) != "ERR_ABORTED" and self._is_main_navigation(request):
            self._failed.append((request.url, code.group(1)))

    async def _route(self, route: Route) -> None:
        request = route.request
        with contextlib.suppress(PlaywrightError):  # the tab may close while a request waits
            if origin_of(request.url) in self.allowed_origins:
                await route.continue_()
            elif request.is_navigation_request():
                if self._is_main_navigation(request):
                    self._blocked.append(request.url)
                await route.fulfill(status=204)
            else:
                await route.abort("blockedbyclient")


async def option_value(select: Locator, ref: str, wanted: str) -> str:
    """The value of the <select>'s option whose value or label is `wanted` (then ignoring case).

    Checked here because Playwright would wait out the whole timeout for a missing option."""
    options = await select.evaluate(
        "el => el instanceof HTMLSelectElement"
        " ? [...el.options].map(o => [o.value, o.label]) : null"
    )
    if options is None:
        raise ToolError("not_a_select", f"[ref={ref}] is not a <select> element")
    for matches in (str.__eq__, lambda a, b: a.casefold() == b.casefold()):
        for value, label in options:
            if matches(value, wanted) or matches(label, wanted):
                return value
    labels = [label for _, label in options]
    raise ToolError(
        "no_such_option",
        f"[ref={ref}] has no option {wanted!r}",
        options=labels[:50],
        **({"options_shown": f"50 of {len(labels)}"} if len(labels) > 50 else {}),
    )


def was_on(url: str) -> str:
    return f" (it was on {url})" if origin_of(url) else ""

