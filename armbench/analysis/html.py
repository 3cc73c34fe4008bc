"""The HTML report: one self-contained page (plots inlined as base64 PNG, CSS and the runs table's
filter and sort script inline), one page per transcript and one per question with each arm's runs
side by side. Jinja2 autoescapes everything a model or a tool wrote."""
from __future__ import annotations

import base64
from functools import cache
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined

from armbench.analysis.leaderboard import Leaderboard
from armbench.analysis.overview import headlines
from armbench.analysis.plots import Plot
from armbench.analysis.report import by_domain
from armbench.analysis.tables import Table
from armbench.analysis.transcript import (
    CallUsage,
    Step,
    Turn,
    blocks,
    facts,
    replay_clock,
    replayed,
    steps,
    truncate,
    verdict,
)
from armbench.types import RunRecord

HTML_PREVIEW = {"system": 400, "tool": 3_000}
PROMPT_ROLES = ("system", "user")  # the same in every run of a question: shown once on its page


def grade_class(record: RunRecord) -> str:
    return "infra" if record.correct is None else "correct" if record.correct else "wrong"


def transcript_link(record: RunRecord) -> str:
    return f"transcripts/{quote(record.run_id)}.html"


def question_link(question_id: str) -> str:
    return f"questions/{quote(question_id)}.html"


def outcome_label(record: RunRecord) -> str:
    return str(record.outcome) if record.outcome else "—"


def search_text(record: RunRecord) -> str:
    """What the runs table's filter box matches: ids and terms, the latter also with spaces."""
    terms = [str(term) for term in (record.outcome, record.miss_reason) if term]
    words = [record.question_id, record.domain, record.arm, *terms, *(t.replace("_", " ") for t in terms)]
    return " ".join(words).lower()


def usage_line(usage: CallUsage, replay: bool) -> str:
    """A model call's tokens and latency; a replay's latency is the recording's lookup, so none is shown."""
    line = f"{usage.prompt_tokens:,} tokens in · {usage.completion_tokens:,} out"
    if replay:
        return line + " · replayed (no model latency)"
    return line if usage.seconds is None else f"{line} · {usage.seconds:.2f} s"


@cache
def environment() -> Environment:
    env = Environment(
        loader=PackageLoader("armbench.analysis", "templates"),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["b64"] = lambda data: base64.b64encode(data).decode("ascii")
    env.globals.update(
        grade_class=grade_class, verdict=verdict, truncate=truncate, blocks=blocks, link=transcript_link,
        question_link=question_link, outcome_label=outcome_label, search_text=search_text,
        usage_line=usage_line, replayed=replayed, replay_clock=replay_clock,
    )
    return env


def render_report(
    title: str, manifest: dict, tables: list[Table], plots: list[Plot], runs: list[RunRecord], linked: set[str],
    questions: set[str],
) -> str:
    """`linked`: the run ids that have a transcript page to link to; `questions`: the question ids
    that have a side-by-side page."""
    ordered = sorted(runs, key=lambda r: (r.domain, r.set, r.question_id, r.arm, r.repeat))
    choices = {
        "domain": sorted({r.domain for r in runs}),
        "arm": sorted({r.arm for r in runs}),
        "outcome": sorted({outcome_label(r) for r in runs}),
    }
    return environment().get_template("report.html").render(
        title=title, headline=headlines(by_domain(runs)), manifest=manifest, tables=tables, plots=plots,
        runs=ordered, linked=linked,
        questions=questions, choices=choices, any_replayed=any(map(replay_clock, runs)),
    )


def render_leaderboard(board: Leaderboard, plot: Plot) -> str:
    """The leaderboard's tables and its accuracy-versus-spend plot (the Pareto front marked), one page."""
    return environment().get_template("leaderboard.html").render(
        title="armbench leaderboard", board=board, tables=board.tables(), plot=plot
    )


def render_transcript(record: RunRecord, turns: list[Turn], reference: list[str] | None) -> str:
    return environment().get_template("transcript.html").render(
        record=record, steps=steps(turns), facts=facts(record, reference), preview=HTML_PREVIEW
    )


def render_question(runs: list[tuple[RunRecord, list[Turn] | None]], reference: list[str] | None) -> str:
    """One question's runs (each with its turns, None when its transcript is unreadable), a column
    per arm; the question itself is shown once above them."""
    prompt = next((t.text for _, turns in runs for t in turns or () if t.role == "user"), None)
    columns: dict[str, list[tuple[RunRecord, list[Step] | None]]] = {}
    for record, turns in sorted(runs, key=lambda run: (run[0].arm, run[0].repeat)):
        shown = None if turns is None else steps([t for t in turns if t.role not in PROMPT_ROLES])
        columns.setdefault(record.arm, []).append((record, shown))
    return environment().get_template("question.html").render(
        record=runs[0][0], prompt=prompt, reference=reference, columns=columns, preview=HTML_PREVIEW
    )
