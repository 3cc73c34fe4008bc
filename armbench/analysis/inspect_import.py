"""inspect_ai logs of armbench's own task read back into a run set (`bench import inspect`), so runs
made with `inspect eval armbench/questions` meet `bench run`'s in one `bench report`.

One run record per sample: its run id is what `bench run` would give it (question, arm, epoch - 1
as the repeat), its grade is the `strict_answer` score the log holds (our grader; nothing is
graded again), its hashes are those the task wrote into the eval's metadata when it ran, and its
counts (actions by tool, tool errors, model and tool seconds, a spent budget) are those the
task's solver kept in the sample's metadata (with the stop reason: an inspect limit is one). A
sample inspect recorded as an error, or ended by an operator's or a custom limit, is an infra
error: excluded from accuracy, as `bench run` excludes a run the harness broke. The messages
become the run's transcript, so `bench show` reads it.

Only logs of armbench's task are read: another task's log has no strict grade to import, and a
log `bench export inspect` wrote came from a run set, which `bench report` reads as it is.
inspect-ai is an optional extra, imported only when an import runs.
"""
from __future__ import annotations

import datetime as dt
import json
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from armbench.analysis.inspect_export import require_inspect
from armbench.domains import combined_hash
from armbench.engine.plan import run_id, tool_key
from armbench.engine.store import RunSetStore, describe
from armbench.errors import UserError, first_line
from armbench.provenance import git_commit
from armbench.types import ErrorKind, Manifest, MissReason, Outcome, RunConfig, RunRecord, StopReason

SCORER = "strict_answer"  # armbench.inspect_tasks.strict_answer
HASHES = ("question_set_hash", "tool_manifest_hash", "data_hash", "prompt_hash")
TASK_KEYS = ("domain", "set", "arm", "budget", "armbench", "git_commit", "heldout_tool_changed", *HASHES)
NOT_THE_AGENTS = ("operator", "custom")  # inspect limits that end a sample for reasons of its own


@dataclass(frozen=True)
class Imported:
    directory: Path
    log_count: int
    records: list[RunRecord]


def import_logs(logs: list[Path], out: Path) -> Imported:
    """Write the samples of `logs` (inspect logs of armbench's task, one model and budget) as the
    run set `out`. Bad input (a log that cannot be read or is another task's, logs of two models
    or budgets or of one question set under two hashes, a run in two logs, an `out` that holds a
    run set) is a UserError, and nothing is written then; a failure while writing removes what it wrote."""
    require_inspect("bench import inspect")
    store = RunSetStore(out)
    store.check_new()
    evals = [read_log(path) for path in logs]
    check_one_run_set(evals)
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
    made = not out.exists()
    try:
        with store.writing():
            store.create(manifest)
            for record in sorted(records, key=lambda r: (r.domain, r.set, r.arm, r.question_id, r.repeat)):
                store.write_transcript(record.run_id, transcripts[record.run_id])
                store.append(record)
            store.finish()
    except BaseException as error:
        if made:
            shutil.rmtree(out, ignore_errors=True)
        if isinstance(error, OSError):
            raise UserError(f"cannot write the run set {out}: {error.strerror or error}") from None
        raise
    return Imported(store.directory, len(evals), records)


def read_log(path: Path) -> tuple[Path, Any]:
    """The whole log at `path`, if it is a scored log of armbench's task (else a UserError saying why)."""
    from inspect_ai.log import read_eval_log

    if not path.is_file():
        raise UserError(f"{path}: no such log file")
    try:
        log = read_eval_log(str(path))
    except Exception as error:  # inspect raises what its readers raise: zip, JSON, pydantic errors
        raise UserError(f"{path} is not an inspect log ({type(error).__name__}: {first_line(error)[:200]})") from None
    metadata = log.eval.metadata or {}
    if "run_set" in metadata and "question_set" in metadata:
        raise UserError(f"{path} was written by `bench export inspect` from the run set {metadata['run_set']}: "
                        "report that run set itself")
    missing = [key for key in TASK_KEYS if key not in metadata]
    if missing and log.eval.task.startswith("armbench-"):
        raise UserError(f"{path} was written by an older armbench, whose task did not record "
                        f"{', '.join(missing)}: run it again")
    if missing:
        raise UserError(f"{path} is a log of the task {log.eval.task!r}, not of armbench's "
                        "(inspect eval armbench/questions)")
    budget = metadata["budget"]
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise UserError(f"{path}: the task's budget {budget!r} is not a positive number of tool calls")
    if not log.samples:
        raise UserError(f"{path}: the eval {log.status} before any sample finished")
    if not any(SCORER in (sample.scores or {}) for sample in log.samples):
        raise UserError(f"{path} holds no {SCORER} scores (an eval run with --no-score?): "
                        f"score it first with `inspect score {path}`")
    return path, log


def check_one_run_set(evals: list[tuple[Path, Any]]) -> None:
    """A run set measures one model with one budget, and each of its question sets, tools and
    prompts has one hash."""
    for name, values in (("models", {log.eval.model for _, log in evals}),
                         ("budgets", {log.eval.metadata["budget"] for _, log in evals})):
        if len(values) > 1:
            raise UserError(f"the logs hold {len(values)} {name} ({', '.join(map(str, sorted(values)))}): "
                            "a run set holds one; import each into its own --out")
    for what, key in (("the question set", "question_set_hash"), ("the tools of", "tool_manifest_hash"),
                      ("the data of", "data_hash"), ("the prompt of", "prompt_hash")):
        seen: dict[str, tuple[str, Path]] = {}
        for path, log in evals:
            task = log.eval.metadata
            name = {"question_set_hash": f"{task['domain']}/{task['set']}",
                    "tool_manifest_hash": tool_key(task["arm"], task["domain"])}.get(key, task["domain"])
            digest, first = seen.setdefault(name, (task[key], path))
            if digest != task[key]:
                raise UserError(f"{what} {name} differs between {first} and {path} (it changed between the "
                                "evals): import each into its own --out")


def run_record(path: Path, log: Any, sample: Any, store: RunSetStore) -> tuple[RunRecord, list[dict[str, Any]]]:
    from inspect_ai.scorer import CORRECT

    task = log.eval.metadata
    named = f"{path}: sample {sample.id} (epoch {sample.epoch})"
    episode = (sample.metadata or {}).get("episode")
    if not isinstance(episode, dict):
        raise UserError(f"{named} has no episode in its metadata: it did not run armbench's solver")
    score = (sample.scores or {}).get(SCORER)
    usage = list((sample.model_usage or {}).values())
    costs = [u.total_cost for u in usage]
    error, error_kind = None, None
    if sample.error is not None or score is None:
        error = f"inspect: {sample.error.message if sample.error else f'the sample has no {SCORER} score'}"
        error_kind = ErrorKind.infra
    elif sample.limit is not None:
        error = f"inspect's {sample.limit.type} limit ({sample.limit.limit:g})"
        error_kind = ErrorKind.infra if sample.limit.type in NOT_THE_AGENTS else ErrorKind.agent
    graded = error_kind is not ErrorKind.infra
    metadata = (score.metadata or {}) if score is not None else {}
    key = run_id(str(sample.id), task["arm"], sample.epoch - 1)
    try:
        stop = StopReason.infra_error if not graded else StopReason(
            episode.get("stop_reason") or (StopReason.answered if score.answer else StopReason.stopped))
        record = RunRecord(
            run_id=key, question_id=str(sample.id), domain=task["domain"], set=task["set"], arm=task["arm"],
            repeat=sample.epoch - 1, model=log.eval.model, provider=None,
            answer=score.answer if score is not None else None,
            correct=score.value == CORRECT if graded else None,
            outcome=Outcome(metadata["outcome"]) if graded and metadata.get("outcome") else None,
            miss_reason=MissReason(metadata["miss_reason"]) if graded and metadata.get("miss_reason") else None,
            stop_reason=stop, error=error, error_kind=error_kind,
            cost_usd=None if not costs or None in costs else sum(costs),
            # bench run's prompt tokens (LiteLLM's) count cached ones; inspect's input_tokens do not
            prompt_tokens=sum(u.input_tokens + (u.input_tokens_cache_read or 0) + (u.input_tokens_cache_write or 0)
                              for u in usage),
            completion_tokens=sum(u.output_tokens for u in usage),
            actions=episode.get("actions", 0), actions_by_tool=episode.get("actions_by_tool", {}),
            tool_errors=episode.get("tool_errors", 0),
            wall_seconds=sample.total_time or 0.0, model_seconds=episode.get("model_seconds", 0.0),
            tool_seconds=episode.get("tool_seconds", 0.0),
            **{name: task[name] for name in HASHES},
            transcript_path=store.transcript_path(key), finished_at=sample.completed_at or log.eval.created,
        )
    except ValueError as error:  # a pydantic ValidationError is one too
        detail = describe(error.errors()[:1]) if isinstance(error, ValidationError) else str(error)
        raise UserError(f"{named} is not an armbench run ({detail})") from None
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
        git_commit=tasks[0]["git_commit"],
        question_sets={f"{task['domain']}/{task['set']}": task["question_set_hash"] for task in tasks},
        tool_manifests={tool_key(task["arm"], task["domain"]): task["tool_manifest_hash"] for task in tasks},
        replicas={},
        data_hash=combined_hash({domain: task["data_hash"] for domain, task in by_domain.items()}),
        prompt_hash=combined_hash({domain: task["prompt_hash"] for domain, task in by_domain.items()}),
        versions={"armbench": tasks[0]["armbench"], **first.packages},
        heldout_tool_changed={key: why for task in tasks for key, why in (task["heldout_tool_changed"] or {}).items()},
        imported={"from": "inspect_ai", "at": dt.datetime.now(dt.UTC).isoformat(), "by": git_commit(),
                  "logs": [str(path.resolve()) for path, _ in evals]},
    )
