"""Everything `bench report` produces for a run set: the tables, their JSON, and the files.

    <run-set>/report.md                 every table as Markdown
    <run-set>/report.html               tables, plots (inline PNG) and links to transcripts
    <run-set>/plots/<name>.png          each plot
    <run-set>/transcripts/<run>.html    each transcript, escaped
    <run-set>/questions/<question>.html each question's runs, a column per arm
"""
from __future__ import annotations

import json
from dataclasses import asdict, replace
from itertools import groupby
from pathlib import Path

from armbench.analysis.compare import arm_tables, compare_arms
from armbench.analysis.html import render_question, render_report, render_transcript
from armbench.analysis.overview import tool_drift_notices
from armbench.analysis.plots import all_plots
from armbench.analysis.report import (
    by_domain,
    by_tool,
    domain_table,
    miss_counts,
    outcome_counts,
    pass_k,
    report_tables,
)
from armbench.analysis.summary import summarize
from armbench.analysis.synthesis_report import synthesis_tables
from armbench.analysis.tables import Table, to_markdown
from armbench.analysis.transcript import read_turns, reference_answer
from armbench.engine.store import RunSetStore
from armbench.errors import UserError
from armbench.types import RunRecord
from armbench.web_profile import profile_in, profile_name_in


def read_manifest(store: RunSetStore) -> dict:
    """The manifest, or {} for a run set without one; a damaged one is a UserError."""
    return store.manifest() if store.manifest_path.exists() else {}


def title_of(store: RunSetStore) -> str:
    manifest = read_manifest(store)
    run_by = " (run by inspect_ai)" if manifest.get("imported") else ""
    under = f" — web: {profile_name_in(manifest)}" if profile_in(manifest) else ""
    return f"armbench — {manifest.get('model', '?')}{run_by}{under} — {store.directory}"


def all_tables(records: list[RunRecord], manifest: dict | None = None) -> list[Table]:
    """The study's table first: with several domains it is the report's headline. A synthesized arm
    adds its transfer and tool tables (its tools are named by the `manifest`)."""
    study = domain_table(by_domain(records))
    study = replace(study, notices=(*study.notices, *tool_drift_notices(manifest or {})))
    return [study, *report_tables(records), *arm_tables(records), *synthesis_tables(records, manifest or {})]


def as_json(records: list[RunRecord]) -> dict:
    return {
        "rows": [row.to_json() for row in summarize(records)],
        "outcomes": [asdict(row) for row in outcome_counts(records)],
        "miss_reasons": [asdict(row) for row in miss_counts(records)],
        "by_tool": [asdict(row) for row in by_tool(records)],
        "pass_k": [asdict(row) for row in pass_k(records)],
        "arm_comparisons": [comparison.to_json() for comparison in compare_arms(records)],
        "by_domain": asdict(by_domain(records)),
    }


def write_pages(store: RunSetStore, records: list[RunRecord]) -> tuple[set[str], set[str]]:
    """A page per run whose transcript can be read, and per question its runs side by side; returns
    the run ids and question ids given a page. One question's transcripts are in memory at a time."""
    transcripts, questions = set(), set()
    (store.directory / "questions").mkdir(exist_ok=True)
    ordered = sorted(records, key=lambda r: r.question_id)
    for question_id, group in groupby(ordered, key=lambda r: r.question_id):
        runs = []
        for record in group:
            try:
                turns = read_turns(store.directory, record)
            except UserError:
                runs.append((record, None))
                continue
            page = store.directory / "transcripts" / f"{record.run_id}.html"
            page.parent.mkdir(exist_ok=True)
            page.write_text(render_transcript(record, turns, reference_answer(record)), encoding="utf-8")
            transcripts.add(record.run_id)
            runs.append((record, turns))
        page = store.directory / "questions" / f"{question_id}.html"
        page.write_text(render_question(runs, reference_answer(runs[0][0])), encoding="utf-8")
        questions.add(question_id)
    return transcripts, questions


def write_report(store: RunSetStore) -> tuple[list[Table], list[Path]]:
    """Write report.md, report.html, the plots, the transcript and question pages; return the tables."""
    records = store.records_to_report()
    title = title_of(store)
    tables = all_tables(records, read_manifest(store))
    markdown = store.directory / "report.md"
    markdown.write_text(f"# {title}\n\n" + "\n".join(map(to_markdown, tables)), encoding="utf-8")
    plots = all_plots(records)
    plot_dir = store.directory / "plots"
    plot_dir.mkdir(exist_ok=True)
    for plot in plots:
        (plot_dir / f"{plot.name}.png").write_bytes(plot.png)
    linked, questions = write_pages(store, records)
    html = store.directory / "report.html"
    html.write_text(
        render_report(title, read_manifest(store), tables, plots, records, linked, questions), encoding="utf-8"
    )
    return tables, [markdown, html, plot_dir]


def dumps(data: dict) -> str:
    return json.dumps(data, indent=2, default=str)
