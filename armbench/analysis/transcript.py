"""One run read back for people: its record, its messages as turns, and the reference answer.

Shared by `bench show` (terminal) and the HTML transcripts, so both show the same things.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from armbench.engine.store import RunSetStore, open_run_set
from armbench.errors import UserError
from armbench.types import RunRecord, Term


@dataclass(frozen=True)
class Call:
    name: str
    arguments: str  # pretty-printed JSON, or the raw text when it is not JSON
    id: str | None = None


@dataclass(frozen=True)
class CallUsage:
    """An assistant turn's model call, as the agent records it (transcripts before it have none)."""

    prompt_tokens: int
    completion_tokens: int
    seconds: float | None


@dataclass(frozen=True)
class Turn:
    role: str  # system, user, assistant, tool
    text: str
    calls: tuple[Call, ...] = ()
    tool: str | None = None  # the tool a tool result came from
    call_id: str | None = None  # the call a tool result answers
    usage: CallUsage | None = None


@dataclass(frozen=True)
class Step:
    """A turn as a page shows it: an assistant turn's calls each beside its result."""

    turn: Turn
    results: tuple[Turn | None, ...] = ()  # one per call, in call order; None: the run ended first


@dataclass(frozen=True)
class Block:
    """A part of a call's arguments or a tool's result: multi-line text (code, output, a traceback)
    under its key, shown as is rather than as an escaped JSON string; or the rest, unlabelled."""

    label: str | None
    text: str


def pretty_json(text: str) -> str:
    try:
        return json.dumps(json.loads(text), indent=2, ensure_ascii=False)
    except (ValueError, TypeError):
        return text


def blocks(text: str) -> list[Block]:
    """`text` split for reading: a JSON object's multi-line strings (and any `code`) each a block of
    their own, after the rest of its keys as pretty-printed JSON."""
    try:
        value = json.loads(text)
    except (ValueError, TypeError):
        return [Block(None, text)]
    if not isinstance(value, dict):
        return [Block(None, json.dumps(value, indent=2, ensure_ascii=False))]
    long = {key: item for key, item in value.items() if isinstance(item, str) and ("\n" in item or key == "code")}
    rest = {key: item for key, item in value.items() if key not in long}
    parts = [Block(None, json.dumps(rest, indent=2, ensure_ascii=False))] if rest or not long else []
    return parts + [Block(key, item) for key, item in long.items()]


def truncate(text: str, limit: int) -> tuple[str, int]:
    """The first `limit` characters (cut at a line end when one is near) and how many were cut."""
    if len(text) <= limit:
        return text, 0
    cut = text.rfind("\n", limit // 2, limit)
    head = text[: cut if cut > 0 else limit]
    return head, len(text) - len(head)


def call_usage(recorded: object) -> CallUsage | None:
    if not isinstance(recorded, dict):
        return None
    seconds = recorded.get("seconds")
    return CallUsage(int(recorded.get("prompt_tokens") or 0), int(recorded.get("completion_tokens") or 0),
                     float(seconds) if isinstance(seconds, int | float) else None)


def to_turn(message: dict) -> Turn:
    role = str(message.get("role", "?"))
    text = str(message.get("content") or "")
    calls = tuple(
        Call(str(call.get("function", {}).get("name")), pretty_json(call.get("function", {}).get("arguments") or ""),
             call.get("id"))
        for call in message.get("tool_calls") or []
    )
    if role == "tool":
        return Turn(role, pretty_json(text), tool=message.get("name"), call_id=message.get("tool_call_id"))
    return Turn(role, text, calls, usage=call_usage(message.get("usage")))


def steps(turns: list[Turn]) -> list[Step]:
    """The turns with each tool result moved beside its call: matched by call id, else in order
    (parallel calls are answered one after another, all after the turn that made them)."""
    paired: list[Step] = []
    index = 0
    while index < len(turns):
        turn = turns[index]
        index += 1
        if not turn.calls:
            paired.append(Step(turn))
            continue
        results = []
        while index < len(turns) and turns[index].role == "tool":
            results.append(turns[index])
            index += 1
        ids = {call.id for call in turn.calls if call.id}
        by_id = {result.call_id: result for result in results if result.call_id in ids}
        loose = iter([result for result in results if result.call_id not in ids])
        matched = tuple(by_id[call.id] if call.id in by_id else next(loose, None) for call in turn.calls)
        paired.append(Step(turn, matched))
        paired.extend(Step(result) for result in loose)  # results beyond the calls, shown on their own
    return paired


def transcript_file(directory: Path, record: RunRecord) -> Path:
    """The run's transcript, refused (UserError) when it resolves outside the run set folder: a
    record's path is checked as it is read, but a symlink under transcripts/ could still lead out."""
    path = directory / record.transcript_path
    if not path.resolve().is_relative_to(directory.resolve()):
        raise UserError(f"the transcript of {record.run_id} ({path}) leads out of the run set {directory}; not opened")
    return path


def read_turns(directory: Path, record: RunRecord) -> list[Turn]:
    path = transcript_file(directory, record)
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


def replayed(record: RunRecord) -> bool:
    """Its model turns were played back from a recording: its times are the replay's, not the model's."""
    return record.model.startswith("replay/")


def replay_clock(record: RunRecord) -> bool:
    """Its wall time is the replay's own: a replay from before runs reported their recorded model time."""
    return replayed(record) and not record.replayed_times


def wall_time(record: RunRecord) -> str:
    if record.replayed_times:
        return (f"{record.wall_seconds:.2f} s wall ({record.model_seconds:.2f} model, as recorded; "
                f"{record.tool_seconds:.2f} tools, in the replay)")
    times = f"{record.wall_seconds:.2f} s wall ({record.model_seconds:.2f} model, {record.tool_seconds:.2f} tools)"
    if replayed(record):
        return f"{times} in the replay: the model's turns were read from the recording, so not the recorded run's time"
    return times


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
        ("time", wall_time(record)),
    ]
    if record.error:
        lines.append(("error", record.error))
    if record.error_kind:
        lines.append(("error kind", described(record.error_kind)))
    if record.injected_faults:
        lines.append(("injected faults", ", ".join(record.injected_faults)))
    return lines
