"""Everything `bench report` produces for a run set: the tables, their JSON, and the files.

    <run-set>/report.md                 every table as Markdown
    <run-set>/report.html               tables, plots (inline PNG) and links to transcripts
    <run-set>/plots/<name>.png          each plot
    <run-set>/transcripts/<run>.html    each transcript, escaped
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from armbench.analysis.compare import arm_tables, compare_arms
from armbench.analysis.html import render_report, render_transcript
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
from armbench.analysis.tables import Table, to_markdown
from armbench.analysis.transcript import read_turns, reference_answer
from armbench.errors import UserError
from armbench.run.store import RunSetStore
from armbench.types import RunRecord


def read_manifest(store: RunSetStore) -> dict:
    """The manifest, or {} for a run set without one; a damaged one is a UserError."""
    return store.manifest() if store.manifest_path.exists() else {}


def title_of(store: RunSetStore) -> str:
    return f"armbench — {read_manifest(store).get('model', '?')} — {store.directory}"


def all_tables(records: list[RunRecord]) -> list[Table]:
    """The study's table first: with several domains it is the report's headline."""
    return [domain_table(by_domain(records)), *report_tables(records), *arm_tables(records)]


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


def write_transcripts(store: RunSetStore, records: list[RunRecord]) -> set[str]:
    """One HTML page per run whose transcript can be read; returns their run ids."""
    written = set()
    for record in records:
        try:
            turns = read_turns(store.directory, record)
        except UserError:
            continue
        page = store.directory / "transcripts" / f"{record.run_id}.html"
        page.parent.mkdir(exist_ok=True)
        page.write_text(render_transcript(record, turns, reference_answer(record)), encoding="utf-8")
        written.add(record.run_id)
    return written


def write_report(store: RunSetStore) -> tuple[list[Table], list[Path]]:
    """Write report.md, report.html, the plots and the transcript pages; return the tables."""
    records = store.records_to_report()
    title = title_of(store)
    tables = all_tables(records)
    markdown = store.directory / "report.md"
    markdown.write_text(f"# {title}\n\n" + "\n".join(map(to_markdown, tables)), encoding="utf-8")
    plots = all_plots(records)
    plot_dir = store.directory / "plots"
    plot_dir.mkdir(exist_ok=True)
    for plot in plots:
        (plot_dir / f"{plot.name}.png").write_bytes(plot.png)
    linked = write_transcripts(store, records)
    html = store.directory / "report.html"
    html.write_text(
        render_report(title, read_manifest(store), tables, plots, records, linked), encoding="utf-8"
    )
    return tables, [markdown, html, plot_dir]


def dumps(data: dict) -> str:
    return json.dumps(data, indent=2, default=str)
