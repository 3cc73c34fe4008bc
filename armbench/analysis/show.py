"""`bench show`: one run's transcript in the terminal, then its answer and grade."""
from __future__ import annotations

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from armbench.analysis.transcript import Turn, facts, truncate
from armbench.types import RunRecord

SYSTEM_PREVIEW = 240
RESULT_PREVIEW = 1_500
STYLES = {"system": "dim", "user": "cyan", "assistant": "green", "tool": "yellow"}


def clipped(text: str, limit: int | None) -> tuple[str, Text | None]:
    if limit is None:
        return text, None
    head, hidden = truncate(text, limit)
    return head, Text(f"… {hidden:,} more characters (--full shows everything)", style="dim italic") if hidden else None


def turn_panel(turn: Turn, full: bool) -> Panel:
    limit = None if full else {"system": SYSTEM_PREVIEW, "tool": RESULT_PREVIEW}.get(turn.role)
    text, more = clipped(turn.text, limit)
    parts: list[RenderableType] = []
    if turn.role == "tool":
        parts.append(Syntax(text, "json", word_wrap=True, background_color="default"))
    elif text:
        parts.append(Text(text))
    for call in turn.calls:
        parts.append(Text(f"→ {call.name}", style="bold"))
        parts.append(Syntax(call.arguments, "json", word_wrap=True, background_color="default"))
    if more:
        parts.append(more)
    title = f"tool result · {turn.tool}" if turn.role == "tool" else turn.role
    return Panel(Group(*parts), title=title, title_align="left", border_style=STYLES.get(turn.role, "white"))


def render(record: RunRecord, turns: list[Turn], reference: list[str] | None, *, full: bool = False) -> Group:
    header = Text(f"{record.run_id} · {record.model} · arm {record.arm} · repeat {record.repeat}", style="bold")
    grade_style = "green" if record.correct else "yellow" if record.correct is None else "red"
    summary = Table.grid(padding=(0, 2))
    summary.add_column(style="bold")
    summary.add_column()
    for label, value in facts(record, reference):
        summary.add_row(label, Text(value, style=grade_style if label == "grade" else ""))
    return Group(header, *(turn_panel(turn, full) for turn in turns), Panel(summary, title="result", title_align="left", border_style=grade_style))
