"""Everything `bench report` produces for a run set: the tables, their JSON, and report.md."""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from harness.compare import arm_tables, compare_arms
from harness.report import by_tool, miss_counts, outcome_counts, pass_k, report_tables, summarize
from harness.store import RunRecord, RunSetStore
from harness.tables import Table, to_markdown


def read_manifest(store: RunSetStore) -> dict:
    try:
        return store.manifest()
    except (OSError, ValueError):
        return {}


def title_of(store: RunSetStore) -> str:
    return f"armbench — {read_manifest(store).get('model', '?')} — {store.directory}"


def all_tables(records: list[RunRecord]) -> list[Table]:
    return report_tables(records) + arm_tables(records)


def as_json(records: list[RunRecord]) -> dict:
    return {
        "rows": [row.to_json() for row in summarize(records)],
        "outcomes": [asdict(row) for row in outcome_counts(records)],
        "miss_reasons": [asdict(row) for row in miss_counts(records)],
        "by_tool": [asdict(row) for row in by_tool(records)],
        "pass_k": [asdict(row) for row in pass_k(records)],
        "arm_comparisons": [comparison.to_json() for comparison in compare_arms(records)],
    }


def write_report(store: RunSetStore) -> tuple[list[Table], list[Path]]:
    """Write report.md; return the tables."""
    records = store.records()
    title = title_of(store)
    tables = all_tables(records)
    markdown = store.directory / "report.md"
    markdown.write_text(f"# {title}\n\n" + "\n".join(map(to_markdown, tables)), encoding="utf-8")
    return tables, [markdown]


def dumps(data: dict) -> str:
    return json.dumps(data, indent=2, default=str)
