"""The terminal report at any width: every group key and every number whole, stacked when narrow."""
from __future__ import annotations

import io

import pytest
from rich.console import Console

from armbench.analysis.publish import all_tables
from armbench.analysis.tables import natural_width, to_rich
from tests.support.run_sets import make_record

DOMAINS = ("worldbank", "exoplanets", "mortality")  # long names, three domains


def three_domain_records():
    return [make_record(domain=domain, set=set_name, arm=arm, question_id=f"{domain}-{set_name}-{n}", repeat=0,
                        correct=(n + len(domain)) % 3 != 0, cost_usd=0.0123 * (n + 1), prompt_tokens=12_345 * (n + 1))
            for domain in DOMAINS for set_name in ("design", "heldout") for arm in ("browsing", "tooled")
            for n in range(3)]


def printed(width: int) -> tuple[str, list]:
    tables = all_tables(three_domain_records())
    console = Console(file=io.StringIO(), width=width, color_system=None)
    for table in tables:
        console.print(to_rich(table))
    return console.file.getvalue(), tables


@pytest.mark.parametrize("width", [80, 100, 120, 200])
def test_every_cell_is_printed_whole(width):
    text, tables = printed(width)
    assert "…" not in text
    lines = set(text.splitlines())
    flat = " ".join(text.split())
    for table in tables:
        for row in table.rows:
            for cell in row:
                assert cell in flat, (table.title, cell)
    assert all(len(line) <= width for line in lines)


def test_a_table_that_fits_is_a_grid_and_one_that_does_not_is_stacked():
    text, tables = printed(100)
    wide = next(t for t in tables if natural_width(t) > 100)
    narrow = next(t for t in tables if t.rows and natural_width(t) <= 100)
    assert f"\n{wide.rows[0][0]}" in text  # a stacked block starts with its key
    assert "┃ " + narrow.columns[0] in text  # a grid's header row
