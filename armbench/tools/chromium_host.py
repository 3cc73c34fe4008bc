"""Where a run set's Playwright and Chromium live: a `ChromiumHost`, on the run set's own event loop,
or the one this process keeps between run sets on a thread of its own (`KEPT_CHROMIUM`).

Playwright's objects belong to the event loop that started its driver, a Node.js process that costs
about 0.4 s of CPU to start, and launching Chromium costs about as much again. Each run set runs on
a loop of its own (`asyncio.run`, or a test's loop). A process that runs one run set (`bench run`)
launches both on that loop and stops them with it. A process that runs many (a notebook, the test
suite, an inspect eval, a Ray actor: ARMBENCH_KEEP_WARM=1) keeps one host on a thread and loop of
its own, and each run set's browser steps run there (`await host.run(step)`): the driver and
Chromium start once per process, not once per run set. Each run still gets a fresh browser context.

A kept Chromium that died (or was killed) is launched again for the next run that opens a session.
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import os
import shutil
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import Playwright

from armbench.errors import UserError, first_line
from armbench.tools.base import ToolInfraError
from armbench.tools.playwright_driver import start_playwright

CHROMIUM_ENV = "ARMBENCH_CHROMIUM"
# /usr/bin/chromium on Debian is a wrapper script; Playwright needs the real binary first.
CHROMIUM_CANDIDATES = [
    "/usr/lib/chromium/chromium",
    "/usr/bin/chromium",
    "chromium-browser",
    "google-chrome",
]
LAUNCH_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
INSTALL_HINT = (
    "install one with `apt-get install chromium` (or `playwright install chromium` where downloads "
    f"are allowed), or set {CHROMIUM_ENV} to a Chromium binary"
)
START_TIMEOUT_S = 60.0
ANSWER_TIMEOUT_S = 10.0
STOPPED = "the browser was stopped while the run used it (its process is ending)"
T = TypeVar("T")


def find_chromium(bundled: str | None = None) -> str:
    """ARMBENCH_CHROMIUM, else a system Chromium, else Playwright's own (`bundled`), if present."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        if os.access(configured, os.X_OK) and os.path.isfile(configured):
            return configured
        raise UserError(f"{CHROMIUM_ENV}={configured!r} is not an executable file; {INSTALL_HINT}")
    for candidate in CHROMIUM_CANDIDATES:
        found = shutil.which(candidate)
        if found:
            return found
    if bundled and os.access(bundled, os.X_OK):
        return bundled
    raise UserError(f"the browsing arm needs Chromium and none was found; {INSTALL_HINT}")


class ChromiumHost:
    """Playwright and one Chromium on the loop that launched them; `await host.run(work)` from any loop."""

    def __init__(self, playwright: Playwright, browser: PlaywrightBrowser, args: tuple[str, ...]) -> None:
        self.playwright = playwright
        self.browser = browser
        self.args = args
        self.loop = asyncio.get_running_loop()

    @classmethod
    async def launch(cls, args: list[str] = LAUNCH_ARGS) -> ChromiumHost:
        """On the running loop. Raises UserError when no Chromium is found or it does not start."""
        playwright = await start_playwright()
        try:
            path = find_chromium(bundled=playwright.chromium.executable_path)
            try:
                browser = await playwright.chromium.launch(executable_path=path, chromium_sandbox=False, args=args)
            except (PlaywrightError, TimeoutError) as error:
                raise UserError(f"Chromium at {path} did not start: {first_line(error)}") from None
        except BaseException:
            await playwright.stop()
            raise
        return cls(playwright, browser, tuple(args))

    def alive(self) -> bool:
        return self.browser.is_connected()

    async def answers(self) -> bool:
        """On the host's loop: False once Chromium is known to be gone (a death reaches `alive`
        late); one that is only slow to answer, on a busy machine, is still there."""
        try:
            devtools = await asyncio.wait_for(self.browser.new_browser_cdp_session(), ANSWER_TIMEOUT_S)
            await asyncio.wait_for(devtools.detach(), ANSWER_TIMEOUT_S)
        except PlaywrightError:
            return False
        except TimeoutError:
            return True
        return True

    async def run(self, work: Coroutine[Any, Any, T]) -> T:
        """`work` run on the host's loop and awaited from this one; cancelling the wait cancels it.
        It runs in a copy of this task's context, so what it charges reaches the caller's meter
        (call_usage.py). A host stopped meanwhile is the harness's fault: ToolInfraError."""
        if asyncio.get_running_loop() is self.loop:
            return await work
        try:
            handed = asyncio.run_coroutine_threadsafe(work, self.loop)
        except RuntimeError:  # its loop closed
            work.close()
            raise ToolInfraError(STOPPED) from None
        try:
            return await asyncio.wrap_future(handed)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # the caller's own cancellation
            raise ToolInfraError(STOPPED) from None  # the host's loop ended with the work unfinished

    async def stop(self) -> None:
        """On the host's loop: Chromium closed and the driver stopped (either may have died first)."""
        with contextlib.suppress(PlaywrightError):
            await self.browser.close()
        with contextlib.suppress(Exception):  # its driver may be gone (a terminal's Ctrl-C reaches it too)
            await self.playwright.stop()


class KeptChromium:
    """The host this process keeps between run sets, on a daemon thread of its own, launched by the
    first run set that asks and again by the first after it died or was asked for with other flags."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.host: ChromiumHost | None = None
        self.chromium_env: str | None = None  # ARMBENCH_CHROMIUM when it was launched
        self.stopping: asyncio.Event | None = None
        self.thread: threading.Thread | None = None
        atexit.register(self.stop)

    def get(self, args: list[str] = LAUNCH_ARGS) -> ChromiumHost:
        """Blocks while it launches: from async code use `asyncio.to_thread`. Raises what launching raised."""
        with self.lock:
            wanted = os.environ.get(CHROMIUM_ENV)
            host = self.host
            if host is None or host.args != tuple(args) or self.chromium_env != wanted or not self._answers(host):
                self._stop()
                host = self.host = self._start(args)
                self.chromium_env = wanted
            return host

    def stop(self) -> None:
        with self.lock:
            self._stop()

    def _answers(self, host: ChromiumHost) -> bool:
        if self.thread is None or not self.thread.is_alive():
            return False
        asked = asyncio.run_coroutine_threadsafe(host.answers(), host.loop)
        try:
            return asked.result(timeout=2 * ANSWER_TIMEOUT_S + 5)
        except TimeoutError:  # its loop is stuck: launch another
            return False

    def _start(self, args: list[str]) -> ChromiumHost:
        launched: concurrent.futures.Future[ChromiumHost] = concurrent.futures.Future()
        stopping = self.stopping = asyncio.Event()
        self.thread = threading.Thread(target=asyncio.run, args=(self._hold(args, launched, stopping),),
                                       name="kept-chromium", daemon=True)
        self.thread.start()
        try:
            return launched.result(timeout=START_TIMEOUT_S)
        except TimeoutError:
            # Stopped as soon as it is up (the callback runs on its loop, as the launch ends).
            launched.add_done_callback(
                lambda up: up.exception() is None and up.result().loop.call_soon_threadsafe(stopping.set))
            raise UserError(f"Chromium did not start within {START_TIMEOUT_S:g} s") from None

    @staticmethod
    async def _hold(args: list[str], launched: concurrent.futures.Future[ChromiumHost],
                    stopping: asyncio.Event) -> None:
        asyncio.get_running_loop().set_exception_handler(unread_after_its_driver_died)
        try:
            host = await ChromiumHost.launch(args)
        except BaseException as error:
            launched.set_exception(error)
            return
        try:
            launched.set_result(host)
            await stopping.wait()
        finally:
            await host.stop()

    def _stop(self) -> None:
        if self.thread is not None and self.thread.is_alive() and self.host is not None and self.stopping is not None:
            self.host.loop.call_soon_threadsafe(self.stopping.set)
            self.thread.join(timeout=START_TIMEOUT_S)
        self.host = self.thread = self.stopping = self.chromium_env = None


def unread_after_its_driver_died(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The kept host's loop has no reader for a future its driver's death failed, nor for a step's
    outcome once its run stopped waiting for it (a run cancelled at its deadline): not news.
    Anything else is."""
    if not context.get("message", "").endswith("exception was never retrieved"):
        loop.default_exception_handler(context)


KEPT_CHROMIUM = KeptChromium()
