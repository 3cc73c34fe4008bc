"""The HTML report: one self-contained page (plots inlined as base64 PNG, CSS inline, no script)
and one page per transcript. Jinja2 autoescapes everything a model or a tool wrote."""
from __future__ import annotations

import base64
from functools import cache
from urllib.parse import quote

from jinja2 import Environment, PackageLoader, StrictUndefined

from armbench.analysis.plots import Plot
from armbench.analysis.tables import Table
from armbench.analysis.transcript import Turn, facts, truncate, verdict
from armbench.types import RunRecord

HTML_PREVIEW = {"system": 400, "tool": 3_000}


def grade_class(record: RunRecord) -> str:
    return "infra" if record.correct is None else "correct" if record.correct else "wrong"


def transcript_link(record: RunRecord) -> str:
    return f"transcripts/{quote(record.run_id)}.html"


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
    env.globals.update(grade_class=grade_class, verdict=verdict, truncate=truncate, link=transcript_link)
    return env


def render_report(
    title: str, manifest: dict, tables: list[Table], plots: list[Plot], runs: list[RunRecord], linked: set[str]
) -> str:
    """`linked`: the run ids that have a transcript page to link to."""
    ordered = sorted(runs, key=lambda r: (r.domain, r.set, r.question_id, r.arm, r.repeat))
    return environment().get_template("report.html").render(
        title=title, manifest=manifest, tables=tables, plots=plots, runs=ordered, linked=linked
    )


def render_transcript(record: RunRecord, turns: list[Turn], reference: list[str] | None) -> str:
    return environment().get_template("transcript.html").render(
        record=record, turns=turns, facts=facts(record, reference), preview=HTML_PREVIEW
    )
