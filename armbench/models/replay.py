"""Record the model's side of a run set, and replay it: the model's turns come from the
recording, the tools run for real against today's replicas and tools.

    <run-set>/recording/<run_id>.jsonl   one line per model call of that run

A line holds `sent`, the messages the harness added since the model's previous turn (the system
prompt and question at step 0, tool results after that), a digest of the offered tools, and the
model's response (or the provider failure). The model's own turns are not stored twice: each is
the previous step's response. So a replay whose `sent` matches at every step made exactly the
recorded requests (the model's own turns, echoed back, are checked against the recorded
responses too), and the first step where it does not — a changed tool result, question or prompt,
or a run that ends before the recording does — is the run's divergence, reported in its record and
failed by `bench regress`. A model call cut short by the run timeout is recorded as `interrupted`
and replayed as the same timeout.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import litellm
from litellm import ModelResponse

from armbench.run.agent import assistant_message
from armbench.models.client import ModelCaller, ProviderFailure, served_by
from armbench.errors import UserError
from armbench.models.jsondiff import first_difference, parsed
from armbench.run.store import RunSetStore

PREFIX = "replay/"


def is_replay(model: str) -> bool:
    return model.startswith(PREFIX)


def tools_digest(tools: list[dict[str, Any]] | None) -> str:
    return hashlib.sha256(json.dumps(tools or [], sort_keys=True).encode()).hexdigest()


class Recorder:
    """A model caller for one run that passes calls through and writes each exchange down."""

    def __init__(self, inner: ModelCaller, path: Path):
        self.inner = inner
        self.path = path
        self.step = 0
        self.seen = 0  # messages the recording already holds (sent, or the model's own turns)

    async def complete(self, messages, tools, tool_choice=None):
        line: dict[str, Any] = {"step": self.step, "sent": messages[self.seen:], "tools": tools_digest(tools)}
        if self.step == 0:
            line["tool_schemas"] = tools or []
        try:
            response, retries = await self.inner.complete(messages, tools, tool_choice)
        except ProviderFailure as failure:
            line["failure"] = {"type": type(failure.error).__name__, "message": str(failure),
                               "attempts": failure.attempts}
            self._write(line)
            raise
        except asyncio.CancelledError:  # the run timeout (or Ctrl-C, whose run is redone anyway)
            self._write({**line, "interrupted": True})
            raise
        line.update(response=response_dict(response), retries=retries)
        self._write(line)
        self.step += 1
        self.seen = len(messages) + 1  # + the assistant turn the loop appends from this response
        return response, retries

    def _write(self, line: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("w" if line["step"] == 0 else "a", encoding="utf-8") as handle:
            handle.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")


@dataclass
class Divergence:
    step: int
    detail: str

    def __str__(self) -> str:
        return f"step {self.step}: {self.detail}"


class ReplayExhausted(Exception):
    """The replay asked for a model call the recording does not hold."""


class RecordedFailure(Exception):
    """A provider failure as it was recorded, raised again at the same step."""


@dataclass
class Player:
    """A model caller for one run that answers from the recording and notes the first divergence."""

    run_id: str
    steps: list[dict[str, Any]]
    divergence: Divergence | None = None
    step: int = 0
    seen: int = 0

    async def complete(self, messages, tools, tool_choice=None):
        step, sent = self.step, messages[self.seen:]
        self.step += 1
        if step >= len(self.steps):
            self._diverge(step, "the recording ends before this model call")
            raise ProviderFailure(ReplayExhausted(f"{self.run_id}: no recorded model call at step {step}"), 1)
        line = self.steps[step]
        echoed = messages[self.seen - 1] if step else None
        self._diverge(step, echo_difference(self.steps[step - 1], echoed) if step else None)
        self._diverge(step, request_difference(line, sent, tools, self.steps[0].get("tool_schemas", [])))
        if line.get("interrupted"):
            raise TimeoutError()  # the run timeout struck during this call when it was recorded
        if "failure" in line:
            raise ProviderFailure(recorded_error(line["failure"]), line["failure"].get("attempts", 1))
        self.seen = len(messages) + 1
        return response_from_dict(line["response"]), line.get("retries", 0)

    def final_divergence(self) -> Divergence | None:
        """The first divergence, counting a run that ended before the recording did."""
        if self.step < len(self.steps):
            self._diverge(self.step, f"the run ended after {self.step} of {len(self.steps)} recorded model calls")
        return self.divergence

    def _diverge(self, step: int, detail: str | None) -> None:
        if detail and self.divergence is None:
            self.divergence = Divergence(step, detail)


class Recording:
    """A recorded run set, opened for replay."""

    def __init__(self, directory: Path):
        self.directory = directory
        self.store = RunSetStore(directory)
        if not self.store.recording_dir.is_dir():
            raise UserError(
                f"{directory} holds no recording ({self.store.recording_dir.name}/ is missing); record "
                "a run set with `bench run --record --out DIR`, then replay it with --model replay/DIR"
            )
        self.manifest = self.store.manifest() if self.store.manifest_path.exists() else {}

    @classmethod
    def from_model(cls, model: str) -> Recording:
        return cls(Path(model[len(PREFIX):]))

    @property
    def recorded_model(self) -> str | None:
        return self.manifest.get("model")

    def load(self, run_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Every planned run's recorded steps, read before any run starts so a gap fails early."""
        missing = [run_id for run_id in run_ids if not self.store.recording_path(run_id).exists()]
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            raise UserError(
                f"the recording in {self.directory} has no run for {len(missing)} planned run(s) "
                f"({shown}); replay with the --arm/--set/--domain/--runs it was recorded with"
            )
        return {run_id: self._steps(run_id) for run_id in run_ids}

    def _steps(self, run_id: str) -> list[dict[str, Any]]:
        path = self.store.recording_path(run_id)
        try:
            return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except (OSError, ValueError) as error:
            raise UserError(f"cannot read the recording {path}: {error}") from None


def request_difference(line: dict[str, Any], sent: list[dict[str, Any]], tools, schemas) -> str | None:
    """How today's request differs from the recorded one, naming the message and the key."""
    if line.get("tools") != tools_digest(tools):
        where = first_difference(_by_name(schemas), _by_name(tools or []))
        return f"the offered tools differ ({where or 'schemas changed'})"
    recorded = line.get("sent", [])
    for old, new in zip(recorded, sent):
        if old != new:
            where = first_difference(_comparable(old), _comparable(new))
            return f"{_describe(old)} differs at {where}" if where else f"{_describe(old)} differs in JSON formatting or key order"
    if len(recorded) != len(sent):
        return f"{len(recorded)} messages were sent to the model before this call, {len(sent)} now"
    return None


def echo_difference(previous: dict[str, Any], echoed: dict[str, Any]) -> str | None:
    """How the model's previous turn, as the loop sent it back, differs from the recorded response."""
    message = previous["response"]["message"]
    expected = {key: message[key] for key in ("role", "content", "tool_calls") if key in message}
    where = first_difference(expected, echoed)
    return f"the model's previous turn, as sent back, differs at {where}" if where else None


def _by_name(schemas: list[dict[str, Any]]) -> dict[str, Any]:
    return {schema.get("function", {}).get("name", "?"): schema for schema in schemas}


def _comparable(message: dict[str, Any]) -> dict[str, Any]:
    return {**message, "content": parsed(message.get("content"))}


def _describe(message: dict[str, Any]) -> str:
    role = message.get("role")
    if role == "tool":
        return f"the result of {message.get('name', 'a tool')} ({message.get('tool_call_id')})"
    return {"system": "the system prompt", "user": "the question"}.get(role, f"a {role} message")


def response_dict(response: Any) -> dict[str, Any]:
    """What a replay needs of a response: the message, finish reason, usage, cost and provider."""
    choice = response.choices[0]
    message = choice.message
    recorded = assistant_message(message.content, list(message.tool_calls or []))
    extra = getattr(message, "provider_specific_fields", None)
    if extra:
        recorded["provider_specific_fields"] = extra
    usage = getattr(response, "usage", None)
    hidden = getattr(response, "_hidden_params", None) or {}
    return {
        "model": response.model,
        "message": recorded,
        "finish_reason": choice.finish_reason,
        "usage": {"prompt_tokens": getattr(usage, "prompt_tokens", 0) or 0,
                  "completion_tokens": getattr(usage, "completion_tokens", 0) or 0},
        "cost_usd": hidden.get("response_cost"),
        "provider": served_by(response),
    }


def response_from_dict(recorded: dict[str, Any]) -> ModelResponse:
    usage = recorded["usage"]
    response = ModelResponse(
        model=recorded.get("model"),
        choices=[{"index": 0, "message": recorded["message"], "finish_reason": recorded.get("finish_reason")}],
        usage={**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    )
    response._hidden_params.update(response_cost=recorded.get("cost_usd"), upstream_provider=recorded.get("provider"))
    return response


def recorded_error(failure: dict[str, Any]) -> Exception:
    """The recorded failure again; a context-window overflow keeps its type, as the loop reads it."""
    if failure.get("type") == "ContextWindowExceededError":
        return litellm.ContextWindowExceededError(message=failure["message"], model="replay", llm_provider="replay")
    return RecordedFailure(failure["message"])
