"""The HTML report in headless Chromium: tables, plots that loaded, transcript pages, no errors."""
import pytest
from playwright.sync_api import sync_playwright

from armbench.analysis.publish import write_report
from armbench.questions import load_set_file, set_path
from tests.support.run_sets import HOSTILE, build_two_arm_run_set

CHROMIUM = "/usr/lib/chromium/chromium"
CHROMIUM_ARGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--no-first-run", "--disable-quic"]


@pytest.fixture(scope="module")
def published(tmp_path_factory):
    sets = [load_set_file(set_path("gpus", name)) for name in ("design", "heldout")]
    store = build_two_arm_run_set(tmp_path_factory.mktemp("html") / "two-arms", *sets)
    write_report(store)
    return store.directory


@pytest.fixture(scope="module")
def browser():
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, chromium_sandbox=False, args=CHROMIUM_ARGS
        )
        yield launched
        launched.close()


def open_page(browser, url):
    """A page at `url`, plus the console errors and the non-local requests it made."""
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    errors, remote = [], []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: remote.append(request.url)
            if not request.url.startswith(("file:", "data:")) else None)
    page.goto(url)
    page.wait_for_load_state("load")
    return page, errors, remote


@pytest.mark.slow
def test_report_opens_with_tables_and_loaded_plots(browser, published, tmp_path):
    page, errors, remote = open_page(browser, (published / "report.html").as_uri())
    headings = page.locator("h2").all_inner_texts()
    for title in ("Accuracy, actions, cost and time", "Outcomes (DeepSearchQA categories)", "Why runs missed",
                  "Actions, tokens and cost by tool", "pass@k and pass^k over repeats",
                  "Paired comparison: tooled vs browsing", "Plots", "Runs"):
        assert title in headings
    assert page.locator("table").count() >= 8
    assert "11/15" in page.locator("#accuracy-actions-cost-and-time table").inner_text()
    images = page.locator("img")
    assert images.count() == 3
    for index in range(3):
        loaded = images.nth(index).evaluate("img => img.complete && img.naturalWidth > 0")
        assert loaded, images.nth(index).get_attribute("alt")
        assert images.nth(index).get_attribute("src").startswith("data:image/png;base64,")
    screenshot = tmp_path / "report.png"
    page.screenshot(path=str(screenshot), full_page=True)
    assert screenshot.stat().st_size > 10_000
    assert errors == [] and remote == []


def test_transcript_page_is_linked_and_escaped(browser, published):
    page, errors, _ = open_page(browser, (published / "report.html").as_uri())
    page.click("text=gpus-design-02.browsing.r0")
    page.wait_for_load_state("load")
    assert page.locator("h1").inner_text() == "gpus-design-02.browsing.r0"
    text = page.inner_text("body")
    assert "wrong_separator" in text and "H200 NVL | H200 SXM 141 GB" in text  # the reference
    assert HOSTILE in text  # shown as text ...
    assert page.locator("script").count() == 0 and page.locator("pre b").count() == 0  # ... never run
    assert errors == []


def test_transcript_html_escapes_model_and_tool_text(published):
    html = (published / "transcripts" / "gpus-design-01.browsing.r0.html").read_text()
    assert "&lt;script&gt;alert(" in html and "<script>" not in html
