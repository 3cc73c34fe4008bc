"""A Chromium one process keeps between run sets: `WARM_CHROMIUM.endpoint(path, args)`.

A Playwright browser belongs to the event loop that launched it, and each run set runs on a loop of
its own (`asyncio.run`), so a process that runs many run sets (a notebook, the test suite) would
launch Chromium for each: about 0.5 s of CPU. Kept warm, Playwright launches it once, on a thread
and loop of its own, with the same flags as ever plus a DevTools port on loopback; each run set's
`Browser` connects to it over CDP (`connect_over_cdp`) and opens its own contexts, as it would in a
browser of its own, and closing that `Browser` leaves this one running.

The port answers on 127.0.0.1 only. The python sandbox has a loopback of its own (its own network
namespace), and the browser's own requests reach only the run's replica (browser.py's routing), so
no run can reach it. A Chromium that died (or was killed) is launched again on the next request.
"""
from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import socket
import threading

from playwright.async_api import Browser as PlaywrightBrowser
from playwright.async_api import Error as PlaywrightError

from armbench.tools.playwright_driver import start_playwright

START_TIMEOUT_S = 60.0


class WarmChromium:
    """The kept Chromium: its DevTools address, and the thread whose loop holds its Playwright."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.port: int | None = None  # its DevTools port, once launched
        self.launched_with: tuple[str, ...] = ()  # the binary and its flags
        self.connected = threading.Event()  # set while the kept Chromium lives
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping: asyncio.Event | None = None
        self.thread: threading.Thread | None = None
        atexit.register(self.stop)

    def endpoint(self, path: str, args: list[str]) -> str:
        """The DevTools address of the kept Chromium at `path`, launched with `args` if none lives.
        Blocks while it launches: from async code use `asyncio.to_thread`."""
        with self.lock:
            if not self._alive() or self.launched_with != (path, *args):
                self._stop()
                self._start(path, args)
            assert self.address is not None
            return self.address

    @property
    def address(self) -> str | None:
        return None if self.port is None else f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        with self.lock:
            self._stop()

    def _alive(self) -> bool:
        """Launched, not known to have died, and its port still answers (a death is seen late)."""
        if self.port is None or not self.connected.is_set():
            return False
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
        except OSError:
            return False
        return True

    def _start(self, path: str, args: list[str]) -> None:
        port = free_port()
        ready: concurrent.futures.Future[None] = concurrent.futures.Future()
        host = self._host(path, [*args, f"--remote-debugging-port={port}"], ready)
        self.thread = threading.Thread(target=asyncio.run, args=(host,), name="warm-chromium", daemon=True)
        self.thread.start()
        ready.result(timeout=START_TIMEOUT_S)
        self.port, self.launched_with = port, (path, *args)

    async def _host(self, path: str, args: list[str], ready: concurrent.futures.Future[None]) -> None:
        self.loop, self.stopping = asyncio.get_running_loop(), asyncio.Event()
        self.loop.set_exception_handler(unread_after_its_driver_died)
        try:
            playwright = await start_playwright()
        except BaseException as error:
            ready.set_exception(error)
            return
        try:
            browser: PlaywrightBrowser = await playwright.chromium.launch(
                executable_path=path, chromium_sandbox=False, args=args)
            browser.on("disconnected", lambda _: self.connected.clear())
            self.connected.set()
            ready.set_result(None)
            await self.stopping.wait()
            with contextlib.suppress(PlaywrightError):  # it may have died first
                await browser.close()
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
        finally:
            self.connected.clear()
            with contextlib.suppress(Exception):  # its driver may be gone (a Ctrl-C reaches it too)
                await playwright.stop()

    def _stop(self) -> None:
        if self.thread is not None and self.thread.is_alive() and self.loop is not None and self.stopping is not None:
            self.loop.call_soon_threadsafe(self.stopping.set)
            self.thread.join(timeout=START_TIMEOUT_S)
        self.port = self.loop = self.stopping = self.thread = None
        self.launched_with = ()


def unread_after_its_driver_died(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """The host's loop has no reader for a future its driver's death failed (a terminal's Ctrl-C
    reaches the driver too): that is not news. Anything else is."""
    if not context.get("message", "").endswith("exception was never retrieved"):
        loop.default_exception_handler(context)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


WARM_CHROMIUM = WarmChromium()
