"""The report's synthesized-arm tables: does a tool an agent built transfer, and what did it cost?

- Transfer: per domain and arm, accuracy on the design questions (the synthesis saw them, with their
  answers) beside the held-out ones (it never did), and the gap. The hand-built tool was written
  against the design questions too, so its gap is the baseline a synthesized tool's is read against.
- Synthesized tools: each tool's hash and source, and the synthesis episode's own cost, which a fair
  comparison adds to the synthesized arm's (it is paid once per tool, not per run).
Both appear only in a run set with a synthesized arm.
"""
from __future__ import annotations

from pathlib import Path

from armbench.analysis.report import arm_figures
from armbench.analysis.summary import grouped
from armbench.analysis.tables import Table, points, usd
from armbench.arms import ARMS
from armbench.arms.frozen_tool import read_synthesis
from armbench.errors import UserError
from armbench.questions import DESIGN, HELDOUT
from armbench.types import RunRecord


def has_synthesized_arm(records: list[RunRecord]) -> bool:
    return any(ARMS.get(record.arm) and ARMS[record.arm].needs_tool_from for record in records)


def transfer_table(records: list[RunRecord]) -> Table:
    def accuracy(runs: list[RunRecord]) -> tuple[str, float | None]:
        figures = arm_figures(runs)
        return ("—", None) if figures is None else (f"{figures.correct}/{figures.graded}", figures.accuracy)

    rows = []
    for (domain, arm), runs in grouped(records, lambda r: (r.domain, r.arm)):
        design, design_accuracy = accuracy([r for r in runs if r.set == DESIGN])
        heldout, heldout_accuracy = accuracy([r for r in runs if r.set == HELDOUT])
        gap = None if design_accuracy is None or heldout_accuracy is None else heldout_accuracy - design_accuracy
        rows.append([domain, arm, design, heldout, points(gap)])
    return Table(
        title="Transfer: design questions (seen when the tools were built) vs held-out",
        columns=["domain", "arm", DESIGN, HELDOUT, "held-out − design"],
        rows=rows,
        key_columns=2,
        note="Correct of graded runs. A synthesis sees the design questions with their answers and never the "
        "held-out ones; the hand-built tool was also written against the design questions. A gap well below "
        "zero is a tool fitted to the questions it was tested on. —: no graded run of that set.",
    )


def synthesized_tools_table(manifest: dict) -> Table:
    rows = []
    for domain, tool in sorted(manifest.get("synthesized_tools", {}).items()):
        try:
            synthesis = read_synthesis(Path(tool["synthesis"])) if tool.get("synthesis") else None
        except UserError:
            synthesis = None
        if synthesis is not None and synthesis.tool_sha256 != tool.get("sha256"):
            synthesis = None  # the folder now holds another tool's synthesis: its cost is not this tool's
        spent = (["—"] * 5 if synthesis is None else
                 [synthesis.model, str(synthesis.actions), f"{synthesis.prompt_tokens + synthesis.completion_tokens:,}",
                  usd(synthesis.cost_usd), f"{synthesis.wall_seconds:.1f}"])
        rows.append([domain, tool.get("name", "?"), tool.get("sha256", "?")[:12], tool.get("source", "?"), *spent])
    return Table(
        title="Synthesized tools, and what building each cost",
        columns=["domain", "tool", "sha256", "source", "built by", "actions", "tokens", "cost", "wall s"],
        rows=rows,
        key_columns=4,
        note="The synthesized arm's tool per domain, as frozen by `bench synthesize` (sha256: of its name, "
        "description, schema and source; every run records it). built by … wall s: the synthesis episode, "
        "paid once per tool and not included in the arm's per-run figures; —: no synthesis.json where the "
        "manifest says, or one of another tool.",
    )


def synthesis_tables(records: list[RunRecord], manifest: dict) -> list[Table]:
    if not has_synthesized_arm(records):
        return []
    return [transfer_table(records), synthesized_tools_table(manifest)]
