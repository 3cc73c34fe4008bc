"""A table as data (title, columns, cells, note), rendered to the terminal, Markdown, LaTeX, CSV or HTML.

Each report table is built once as a `Table`; the renderers never compute anything.
"""
from __future__ import annotations

import csv
import io
import re
import textwrap
from dataclasses import dataclass

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.measure import Measurement
from rich.table import Table as RichTable
from rich.text import Text


@dataclass(frozen=True)
class Table:
    title: str
    columns: list[str]
    rows: list[list[str]]
    note: str = ""
    key_columns: int = 3  # the leading columns that name the row (left-aligned); the rest are figures
    empty: str = "nothing to show"
    notices: tuple[str, ...] = ()  # lines a reader must not miss, under the table in every format

    def align(self, index: int) -> str:
        return "left" if index < self.key_columns else "right"

    @property
    def slug(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")


def number(value: float | None, spec: str = "g") -> str:
    return "—" if value is None else format(value, spec)


def percent(value: float | None, spec: str = ".0%") -> str:
    return number(value, spec)


def interval(low: float | None, high: float | None) -> str:
    """A 95% interval of an accuracy, in whole percent; — when there is nothing to estimate."""
    return "—" if low is None or high is None else f"{low:.0%}–{high:.0%}"


def points(value: float | None) -> str:
    """An accuracy difference in percentage points (never a relative change)."""
    return "—" if value is None else f"{value * 100:+.0f} pp"


def usd(value: float | None, spec: str = ".4f") -> str:
    """Cost in dollars; None means the price is unknown (never shown as $0)."""
    return "unknown" if value is None else f"${value:{spec}}"


def to_rich(table: Table) -> RenderableType:
    """The table for a terminal of any width: a grid when every cell fits whole, else stacked."""
    return Fitted(table)


class Fitted:
    """Rendered at print time, when the width is known: never a truncated key or number."""

    def __init__(self, table: Table):
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        table = self.table
        notices = [Text(notice, style="yellow") for notice in table.notices]
        if not table.rows:
            yield Group(Text.assemble((table.title, "bold"), f": {table.empty}\n"), *notices)
        elif natural_width(table) <= options.max_width:
            yield Group(grid(table), *notices)
        else:
            yield Group(stacked(table), *notices)


def natural_width(table: Table) -> int:
    """Columns at their widest cell, each with Rich's padding and border."""
    widths = [max(len(column), *(len(row[index]) for row in table.rows)) for index, column in enumerate(table.columns)]
    return sum(widths) + 3 * len(widths) + 1


def grid(table: Table) -> RichTable:
    rendered = RichTable(title=table.title, caption=table.note or None, caption_justify="left")
    for index, column in enumerate(table.columns):
        rendered.add_column(column, justify=table.align(index), no_wrap=True)
    for row in table.rows:
        rendered.add_row(*row)
    return rendered


def stacked(table: Table) -> Group:
    """One block per row: its key cells on a line, then a `column  value` line per figure."""
    figures = table.columns[table.key_columns:]
    label = max((len(column) for column in figures), default=0)
    lines = [Text(table.title, style="bold")]
    for row in table.rows:
        lines.append(Text(" · ".join(row[:table.key_columns]), style="bold"))
        lines += [Text(f"  {column:<{label}}  {cell}") for column, cell in zip(figures, row[table.key_columns:])]
    if table.note:
        lines.append(Text(table.note, style="dim"))
    return Group(*lines)


UNBOUNDED = 10_000  # columns: wider than any table's natural width


def prose(text: str, width: int, style: str = "") -> Text:
    """`text` wrapped at spaces to `width` columns: rich's own wrapping leaves the space it broke at
    at the end of the line, which a reader piping the summary to a file or a diff then sees."""
    return Text("\n".join(textwrap.wrap(text, width, break_on_hyphens=False)), style=style)


def to_rich_split(table: Table) -> RenderableType:
    """The table as grids at any width: its figure columns split into as few parts as fit, each
    part repeating the key columns, so every row stays one line. A column header's first line
    names its figure; the columns of a figure stay in one part."""
    return Split(table)


class Split:
    def __init__(self, table: Table):
        self.table = table

    def __rich_console__(self, console: Console, options: ConsoleOptions):
        table = self.table
        yield Text(table.title, style="bold")
        if not table.rows:
            yield Text(table.empty)
        for number, part in enumerate(column_parts(table, console, options)):
            if number:
                yield Text("")
            yield compact_grid(table, part)
        if table.note:
            yield prose(table.note, options.max_width, "dim")
        yield from (prose(notice, options.max_width, "yellow") for notice in table.notices)


def figure_groups(table: Table) -> list[list[int]]:
    """The figure columns' indexes, consecutive columns whose header starts alike grouped."""
    groups: list[list[int]] = []
    for index in range(table.key_columns, len(table.columns)):
        figure = table.columns[index].split("\n")[0]
        if groups and table.columns[groups[-1][0]].split("\n")[0] == figure:
            groups[-1].append(index)
        else:
            groups.append([index])
    return groups


def column_parts(table: Table, console: Console, options: ConsoleOptions) -> list[list[int]]:
    """Figure groups packed in order into parts no wider than the terminal (a group wider than it
    alone still gets its own part)."""
    keys = list(range(table.key_columns))
    unbounded = options.update_width(UNBOUNDED)  # a table measured within the width says it fits
    parts: list[list[int]] = []
    for group in figure_groups(table):
        wider = [*(parts[-1] if parts else keys), *group]
        if parts and Measurement.get(console, unbounded, compact_grid(table, wider)).maximum <= options.max_width:
            parts[-1] = wider
        else:
            parts.append(keys + group)
    return parts


def compact_grid(table: Table, columns: list[int]) -> RichTable:
    """Borderless but for the rule under the header: two characters between columns."""
    rendered = RichTable(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1))
    for index in columns:
        rendered.add_column(table.columns[index], justify=table.align(index), no_wrap=True)
    for row in table.rows:
        rendered.add_row(*(row[index] for index in columns))
    return rendered


def to_markdown(table: Table) -> str:
    lines = [f"## {table.title}", ""]
    if table.rows:
        lines.append("| " + " | ".join(table.columns) + " |")
        lines.append("|" + "".join("---|" if table.align(i) == "left" else "---:|" for i in range(len(table.columns))))
        lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in table.rows]
    else:
        lines.append(f"_{table.empty}_")
    if table.note:
        lines += ["", table.note]
    lines += [line for notice in table.notices for line in ("", f"**{notice}**")]
    return "\n".join(lines) + "\n"


LATEX_SPECIAL = {c: "\\" + c for c in "&%$#_{}"} | {"~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                                                    "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(LATEX_SPECIAL.get(c, c) for c in text)


def to_latex(table: Table) -> str:
    """A booktabs `table` float, its title the caption and its note under the tabular."""
    spec = "".join("l" if table.align(i) == "left" else "r" for i in range(len(table.columns)))
    lines = [r"\begin{table}", r"\centering", rf"\caption{{{latex_escape(table.title)}}}",
             rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
             " & ".join(map(latex_escape, table.columns)) + r" \\", r"\midrule"]
    lines += [" & ".join(map(latex_escape, row)) + r" \\" for row in table.rows]
    lines += [r"\bottomrule", r"\end{tabular}"]
    notes = [table.note, *table.notices] if table.rows else [table.empty, table.note, *table.notices]
    lines += [rf"\par\footnotesize {latex_escape(note)}" for note in notes if note]
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def to_csv(table: Table) -> str:
    """The header and the rows only: a title or a note is no CSV record."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(table.columns)
    writer.writerows(table.rows)
    return buffer.getvalue()


# `bench report --format`: a table as text a paper takes
PAPER_FORMATS = {"markdown": to_markdown, "latex": to_latex, "csv": to_csv}
