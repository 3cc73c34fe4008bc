"""A run set as inspect_ai eval logs, so `inspect view` opens armbench results (`bench export inspect`).

One log per domain × set × arm; one sample per run: its id the question id and its epoch the repeat
+ 1 (inspect's own shape for repeats, so epochs of one question line up), the run id in its metadata.
A sample holds the prompt, the reference answer, every message of the transcript (tool calls paired
with their results), the grade as a `correct` score (C or I; an infra error or an injected fault is
unscored and carries the error), the outcome, miss reason and stop reason, and the run's tokens, cost
and times. A log's metadata holds the run set's hashes: data, prompt, its question set and its tool
manifest (and every other one of the run set).

inspect-ai is an optional extra (`pip install -e '.[inspect]'`), imported only when an export runs.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from armbench.analysis.transcript import transcript_file
from armbench.engine.store import RunSetStore, open_run_set, unwritable
from armbench.errors import UserError
from armbench.provenance import version
from armbench.questions import load_set_file, set_path
from armbench.types import Question, RunRecord, StopReason, Term

PIN = "inspect-ai==0.3.285"
SCORER = "correct"
Key = tuple[str, str, str]  # domain, set, arm


@dataclass(frozen=True)
class Export:
    logs: list[Path]  # one per domain × set × arm, in that order
    samples: int
    notes: list[str]  # what a reader of the logs should know (e.g. runs without a transcript)


def export_run_set(run_set: Path, out: Path | None = None) -> Export:
    """Write one inspect_ai log per domain × set × arm of `run_set` into `out` (default
    `<run-set>/inspect/`). Bad input (not a run set, no runs, an unwritable `out`, inspect-ai not
    installed) is a UserError."""
    store = open_run_set(run_set)
    records = store.records_to_report()
    manifest = store.manifest()
    require_inspect("bench export inspect")
    out = run_set / "inspect" if out is None else out
    prepare(out)
    from inspect_ai.log import write_eval_log

    groups: dict[Key, dict[str, RunRecord]] = defaultdict(dict)
    for record in records:  # a run id twice (never written so): the last record stands
        groups[(record.domain, record.set, record.arm)][record.run_id] = record
    logs, notes, missing = [], [], []
    for key in sorted(groups):
        runs = sorted(groups[key].values(), key=lambda r: (r.question_id, r.repeat))
        log = eval_log(store, manifest, key, runs, missing)
        path = out / log_name(manifest, key)
        try:
            write_eval_log(log, str(path), format="eval")
        except OSError as error:
            raise UserError(f"cannot write {path}: {error.strerror or error}") from None
        logs.append(path)
    if missing:
        notes.append(f"{len(missing)} run(s) without a transcript (e.g. {missing[0]}): "
                     "their samples hold the prompt and grade but no messages")
    unknown = sorted({f"{r.domain}/{r.set}" for r in records if question_of(r) is None})
    if unknown:
        notes.append(f"reference answers left empty for {', '.join(unknown)}: "
                     "the question set changed since the run or is gone")
    return Export(logs, sum(len(runs) for runs in groups.values()), notes)


def require_inspect(command: str) -> None:
    try:
        import inspect_ai.log  # noqa: F401
    except ImportError:
        # No square brackets: the CLI prints errors as Rich markup, which would swallow `.[inspect]`.
        raise UserError(f"{command} needs inspect-ai (armbench's `inspect` extra): pip install '{PIN}'") from None


def prepare(out: Path) -> None:
    """`out` made (with its parents) and able to take files, else a UserError naming --out."""
    if out.exists() and not out.is_dir():
        raise UserError(f"--out {out} is a file, not a folder")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise UserError(f"cannot make --out {out}: {error.strerror}") from None
    problem = unwritable(out)
    if problem:
        raise UserError(f"--out {out} takes no files ({problem})")


def log_name(manifest: dict[str, Any], key: Key) -> str:
    """inspect's `<timestamp>_<task>_<task id>.eval`, fixed per run set so a second export overwrites."""
    stamp = str(manifest.get("created", "")).replace(":", "-").split(".")[0] or "undated"
    return f"{stamp}_{task_name(key)}_{short_id(manifest, *key, 'task')}.eval"


def task_name(key: Key) -> str:
    return "-".join(key)


def short_id(manifest: dict[str, Any], *parts: str) -> str:
    """A stable id from the run set's creation time, model and `parts`."""
    return digest(manifest.get("created"), manifest.get("model"), *parts)


def digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:22]


# --- one log -------------------------------------------------------------------------------------

def eval_log(store: RunSetStore, manifest: dict[str, Any], key: Key, runs: list[RunRecord], missing: list[str]):
    from inspect_ai.log import EvalConfig, EvalDataset, EvalLog, EvalPlan, EvalPlanStep, EvalRevision, EvalSpec

    domain, set_name, arm = key
    config = manifest.get("config") or {}
    generate_config, model_args = generation(config.get("completion_kwargs") or {})
    base_url = model_args.pop("api_base", None)
    model = manifest.get("model") or runs[0].model
    samples = [sample(store.directory, record, config, missing) for record in runs]
    question_ids = sorted({record.question_id for record in runs})
    commit = manifest.get("git_commit")
    started, finished = times(runs)
    spec = EvalSpec(
        eval_id=short_id(manifest, *key, "eval"),
        run_id=short_id(manifest, "run"),  # one inspect run: every log of the run set
        task_id=short_id(manifest, *key, "task"),
        created=manifest.get("created") or started,
        task=task_name(key),
        task_display_name=f"{domain} {set_name} · {arm} arm",
        task_args={"domain": domain, "set": set_name, "arm": arm},
        solver=f"armbench/{arm}",
        tags=[domain, set_name, arm],
        dataset=EvalDataset(name=f"{domain}/{set_name}", location=str(set_path(domain, set_name)),
                            samples=len(question_ids), sample_ids=question_ids),
        model=model,
        model_generate_config=generate_config,
        model_base_url=base_url,
        model_args=model_args,
        config=EvalConfig(epochs=config.get("runs") or max(r.repeat for r in runs) + 1,
                          max_samples=config.get("concurrency")),
        revision=EvalRevision(type="git", origin="", commit=commit) if commit else None,
        packages={"armbench": version(), **(manifest.get("versions") or {})},
        metadata=log_metadata(store, manifest, key),
    )
    plan = EvalPlan(name="armbench", steps=[EvalPlanStep(solver=f"armbench/{arm}", params={
        "budget": config.get("budget"), "tools": config.get("tools")})])
    return EvalLog(status="success", eval=spec, plan=plan, results=results(runs, samples),
                   stats=stats(model, runs, started, finished), samples=samples)


GENERATION = ("temperature", "max_tokens", "seed", "top_p", "top_k", "reasoning_effort",
              "frequency_penalty", "presence_penalty")


def generation(kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """The run's LiteLLM arguments as inspect's GenerateConfig (the settings it knows) and model
    arguments (the rest); a value GenerateConfig refuses stays a model argument."""
    from inspect_ai.model import GenerateConfig
    from pydantic import ValidationError

    known = {name: kwargs[name] for name in GENERATION if name in kwargs}
    try:
        generate = GenerateConfig(**known)
    except ValidationError:
        return GenerateConfig(), dict(kwargs)
    return generate, {name: value for name, value in kwargs.items() if name not in known}


def log_metadata(store: RunSetStore, manifest: dict[str, Any], key: Key) -> dict[str, Any]:
    domain, set_name, arm = key
    return {
        "run_set": str(store.directory),
        "question_set": f"{domain}/{set_name}",
        "question_set_hash": (manifest.get("question_sets") or {}).get(f"{domain}/{set_name}"),
        "tool_manifest_hash": (manifest.get("tool_manifests") or {}).get(f"{arm}/{domain}"),
        "data_hash": manifest.get("data_hash"),
        "prompt_hash": manifest.get("prompt_hash"),
        "question_sets": manifest.get("question_sets"),
        "tool_manifests": manifest.get("tool_manifests"),
        "git_commit": manifest.get("git_commit"),
        "config": manifest.get("config"),
        **{name: manifest[name] for name in ("sandbox_isolation", "replay_of", "resumes") if name in manifest},
    }


def results(runs: list[RunRecord], samples: list) -> Any:
    from inspect_ai.log import EvalMetric, EvalResults, EvalScore

    graded = [1.0 if record.correct else 0.0 for record in runs if record.correct is not None]
    metrics = {}
    if graded:
        accuracy = sum(graded) / len(graded)
        metrics["accuracy"] = EvalMetric(name="accuracy", value=accuracy)
        if len(graded) > 1:
            spread = sum((value - accuracy) ** 2 for value in graded) / (len(graded) - 1)
            metrics["stderr"] = EvalMetric(name="stderr", value=math.sqrt(spread / len(graded)))
    score = EvalScore(name=SCORER, scorer=SCORER, scored_samples=len(graded),
                      unscored_samples=len(runs) - len(graded), metrics=metrics,
                      metadata={"graded": "every run but infra errors and injected faults"})
    return EvalResults(total_samples=len(samples), completed_samples=len(samples), scores=[score])


def stats(model: str, runs: list[RunRecord], started: str, finished: str) -> Any:
    from inspect_ai.log import EvalStats

    total = None
    for record in runs:
        total = usage(record) if total is None else total + usage(record)
    return EvalStats(started_at=started, completed_at=finished, model_usage={model: total} if total else {})


def times(runs: list[RunRecord]) -> tuple[str, str]:
    """When the first of `runs` started and the last finished (ISO)."""
    spans = [span(record) for record in runs]
    return min(start for start, _ in spans), max(end for _, end in spans)


def span(record: RunRecord) -> tuple[str, str]:
    try:
        end = dt.datetime.fromisoformat(record.finished_at)
    except ValueError:
        return record.finished_at, record.finished_at
    return (end - dt.timedelta(seconds=record.wall_seconds)).isoformat(), end.isoformat()


def usage(record: RunRecord) -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=record.prompt_tokens, output_tokens=record.completion_tokens,
                      total_tokens=record.prompt_tokens + record.completion_tokens, total_cost=record.cost_usd)


# --- one sample ----------------------------------------------------------------------------------

def sample(directory: Path, record: RunRecord, config: dict[str, Any], missing: list[str]) -> Any:
    from inspect_ai.log import EvalError, EvalSample

    raw = read_messages(directory, record)
    if raw is None:
        missing.append(record.run_id)
    messages = [message(item, record.model) for item in raw or []]
    question = question_of(record)
    prompt = next((str(m.get("content") or "") for m in raw or [] if m.get("role") == "user"), None)
    if prompt is None:
        prompt = question.prompt() if question else record.question_id
    started, finished = span(record)
    error = None
    if record.correct is None:
        error = EvalError(message=f"{record.error_kind or 'error'}: {record.error or record.stop_reason}",
                          traceback="", traceback_ansi="")
    return EvalSample(
        id=record.question_id,
        epoch=record.repeat + 1,
        input=prompt,
        target=question.join_answer(question.answer) if question else "",
        messages=messages,
        output=output(record, messages),
        scores={SCORER: score(record)},
        metadata=sample_metadata(record, question),
        model_usage={record.model: usage(record)},
        started_at=started,
        completed_at=finished,
        total_time=record.wall_seconds,
        working_time=record.model_seconds + record.tool_seconds,
        uuid=digest(record.run_id, record.finished_at),
        error=error,
        limit=limit(record, config),
    )


def sample_metadata(record: RunRecord, question: Question | None) -> dict[str, Any]:
    fields = record.model_dump(mode="json")
    if question is not None:
        fields["reference_items"] = list(question.answer)
    return fields


def score(record: RunRecord) -> Any:
    from inspect_ai.scorer import CORRECT, INCORRECT, Score

    metadata = {"correct": record.correct, "outcome": _value(record.outcome),
                "miss_reason": _value(record.miss_reason), "stop_reason": _value(record.stop_reason)}
    explanation = "; ".join(f"{label}: {term} ({term.meaning})" for label, term in [
        ("outcome", record.outcome), ("miss reason", record.miss_reason), ("stop reason", record.stop_reason)]
        if term is not None)
    if record.correct is None:
        return Score.unscored(reason=f"not graded: {record.error_kind or 'error'}", answer=record.answer,
                              explanation=explanation + f"; error: {record.error}", metadata=metadata)
    return Score(value=CORRECT if record.correct else INCORRECT, answer=record.answer,
                 explanation=explanation, metadata=metadata)


def _value(term: Term | None) -> str | None:
    return None if term is None else term.value


LIMITS: dict[StopReason, tuple[str, str]] = {
    StopReason.budget: ("custom", "budget"),
    StopReason.timeout: ("time", "run_timeout"),
    StopReason.token_cap: ("token", "max_tokens_per_run"),
    StopReason.cost_cap: ("cost", "max_cost_per_run"),
}


def limit(record: RunRecord, config: dict[str, Any]) -> Any:
    """The harness limit that ended the run, when the manifest holds its value."""
    from inspect_ai.log import EvalSampleLimit

    if record.stop_reason not in LIMITS:
        return None
    kind, setting = LIMITS[record.stop_reason]
    value = config.get(setting) or (config.get("max_cost") if setting == "max_cost_per_run" else None)
    if value is None:
        return None
    return EvalSampleLimit(type=kind, limit=float(value), reason=record.stop_reason.meaning)


def output(record: RunRecord, messages: list) -> Any:
    from inspect_ai.model import ChatCompletionChoice, ChatMessageAssistant, ModelOutput

    finals = [m for m in messages if isinstance(m, ChatMessageAssistant)]
    stop = {StopReason.answered: "stop", StopReason.stopped: "stop", StopReason.budget: "tool_calls",
            StopReason.context_window: "model_length"}.get(record.stop_reason, "unknown")
    choices = [ChatCompletionChoice(message=finals[-1], stop_reason=stop)] if finals else []
    return ModelOutput(model=record.model, choices=choices, completion=finals[-1].text if finals else "",
                       usage=usage(record), time=record.model_seconds)


def read_messages(directory: Path, record: RunRecord) -> list[dict[str, Any]] | None:
    """The transcript's messages as stored (None when the file is gone); a damaged file is a UserError."""
    path = transcript_file(directory, record)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise UserError(f"cannot read the transcript of {record.run_id} ({path}): {error}") from None
    try:
        messages = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as error:
        raise UserError(f"the transcript of {record.run_id} ({path}) is not JSON lines: {error}") from None
    if not all(isinstance(item, dict) for item in messages):
        raise UserError(f"the transcript of {record.run_id} ({path}) holds a line that is not a message")
    return messages


def message(item: dict[str, Any], model: str) -> Any:
    """One stored (OpenAI-style) message as inspect's ChatMessage."""
    from inspect_ai.model import ChatMessageAssistant, ChatMessageSystem, ChatMessageTool, ChatMessageUser

    role, text = item.get("role"), str(item.get("content") or "")
    if role == "system":
        return ChatMessageSystem(content=text)
    if role == "assistant":
        calls = [tool_call(call) for call in item.get("tool_calls") or []]
        return ChatMessageAssistant(content=text, tool_calls=calls or None, model=model, source="generate")
    if role == "tool":
        return ChatMessageTool(content=text, tool_call_id=item.get("tool_call_id"), function=item.get("name"),
                               error=tool_error(text))
    return ChatMessageUser(content=text)


def tool_call(call: dict[str, Any]) -> Any:
    from inspect_ai.tool import ToolCall, ToolCallContent

    function = call.get("function") or {}
    raw = function.get("arguments") or "{}"
    try:
        arguments = json.loads(raw) if isinstance(raw, str) else raw
    except ValueError:
        arguments = None
    parse_error = None
    if not isinstance(arguments, dict):
        arguments, parse_error = {}, f"the arguments are not a JSON object: {raw}"
    view = None
    if isinstance(arguments.get("code"), str):  # the python tool: its code shown as code
        view = ToolCallContent(format="markdown", content=f"```python\n{arguments['code']}\n```")
    return ToolCall(id=str(call.get("id") or ""), function=str(function.get("name")), arguments=arguments,
                    parse_error=parse_error, view=view)


TOOL_ERROR_TYPES = {"timeout": "timeout", "invalid_json": "parsing", "invalid_args": "parsing"}


def tool_error(text: str) -> Any:
    """armbench's `{"error": {"type", "message"}}` tool result as inspect's ToolCallError."""
    from inspect_ai.tool import ToolCallError

    try:
        result = json.loads(text)
    except ValueError:
        return None
    error = result.get("error") if isinstance(result, dict) else None
    if not isinstance(error, dict) or "message" not in error:
        return None
    kind = str(error.get("type", ""))
    return ToolCallError(TOOL_ERROR_TYPES.get(kind, "unknown"), f"{kind}: {error['message']}" if kind else str(error["message"]))


# --- the question bank ---------------------------------------------------------------------------

def question_of(record: RunRecord) -> Question | None:
    """The run's question from the bank, only if its set is unchanged since the run."""
    known = _question_set(record.domain, record.set)
    if known is None or known[0] != record.question_set_hash:
        return None
    return known[1].get(record.question_id)


@cache
def _question_set(domain: str, set_name: str) -> tuple[str, dict[str, Question]] | None:
    try:
        question_set = load_set_file(set_path(domain, set_name))
    except (UserError, OSError):
        return None
    return question_set.content_hash(), {q.id: q for q in question_set.questions}

