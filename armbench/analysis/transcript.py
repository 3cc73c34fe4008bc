"""One run read back for people: its record, its messages as turns, and the reference answer.

Shared by `bench show` (terminal) and the HTML transcripts, so both show the same things.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from armbench.errors import UserError
from armbench.run.store import RunSetStore, open_run_set
from armbench.types import RunRecord, Term


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # pretty-printed JSON, or the raw text when it is not JSON


@dataclass(frozen=True)
class Turn:
    role: str  # system, user, assistant, tool
    text: str
    calls: tuple[Call, ...] = ()
    tool: str | None = None  # the tool a tool result came from


def pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def truncate(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` characters (cut at a line end when one is near) and how many were cut."""
    if len(text) <= limit:
        return text, 0
    cut = text.rfind("\n", limit // 2, limit)
    head = text[: cut if cut > 0 else limit]
    return head, len(text) - len(head)


def to_turn(message: dict) -> Turn:
    role = str(message.get("role", "?"))
    text = str(message.get("content") or "")
    calls = tuple(
        Call(str(call.get("function", {}).get("name")), pretty_json(call.get("function", {}).get("arguments") or ""))
        for call in message.get("tool_calls") or []
    )
    if role == "tool":
        return Turn(role, pretty_json(text), tool=message.get("name"))
    return Turn(role, text, calls)


def read_turns(directory: Path, record: RunRecord) -> list[Turn]:
    path = directory / record.transcript_path
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [to_turn(json.loads(line)) for line in lines if line.strip()]
    except (OSError, ValueError) as error:
        raise UserError(f"cannot read the transcript of {record.run_id} ({path}): {error}") from None


@cache
def _reference_answers(domain: str, set_name: str) -> tuple[str, dict[str, list[str]]] | None:
    from armbench.questions import load_set_file, set_path

    try:
        question_set = load_set_file(set_path(domain, set_name))
    except (UserError, OSError):
        return None
    return question_set.content_hash(), {q.id: list(q.answer) for q in question_set.questions}


def reference_answer(record: RunRecord) -> list[str] | None:
    """The reference from the question bank, only if the set is unchanged since the run."""
    known = _reference_answers(record.domain, record.set)
    if known is None or known[0] != record.question_set_hash:
        return None
    return known[1].get(record.question_id)


def find_run(store: RunSetStore, run_id: str) -> RunRecord:
    records = store.records()
    for record in records:
        if record.run_id == run_id:
            return record
    example = f"; run ids look like {records[0].run_id}" if records else ""
    raise UserError(f"no run {run_id!r} in {store.directory}{example}")


def locate(run_id: str, run_set: Path | None, results: Path) -> tuple[RunSetStore, RunRecord]:
    """The run in `run_set`, or else in the newest run set under `results` that holds it."""
    if run_set is not None:
        store = open_run_set(run_set)
        return store, find_run(store, run_id)
    candidates = sorted(results.glob("*/runs.jsonl"), key=lambda p: p.stat().st_mtime, reverse=True)
    for runs in candidates:
        store = RunSetStore(runs.parent)
        try:
            return store, find_run(store, run_id)
        except UserError:
            continue
    raise UserError(f"no run {run_id!r} in any run set under {results}; pass --run-set DIR")


def described(term: Term | None) -> str:
    """A stored value with its meaning, e.g. `budget (the tool-call budget was spent)`."""
    return "—" if term is None else f"{term} ({term.meaning})"


def verdict(record: RunRecord) -> str:
    if record.correct is None:
        return "injected fault (not graded)" if record.error_kind == "injected" else "infra error (not graded)"
    return "correct" if record.correct else "wrong"


def facts(record: RunRecord, reference: list[str] | None) -> list[tuple[str, str]]:
    """The run's answer, grade and usage as label/value lines, in reading order."""
    tools = ", ".join(f"{tool} {n}" for tool, n in sorted(record.actions_by_tool.items()))
    cost = "unknown" if record.cost_usd is None else f"${record.cost_usd:.5f}"
    lines = [
        ("answer", record.answer if record.answer is not None else "(none)"),
        ("reference", "(unknown: the question set changed since the run)" if reference is None else " | ".join(reference)),
        ("grade", verdict(record)),
        ("outcome", described(record.outcome)),
        ("miss reason", described(record.miss_reason)),
        ("stop reason", described(record.stop_reason)),
        ("actions", f"{record.actions}" + (f" ({tools})" if tools else "") + f", {record.tool_errors} tool error(s)"),
        ("tokens", f"{record.prompt_tokens:,} in, {record.completion_tokens:,} out"),
        ("cost", cost),
        ("time", f"{record.wall_seconds:.2f} s wall ({record.model_seconds:.2f} model, {record.tool_seconds:.2f} tools)"),
    ]
    if record.error:
        lines.append(("error", record.error))
    if record.error_kind:
        lines.append(("error kind", described(record.error_kind)))
    if record.injected_faults:
        lines.append(("injected faults", ", ".join(record.injected_faults)))
    return lines
