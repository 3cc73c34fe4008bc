"""PNG screenshots of a written HTML report (`bench report --screenshots`): its top, its runs table
filtered to one question, and that question's side-by-side page, taken with the Chromium the browsing
arm uses, so a reader sees the report without opening it.

    <run-set>/screenshots/report.png      the report page (its first MAX_HEIGHT pixels)
    <run-set>/screenshots/runs.png        the runs table, filtered to the question
    <run-set>/screenshots/question.png    the question's runs, a column per arm
"""
from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from playwright.async_api import Page

from armbench.errors import UserError
from armbench.tools.chromium_host import ChromiumHost
from armbench.types import RunRecord

VIEWPORT = {"width": 1400, "height": 900}
MAX_HEIGHT = 6_000  # a report with thousands of runs is taller than any screenshot needs


def showcase(records: list[RunRecord]) -> str:
    """The question to show: one whose arms disagree on the grade, else the one with the most tool
    calls; the first by id among equals."""
    by_question: dict[str, list[RunRecord]] = defaultdict(list)
    for record in records:
        by_question[record.question_id].append(record)

    def interest(question_id: str) -> tuple[bool, int]:
        runs = by_question[question_id]
        grades = {arm: frozenset(r.correct for r in runs if r.arm == arm) for arm in {r.arm for r in runs}}
        return len(set(grades.values())) > 1, sum(r.actions for r in runs)

    return max(sorted(by_question), key=interest)


async def shoot(page: Page, path: Path) -> Path:
    height = min(await page.evaluate("document.documentElement.scrollHeight"), MAX_HEIGHT)
    await page.screenshot(path=path, full_page=True, clip={"x": 0, "y": 0, "width": VIEWPORT["width"], "height": height})
    return path


async def take_screenshots(directory: Path, records: list[RunRecord]) -> list[Path]:
    """Screenshots of the report written in `directory`; a UserError when Chromium is missing."""
    directory = directory.resolve()  # a file URL needs an absolute path
    report = directory / "report.html"
    if not report.exists() or not records:
        raise UserError(f"no HTML report with runs in {directory} to take screenshots of")
    question_id = showcase(records)
    out = directory / "screenshots"
    host = await ChromiumHost.launch()
    try:
        out.mkdir(exist_ok=True)
        page = await host.browser.new_page(viewport=VIEWPORT)
        await page.goto(report.as_uri())
        taken = [await shoot(page, out / "report.png")]
        await page.fill("#runs-filter input[name=text]", question_id)
        await page.locator("#runs").screenshot(path=out / "runs.png")
        taken.append(out / "runs.png")
        await page.goto((directory / "questions" / f"{question_id}.html").as_uri())
        taken.append(await shoot(page, out / "question.png"))
    finally:
        await host.stop()
    return taken
