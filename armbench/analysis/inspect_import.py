"""inspect_ai logs of armbench's own task read back into a run set (`bench import inspect`), so runs
made with `inspect eval armbench/questions` meet `bench run`'s in one `bench report`.

One run record per sample: its run id is what `bench run` would give it (question, arm, epoch - 1
as the repeat), its grade is the `strict_answer` score the log holds (our grader; nothing is
graded again), its hashes are those the task wrote into the eval's metadata when it ran, and its
counts (actions by tool, tool errors, model and tool seconds, a spent budget) are those the
task's solver kept in the sample's metadata. A sample inspect recorded as an error is an infra
error: excluded from accuracy, as `bench run` excludes a run the harness broke. The messages
become the run's transcript, so `bench show` reads it.

Only logs of armbench's task are read: another task's log has no strict grade to import, and a
log `bench export inspect` wrote came from a run set, which `bench report` reads as it is.
inspect-ai is an optional extra, imported only when an import runs.
"""
from __future__ import annotations

import datetime as dt
import json
import platform
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from armbench.analysis.inspect_export import require_inspect
from armbench.domains import combined_hash
from armbench.engine.plan import tool_key
from armbench.engine.store import RunSetStore, describe
from armbench.errors import UserError
from armbench.provenance import git_commit
from armbench.types import ErrorKind, Manifest, MissReason, Outcome, RunConfig, RunRecord, StopReason

SCORER = "strict_answer"  # armbench.inspect_tasks.strict_answer
TASK_KEYS = ("domain", "set", "arm", "budget", "armbench", "question_set_hash", "tool_manifest_hash", "data_hash", "prompt_hash")
LIMITS = {"token": StopReason.token_cap, "cost": StopReason.cost_cap, "time": StopReason.timeout,
          "working": StopReason.timeout}


@dataclass(frozen=True)
class Imported:
    directory: Path
    logs: int
    records: list[RunRecord]


def import_logs(logs: list[Path], out: Path) -> Imported:
    """Write the samples of `logs` (inspect logs of armbench's task, one model) as the run set
    `out`. Bad input (a log that cannot be read or is another task's, logs of two models or
    budgets, a run in two logs, an `out` that holds a run set) is a UserError; nothing is written then."""
    require_inspect()
    store = RunSetStore(out)
    store.check_new()
    evals = [read_log(path) for path in logs]
    check_one_model_and_budget(evals)
    records, transcripts, logged_in = [], {}, {}
    for path, log in evals:
        for sample in log.samples or []:
            record, messages = run_record(path, log, sample, store)
            if record.run_id in logged_in:
                raise UserError(f"the run {record.run_id} is in {logged_in[record.run_id]} and in {path}: "
                                "import one log of each task")
            logged_in[record.run_id] = path
            records.append(record)
            transcripts[record.run_id] = messages
    if not records:
        raise UserError("the logs hold no samples")
    manifest = imported_manifest(evals, records)
    with store.writing():
        store.create(manifest)
        for record in sorted(records, key=lambda r: (r.domain, r.set, r.arm, r.question_id, r.repeat)):
            store.write_transcript(record.run_id, transcripts[record.run_id])
            store.append(record)
        store.finish()
    return Imported(store.directory, len(evals), records)


def read_log(path: Path) -> tuple[Path, Any]:
    """The whole log at `path`, if it is one of armbench's task (else a UserError naming why)."""
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise UserError(f"{path}: no such log file")
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # inspect raises what its readers raise: zip, JSON, pydantic errors
        raise UserError(f"{path} is not an inspect log ({type(error).__name__}: {first_line(error)})") from None
    metadata = log.eval.metadata or {}
    if "run_set" in metadata and "question_set" in metadata:
        raise UserError(f"{path} was written by `bench export inspect` from the run set {metadata['run_set']}: "
                        "report that run set itself")
    missing = [key for key in TASK_KEYS if key not in metadata]
    if missing:
        raise UserError(f"{path} is a log of the task {log.eval.task!r}, not of armbench's "
                        f"(inspect eval armbench/questions): its metadata has no {', '.join(missing)}")
    if log.status != "success" and not log.samples:
        raise UserError(f"{path}: the eval {log.status} before any sample finished")
    return path, log


def first_line(error: BaseException) -> str:
    return (str(error).strip().splitlines() or [""])[0][:200]


def run_record(path: Path, log: Any, sample: Any, store: RunSetStore) -> tuple[RunRecord, list[dict[str, Any]]]:
    task = log.eval.metadata
    episode = (sample.metadata or {}).get("episode") or {}
    score = (sample.scores or {}).get(SCORER)
    usage = list((sample.model_usage or {}).values())
    costs = [u.total_cost for u in usage]
    error, error_kind, stop = None, None, StopReason(episode.get("stop_reason") or StopReason.stopped)
    if sample.error is not None or score is None:
        error = f"inspect: {sample.error.message if sample.error else 'the sample has no strict_answer score'}"
        error_kind, stop = ErrorKind.infra, StopReason.infra_error
    elif sample.limit is not None:
        error, error_kind = f"inspect's {sample.limit.type} limit ({sample.limit.limit:g})", ErrorKind.agent
        stop = LIMITS.get(sample.limit.type, StopReason.budget)
    elif score.answer and not episode.get("stop_reason"):
        stop = StopReason.answered
    graded = error_kind is not ErrorKind.infra
    outcome = (score.metadata or {}).get("outcome") if graded else None
    miss = (score.metadata or {}).get("miss_reason") if graded else None
    run_id = f"{sample.id}.{task['arm']}.r{sample.epoch - 1}"  # as `bench run` names it
    try:
        record = RunRecord(
            run_id=run_id,
            question_id=str(sample.id), domain=task["domain"], set=task["set"], arm=task["arm"],
            repeat=sample.epoch - 1, model=log.eval.model, provider=None,
            answer=score.answer if score is not None else None,
            correct=score.value == "C" if graded else None,
            outcome=Outcome(outcome) if outcome else None, miss_reason=MissReason(miss) if miss else None,
            stop_reason=stop, error=error, error_kind=error_kind,
            cost_usd=None if not costs or None in costs else sum(costs),
            prompt_tokens=sum(u.input_tokens for u in usage), completion_tokens=sum(u.output_tokens for u in usage),
            actions=episode.get("actions", 0), actions_by_tool=episode.get("actions_by_tool", {}),
            tool_errors=episode.get("tool_errors", 0),
            wall_seconds=sample.total_time or 0.0, model_seconds=episode.get("model_seconds", 0.0),
            tool_seconds=episode.get("tool_seconds", 0.0),
            **{key: task[key] for key in ("question_set_hash", "tool_manifest_hash", "data_hash", "prompt_hash")},
            transcript_path=store.transcript_path(run_id), finished_at=sample.completed_at or log.eval.created,
        )
    except (ValidationError, ValueError) as error:
        detail = describe(error.errors()[:1]) if isinstance(error, ValidationError) else str(error)
        raise UserError(f"{path}: sample {sample.id} (epoch {sample.epoch}) is not an armbench run ({detail})") from None
    return record, [message(item) for item in sample.messages]


def message(item: Any) -> dict[str, Any]:
    """One inspect ChatMessage as a transcript line, in the OpenAI shape `bench run` stores."""
    if item.role == "assistant":
        line: dict[str, Any] = {"role": "assistant", "content": item.text or None}
        if item.tool_calls:
            line["tool_calls"] = [{"id": call.id, "type": "function", "function": {
                "name": call.function, "arguments": json.dumps(call.arguments, ensure_ascii=False)}}
                for call in item.tool_calls]
        return line
    if item.role == "tool":
        return {"role": "tool", "tool_call_id": item.tool_call_id, "name": item.function, "content": item.text}
    return {"role": item.role, "content": item.text}


def check_one_model_and_budget(evals: list[tuple[Path, Any]]) -> None:
    """A run set measures one model with one budget."""
    for name, values in (("models", {log.eval.model for _, log in evals}),
                         ("budgets", {log.eval.metadata["budget"] for _, log in evals})):
        if len(values) > 1:
            raise UserError(f"the logs hold {len(values)} {name} ({', '.join(map(str, sorted(values)))}): "
                            "a run set holds one; import each into its own --out")


def imported_manifest(evals: list[tuple[Path, Any]], records: list[RunRecord]) -> Manifest:
    """The manifest `bench run` would have written for these runs, with where they came from."""
    tasks = [log.eval.metadata for _, log in evals]
    first = evals[0][1].eval
    by_domain = {task["domain"]: task for task in tasks}
    config = RunConfig(model=first.model, arms=tuple(sorted({task["arm"] for task in tasks})),
                       runs=max(record.repeat for record in records) + 1, budget=tasks[0]["budget"])
    return Manifest(
        created=min(log.eval.created for _, log in evals),
        model=first.model,
        config=config.manifest_config(),
        git_commit=first.revision.commit if first.revision else None,
        question_sets={f"{task['domain']}/{task['set']}": task["question_set_hash"] for task in tasks},
        tool_manifests={tool_key(task["arm"], task["domain"]): task["tool_manifest_hash"] for task in tasks},
        replicas={},
        data_hash=combined_hash({domain: task["data_hash"] for domain, task in by_domain.items()}),
        prompt_hash=combined_hash({domain: task["prompt_hash"] for domain, task in by_domain.items()}),
        versions={"python": platform.python_version(), "armbench": tasks[0]["armbench"], **first.packages},
        imported={"from": "inspect_ai", "at": dt.datetime.now(dt.UTC).isoformat(), "by": git_commit(),
                  "logs": [str(path.resolve()) for path, _ in evals]},
    )
