"""`replay/<run-set dir>`: the model's turns come from a recorded run set (recording.py), the
tools run for real against today's replicas and tools.

A replay whose `sent` matches the recording at every step made exactly the recorded requests (the
model's own turns, echoed back, are checked against the recorded responses too), and the first
step where it does not — a changed tool result, question or prompt, or a run that ends before the
recording does — is the run's divergence, reported in its record and failed by `bench regress`. A
call recorded as `interrupted` by the run timeout is replayed as the same timeout.

Replica addresses are data, not part of what is compared: where a domain's replica listens on
another port than when the recording was made (another `ARMBENCH_REPLICA_PORT_BASE`), the
recorded requests and responses are read with today's address in place of the recorded one, so the
model's turns reach today's replica and a moved port is no divergence.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import litellm
from litellm import ModelResponse

from armbench.domains import DOMAINS
from armbench.errors import UserError, read_json_object
from armbench.models.client import ModelCaller, ProviderFailure
from armbench.models.model import Model, RunCallers
from armbench.models.provider_errors import FailureKind
from armbench.models.ratelimit import Limiter
from armbench.models.recording import recording_dir, recording_path, tools_digest
from armbench.models.retry import RetryPolicy
from armbench.players.jsondiff import first_difference, parsed
from armbench.replicas.serve import endpoint
from armbench.types import DEFAULT_REQUEST_TIMEOUT, ReplayOf, RunConfig

MANIFEST = "manifest.json"  # the recorded run set's own manifest (armbench.engine.store writes it)


class ReplayModel(Model):
    provider = "replay"
    recordable = False  # its replies are the recording's: there are none of its own to record

    def __init__(self, name: str):
        super().__init__(name)
        self.directory = Path(name.partition("/")[2])

    def check(self) -> None:
        Recording(self.directory)  # refuses a folder that holds no recording

    def client(
        self,
        completion_kwargs: dict[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        limiter: Limiter | None = None,
    ) -> ModelCaller:
        raise UserError(f"{self.name} plays a recording back; there is no live model to call")

    def callers(self, config: RunConfig, run_ids: list[str], run_set: Path,
                limiter: Limiter | None = None) -> RunCallers:
        """A player per run, each answering from that run's recording (all read before any run starts)."""
        recording = Recording(self.directory)
        steps = recording.load(run_ids, moved_replicas(recording.manifest.get("replicas", {})))
        return RunCallers(
            for_run=lambda run_id: Player(run_id, steps[run_id]),
            replay_of=ReplayOf(directory=str(recording.directory), model=recording.recorded_model,
                               git_commit=recording.manifest.get("git_commit")),
            divergence=Player.final_divergence,
        )


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
            raise recorded_failure(line["failure"])
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
        if not recording_dir(directory).is_dir():
            raise UserError(
                f"{directory} holds no recording ({recording_dir(directory).name}/ is missing); record "
                "a run set with `bench run --record --out DIR`, then replay it with --model replay/DIR"
            )
        manifest = directory / MANIFEST
        self.manifest = read_json_object(manifest, "the recorded run set's manifest") if manifest.exists() else {}

    @property
    def recorded_model(self) -> str | None:
        return self.manifest.get("model")

    def load(self, run_ids: list[str], moved: dict[str, str]) -> dict[str, list[dict[str, Any]]]:
        """Every planned run's recorded steps, read before any run starts so a gap fails early, with
        each `moved` replica address (recorded host:port -> today's) replaced in what was sent and answered."""
        missing = [run_id for run_id in run_ids if not recording_path(self.directory, run_id).exists()]
        if missing:
            shown = ", ".join(missing[:5]) + (" …" if len(missing) > 5 else "")
            raise UserError(
                f"the recording in {self.directory} has no run for {len(missing)} planned run(s) "
                f"({shown}); replay with the --arm/--set/--domain/--runs it was recorded with"
            )
        return {run_id: readdressed(self._steps(run_id), moved) for run_id in run_ids}

    def _steps(self, run_id: str) -> list[dict[str, Any]]:
        path = recording_path(self.directory, run_id)
        try:
            return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        except (OSError, ValueError) as error:
            raise UserError(f"cannot read the recording {path}: {error}") from None


def moved_replicas(recorded: dict[str, str]) -> dict[str, str]:
    """Recorded replica host:port -> today's, for each recorded domain whose replica listens elsewhere now."""
    moved = {}
    for name, address in recorded.items():
        if name in DOMAINS:
            then, now = _host_port(address), _host_port(endpoint(DOMAINS[name].replica).base_url)
            if then != now:
                moved[then] = now
    return moved


def readdressed(steps: list[dict[str, Any]], moved: dict[str, str]) -> list[dict[str, Any]]:
    """A run's steps with each moved host:port replaced in what was sent, answered and offered (tool
    descriptions name the live replica); the tools digest is recomputed to match."""
    if not moved or not steps:
        return steps
    pattern = re.compile("|".join(re.escape(then) + r"(?!\d)" for then in moved))

    def rewrite(value: Any) -> Any:
        return json.loads(pattern.sub(lambda m: moved[m.group(0)], json.dumps(value)))

    schemas = steps[0].get("tool_schemas", [])
    digests = {tools_digest(schemas): tools_digest(rewrite(schemas))}
    result = []
    for step in steps:
        step = {**step, **{key: rewrite(step[key]) for key in ("sent", "response", "tool_schemas") if key in step}}
        step["tools"] = digests.get(step.get("tools"), step.get("tools"))
        result.append(step)
    return result


def _host_port(base_url: str) -> str:
    return base_url.split("://", 1)[-1].rstrip("/")


def request_difference(line: dict[str, Any], sent: list[dict[str, Any]], tools, schemas) -> str | None:
    """How today's request differs from the recorded one, naming the message and the key."""
    if line.get("tools") != tools_digest(tools):
        where = first_difference(_by_name(schemas), _by_name(tools or []))
        return f"the offered tools differ ({where or 'schemas changed'})"
    recorded = line.get("sent", [])
    for old, new in zip(recorded, sent, strict=False):
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


def response_from_dict(recorded: dict[str, Any]) -> ModelResponse:
    usage = recorded["usage"]
    response = ModelResponse(
        model=recorded.get("model"),
        choices=[{"index": 0, "message": recorded["message"], "finish_reason": recorded.get("finish_reason")}],
        usage={**usage, "total_tokens": usage["prompt_tokens"] + usage["completion_tokens"]},
    )
    response._hidden_params.update(response_cost=recorded.get("cost_usd"), upstream_provider=recorded.get("provider"))
    return response


def recorded_failure(failure: dict[str, Any]) -> ProviderFailure:
    """The recorded failure again, with its words and class (a recording made before failures had
    a class keeps a context-window overflow's type, as classify reads it)."""
    if failure.get("type") == "ContextWindowExceededError":
        error: Exception = litellm.ContextWindowExceededError(message=failure["message"], model="replay",
                                                              llm_provider="replay")
    else:
        error = RecordedFailure(failure["message"])
    kind = FailureKind[failure["kind"]] if failure.get("kind") in FailureKind.__members__ else None
    return ProviderFailure(error, failure.get("attempts", 1), kind, failure["message"])
