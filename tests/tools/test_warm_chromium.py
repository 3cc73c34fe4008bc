"""The Chromium a process keeps between run sets (armbench/tools/warm_chromium.py): each run set's
event loop connects to it, and one that died is launched again."""
from __future__ import annotations

import asyncio
import contextlib

import httpx
import pytest
from playwright.async_api import Error as PlaywrightError

from armbench.tools.browser import LAUNCH_ARGS, Browser, find_chromium
from armbench.tools.warm_chromium import WARM_CHROMIUM
from tests.tools.test_browser import Site, call, tools_for


@pytest.fixture
def site():
    served = Site("127.0.0.1")
    yield served
    served.stop()


def warm_browser_id() -> str:
    """The kept Chromium's id, new at each launch (its DevTools endpoint's browser target)."""
    assert WARM_CHROMIUM.address is not None
    return httpx.get(f"{WARM_CHROMIUM.address}/json/version", trust_env=False).json()["webSocketDebuggerUrl"]


def test_a_warm_chromium_serves_each_run_sets_loop_and_is_launched_again_after_it_dies(site):
    """Each asyncio.run is a run set's loop: the second connects to the Chromium the first launched,
    with a fresh context, and sees the same page; a Chromium that died is launched again."""
    async def visit(close_it: bool = False) -> tuple[str, str]:
        async with Browser(warm=True) as browser:
            session, by_name = await tools_for(browser, site)
            try:
                page = await call(by_name, "browser_navigate", url=f"{site.origin}/")
            finally:
                await session.close()
            launched = warm_browser_id()
            if close_it:  # as a crash would: the kept Chromium exits before the next run set
                cdp = await browser._browser.new_browser_cdp_session()
                with contextlib.suppress(PlaywrightError):  # it may close before it answers
                    await cdp.send("Browser.close")
            return launched, page["snapshot"]

    first, snapshot = asyncio.run(visit())
    assert asyncio.run(visit(close_it=True)) == (first, snapshot)
    again, snapshot_again = asyncio.run(visit())
    assert again != first and snapshot_again == snapshot
    WARM_CHROMIUM.stop()
    assert not WARM_CHROMIUM.connected.is_set() and WARM_CHROMIUM.address is None


def test_a_warm_chromium_asked_for_with_other_flags_is_launched_again():
    path = find_chromium()
    first = WARM_CHROMIUM.endpoint(path, LAUNCH_ARGS)
    launched = warm_browser_id()
    assert WARM_CHROMIUM.endpoint(path, LAUNCH_ARGS) == first and warm_browser_id() == launched
    WARM_CHROMIUM.endpoint(path, [*LAUNCH_ARGS, "--mute-audio"])
    assert warm_browser_id() != launched
    WARM_CHROMIUM.stop()
