"""The report used in headless Chromium: filter the runs table to one question, sort it, click
through to the question's page and find both arms' transcripts with each call beside its result."""
import pytest
from playwright.async_api import async_playwright

from armbench.analysis.publish import write_report
from armbench.questions import load_set_file, set_path
from armbench.tools.chromium_host import INSTALL_HINT, LAUNCH_ARGS
from tests.analysis.transcripts import PARALLEL_RUN, parallel_transcript, rewrite_transcript
from tests.support.run_sets import build_two_arm_run_set

CHROMIUM = "/usr/lib/chromium/chromium"
QUESTION = "gpus-design-02"


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    sets = [load_set_file(set_path("gpus", name)) for name in ("design", "heldout")]
    store = build_two_arm_run_set(tmp_path_factory.mktemp("browser") / "two-arms", *sets)
    rewrite_transcript(store, PARALLEL_RUN, parallel_transcript("H200 NVL | H200 SXM 141 GB"))
    write_report(store)
    return store.directory


@pytest.fixture(scope="module")
async def browser():
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, chromium_sandbox=False, args=LAUNCH_ARGS)
        yield launched
        await launched.close()


@pytest.fixture
async def report(browser, published):
    """The report page, and the script errors and non-local requests it made."""
    page = await browser.new_page(viewport={"width": 1400, "height": 900})
    problems = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    page.on("console", lambda message: problems.append(message.text) if message.type == "error" else None)
    page.on("request", lambda request: None if request.url.startswith(("file:", "data:")) else problems.append(request.url))
    await page.goto((published / "report.html").as_uri())
    yield page, problems
    await page.close()


async def visible_column(page, header: str) -> list[str]:
    """The text of one column in the runs table's shown rows, top to bottom."""
    return await page.evaluate(
        """header => {
            const table = document.getElementById("runs-table");
            const column = [...table.tHead.rows[0].cells].findIndex(th => th.textContent.trim() === header);
            return [...table.tBodies[0].rows].filter(row => !row.hidden).map(row => row.cells[column].textContent.trim());
        }""",
        header,
    )


async def test_filter_to_one_question_then_by_arm(report):
    page, problems = report
    assert len(await visible_column(page, "question")) == 60
    await page.fill("#runs-filter input[name=text]", QUESTION)
    assert await visible_column(page, "question") == [QUESTION] * 6
    assert await page.locator("#runs-filter output").inner_text() == "6 of 60 runs"
    await page.select_option("#runs-filter select[name=arm]", "tooled")
    assert await visible_column(page, "run") == [f"{QUESTION}.tooled.r{n}" for n in range(3)]
    await page.fill("#runs-filter input[name=text]", "wrong separator")  # a miss reason, as words
    await page.select_option("#runs-filter select[name=arm]", "")
    assert await visible_column(page, "run") == [f"{QUESTION}.browsing.r0"]
    assert problems == []


async def test_header_clicks_sort_numbers_as_numbers(report):
    page, problems = report
    await page.click("#runs-table th:text-is('actions')")
    actions = [int(n) for n in await visible_column(page, "actions")]
    assert actions == sorted(actions) and actions[0] == 0 and actions[-1] == 24
    assert await page.get_attribute("#runs-table th:text-is('actions')", "aria-sort") == "ascending"
    await page.click("#runs-table th:text-is('actions')")
    assert [int(n) for n in await visible_column(page, "actions")] == sorted(actions, reverse=True)
    await page.click("#runs-table th:text-is('tokens')")
    tokens = [int(n.replace(",", "")) for n in await visible_column(page, "tokens")]
    assert tokens == sorted(tokens) and tokens[0] == 800  # the infra error's, before 1,620
    await page.click("#runs-table th:text-is('run')")
    runs = await visible_column(page, "run")
    assert runs[:2] == ["gpus-design-01.browsing.r0", "gpus-design-01.browsing.r1"] and runs[-1] == "gpus-heldout-05.tooled.r2"
    assert problems == []


async def test_click_through_to_the_question_side_by_side(report):
    page, problems = report
    await page.fill("#runs-filter input[name=text]", QUESTION)
    await page.locator("#runs-table tbody tr:not([hidden])").first.locator(f"a:text-is('{QUESTION}')").click()
    await page.wait_for_load_state("load")
    assert page.url.endswith(f"questions/{QUESTION}.html#{QUESTION}.browsing.r0")
    assert await page.locator("h1").inner_text() == QUESTION
    for arm in ("browsing", "tooled"):
        runs = page.locator(f"section.arm[data-arm={arm}] article.run")
        assert await runs.count() == 3
        assert await runs.first.locator(".turn.assistant").count() >= 1
    # the two arms sit side by side, not one under the other
    browsing, tooled = [await page.locator(f"section.arm[data-arm={arm}]").bounding_box() for arm in ("browsing", "tooled")]
    assert tooled["x"] > browsing["x"] + browsing["width"] - 1 and abs(tooled["y"] - browsing["y"]) < 5
    parallel = page.locator(f"article.run[data-run='{PARALLEL_RUN}'] .exchange")
    assert await parallel.count() == 2
    for index, call_id in enumerate(("call_py", "call_q")):
        exchange = parallel.nth(index)
        assert await exchange.locator(".call").get_attribute("data-call-id") == call_id
        assert await exchange.locator(".result").get_attribute("data-call-id") == call_id
    code = await parallel.nth(0).locator(".call pre code").inner_text()
    assert code.startswith("import math\nfor n in range(3):")
    assert "ZeroDivisionError" in await parallel.nth(0).locator(".result").inner_text()
    hostile = await parallel.nth(1).locator(".result").inner_text()
    assert "<script>alert('pwned')</script>" in hostile and await page.locator("script").count() == 0
    assert "1,234 tokens in · 56 out · 1.50 s" in await page.locator(f"article.run[data-run='{PARALLEL_RUN}']").inner_text()
    await page.locator(f"a:text-is('{PARALLEL_RUN}')").click()
    await page.wait_for_load_state("load")
    assert await page.locator("h1").inner_text() == PARALLEL_RUN
    calls = page.locator(".exchange")
    assert [await calls.nth(i).locator(".result").get_attribute("data-call-id") for i in range(2)] == ["call_py", "call_q"]
    assert problems == []


@pytest.mark.slow
def test_report_screenshots_are_written(two_arm_run_set, cli, monkeypatch):
    monkeypatch.chdir(two_arm_run_set.directory.parent)  # a relative path, as `make demo` gives
    code, _, err = cli("report", two_arm_run_set.directory.name, "--screenshots")
    assert code == 0 and "screenshots written to" in err
    for name in ("report", "runs", "question"):
        png = two_arm_run_set.directory / "screenshots" / f"{name}.png"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


def test_without_chromium_the_report_is_written_and_one_line_says_why(two_arm_run_set, cli, monkeypatch):
    monkeypatch.setenv("ARMBENCH_CHROMIUM", "/nonexistent/chromium")
    code, out, err = cli("report", str(two_arm_run_set.directory), "--screenshots")
    assert code == 0 and "report.html in" in out and (two_arm_run_set.directory / "report.html").exists()
    assert [line for line in err.splitlines() if line.strip()] == [
        f"screenshots skipped: ARMBENCH_CHROMIUM='/nonexistent/chromium' is not an executable file; {INSTALL_HINT}"]
    assert not (two_arm_run_set.directory / "screenshots").exists()


async def test_at_1024_px_the_headline_comes_first_and_nothing_scrolls_the_page(browser, published):
    """Wide tables scroll inside themselves; the page never scrolls sideways, and the first thing under
    the title is the answer (the hashes wait in a closed details block)."""
    page = await browser.new_page(viewport={"width": 1024, "height": 768})
    try:
        await page.goto((published / "report.html").as_uri())
        layout = await page.evaluate("""() => ({
            pageWidth: document.documentElement.scrollWidth, window: window.innerWidth,
            afterTitle: document.querySelector("h1").nextElementSibling.className,
            headline: document.querySelector("h1").nextElementSibling.textContent,
            metaOpen: document.querySelector("details.meta").open,
            widest: Math.max(...[...document.querySelectorAll("table")].map(t => t.scrollWidth)),
        })""")
    finally:
        await page.close()
    assert layout["pageWidth"] <= layout["window"] == 1024, layout
    assert layout["widest"] > layout["window"]  # the runs table is wider: it scrolls inside its own box
    assert layout["afterTitle"] == "headline" and " vs " in layout["headline"] and not layout["metaOpen"]
