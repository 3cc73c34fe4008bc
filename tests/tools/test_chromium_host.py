"""The Chromium a process keeps between run sets (armbench/tools/chromium_host.py): each run set's
loop runs its steps on the kept host's loop, one Node driver and one Chromium for all of them, and
one that died is launched again, for the next run set or the next run of the same one."""
from __future__ import annotations

import asyncio
import os
import signal

import pytest

from armbench.tools.base import ToolInfraError
from armbench.tools.browser import Browser, BrowserSession
from armbench.tools.call_usage import metered
from armbench.tools.chromium_host import CHROMIUM_ENV, LAUNCH_ARGS, ChromiumHost, KeptChromium, find_chromium
from tests.tools.test_browser import LIVENESS_S, SHORT_STEP_S, Site, call, chromium_browsers, error, home, tools_for


@pytest.fixture
def site():
    served = Site("127.0.0.1")
    yield served
    served.stop()


async def visit(browser: Browser, site: Site) -> tuple[ChromiumHost, str]:
    """One run's navigation: the host its steps ran on, and what it saw."""
    session, by_name = await tools_for(browser, site)
    try:
        page = await call(by_name, "browser_navigate", url=f"{site.origin}/")
    finally:
        await session.close()
    assert session.host.loop is not asyncio.get_running_loop()
    return session.host, page["snapshot"]


def run_set(site: Site, runs: int = 1, between=lambda: None) -> list[tuple[ChromiumHost, str]]:
    """A run set on a loop of its own (asyncio.run) of `runs` runs, `between` called between them."""
    async def runs_in_order() -> list[tuple[ChromiumHost, str]]:
        seen = []
        async with Browser(warm=True) as browser:
            for run in range(runs):
                if run:
                    between()
                seen.append(await visit(browser, site))
        return seen

    return asyncio.run(runs_in_order())


def kill_chromium() -> None:
    """As a crash would: this worker's only Chromium is the kept one (others close with their test)."""
    (kept,) = chromium_browsers()
    os.kill(kept, signal.SIGKILL)


def test_the_kept_chromium_serves_each_run_sets_loop_and_is_launched_again_after_it_dies(site):
    [(first, snapshot)] = run_set(site)
    assert run_set(site) == [(first, snapshot)]  # the same driver and Chromium, a fresh context
    kill_chromium()
    [(again, snapshot_again)] = run_set(site)
    assert again is not first and again.playwright is not first.playwright and snapshot_again == snapshot
    assert again.alive() and not first.alive()


def test_a_run_set_whose_kept_chromium_died_runs_its_next_run_on_a_new_one(site):
    (first, snapshot), (second, snapshot_again) = run_set(site, runs=2, between=kill_chromium)
    assert second is not first and snapshot_again == snapshot


def test_a_step_on_the_kept_host_is_metered_and_cancelled_from_the_run_sets_loop(site):
    """A step's deadline charges the run's meter, though it ran on another thread; a run that stops
    waiting (its own deadline) cancels the step there, before the step's own deadline, and the next
    step finds the tab as usual."""
    async def run() -> None:
        async with Browser(warm=True) as browser:
            session, by_name = await tools_for(browser, site, SHORT_STEP_S)
            try:
                await home(by_name, site)
                with metered() as timed_out:
                    assert (await error(by_name, "browser_navigate", url=f"{site.origin}/hang"))["type"] == "timeout"
                assert timed_out.limits_hit == ["step_timeout"]
                asked = site.hits.count("/hang")
                with metered() as cancelled:
                    step = asyncio.create_task(by_name["browser_navigate"].invoke({"url": f"{site.origin}/hang"}))
                async with asyncio.timeout(LIVENESS_S):
                    while site.hits.count("/hang") == asked:  # the step is on the host, loading the page
                        await asyncio.sleep(0.02)
                step.cancel()
                with pytest.raises(asyncio.CancelledError):
                    await step
                await asyncio.sleep(SHORT_STEP_S + 1)  # past the step's own deadline, had it gone on
                assert cancelled.limits_hit == []
                assert (await home(by_name, site))["title"] == "Home"
            finally:
                await session.close()

    asyncio.run(run())


def test_a_step_whose_kept_chromium_died_is_an_infra_error(site):
    async def run() -> None:
        async with Browser(warm=True) as browser:
            session, by_name = await tools_for(browser, site)
            try:
                await home(by_name, site)
                kill_chromium()
                with pytest.raises(ToolInfraError, match="the browser died while"):
                    await asyncio.wait_for(by_name["browser_navigate"].invoke({"url": f"{site.origin}/"}), LIVENESS_S)
            finally:
                await session.close()

    asyncio.run(run())


def test_a_kept_chromium_asked_for_with_other_flags_or_binary_is_launched_again_and_stop_ends_it(monkeypatch):
    kept = KeptChromium()
    try:
        first = kept.get(LAUNCH_ARGS)
        assert kept.get(LAUNCH_ARGS) is first
        other = kept.get([*LAUNCH_ARGS, "--mute-audio"])
        assert other is not first and not first.alive()
        monkeypatch.setenv(CHROMIUM_ENV, find_chromium())
        named = kept.get([*LAUNCH_ARGS, "--mute-audio"])
        assert named is not other and not other.alive()
    finally:
        kept.stop()
    assert kept.host is None and not named.alive()


def test_closing_a_session_whose_kept_chromium_was_stopped_is_quiet(site):
    kept = KeptChromium()
    try:
        host = kept.get(LAUNCH_ARGS)

        async def open_then_close() -> None:
            context = await host.run(host.browser.new_context())
            session = BrowserSession(host, context, [site.origin], SHORT_STEP_S)
            await session.open()
            await asyncio.to_thread(kept.stop)
            await session.close()

        asyncio.run(open_then_close())
    finally:
        kept.stop()
