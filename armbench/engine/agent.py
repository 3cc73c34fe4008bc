"""One episode: a question, an arm and a model, through LiteLLM's tool-calling loop.

The episode never raises for anything a model or tool does: a bad tool call becomes an error
message to the model; a provider failure (after the client's retries), or a tool whose backend
is gone or starved (ToolInfraError, retryable: `--resume` runs it again), ends the episode as an
infra error. What it returns is everything a run record needs; grading happens elsewhere.

The run timeout ends an episode as `timeout`. Who was being waited on decides what it counts as:
the provider (a model call, its retries or the rate limit) makes it an infra error, excluded from
accuracy like an outage; a tool or the loop itself makes it the agent's failure, graded as no answer.
Time a tool call spends waiting for the harness (a free core: tools/admission.py; a restarting
replica) is not the run's: the deadline moves on by it as each wait ends, and a timeout during such
a wait is a retryable infra error.

A fault injected into a scripted model (`+faults=`) is listed on the episode; one that corrupted the
model's tool calls (their arguments dropped or cut short) ends it as `injected`, excluded from
accuracy: the oracle, handed back a whole table for its query, would answer wrongly with confidence.
"""
from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from armbench.arms.environment import resources_prompt, symbolic
from armbench.engine.limits import NO_LIMITS, RunLimits
from armbench.grading.strict import extract_answer
from armbench.models.client import ModelCaller, ProviderFailure, served_by
from armbench.models.messages import assistant_message
from armbench.players.faults import TOOL_CALL_FAULTS, faults_injected
from armbench.tools.base import ArmTools, OfferedTool, ToolInfraError, ToolOutcome
from armbench.tools.call_usage import CallUsage, metered
from armbench.types import DEFAULT_BUDGET, ErrorKind, Question, StopReason

SYSTEM_PROMPT = """\
You are a careful research agent. Answer the user's question using the tools you are given; \
look the facts up rather than relying on memory. Each tool call counts against a budget of \
{budget} tool calls.

These sites are reachable (nothing else is):
{resources}

When you are done, reply without calling a tool. The last line of that reply must be:
ANSWER: <your answer>
If the answer has several items, put all of them on that one line, joined by the separator the \
question asks for. Write each item exactly in the format the question asks for, with no extra words."""

Phase = Literal["model", "tool", "agent"]


def system_prompt(budget: int, resources: str, template: str = SYSTEM_PROMPT) -> str:
    """The system prompt an episode starts with: a question's (`template`: a synthesis has its own)."""
    return template.format(budget=budget, resources=resources)


def prompt_hash(budget: int, domain: str) -> str:
    """The hash of a domain's system prompt, its replica named, not addressed: the same on any port base."""
    resources = resources_prompt({domain: symbolic(domain)})
    return hashlib.sha256(system_prompt(budget, resources).encode()).hexdigest()


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # becomes None as soon as one call has no known price

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def add(self, response: Any) -> None:
        usage = getattr(response, "usage", None)
        if usage is not None:
            self.prompt_tokens += usage.prompt_tokens or 0
            self.completion_tokens += usage.completion_tokens or 0
        cost = (getattr(response, "_hidden_params", None) or {}).get("response_cost")
        self.cost_usd = None if cost is None or self.cost_usd is None else self.cost_usd + cost


@dataclass
class Episode:
    final_message: str | None = None
    answer: str | None = None
    stop_reason: StopReason = StopReason.stopped
    error: str | None = None
    error_kind: ErrorKind | None = None
    retryable: bool = False  # the harness broke the run (ToolInfraError): `--resume` runs it again
    stops_the_set: bool = False  # a provider failure every run would meet (a 401): retryable too
    usage: Usage = field(default_factory=Usage)
    actions_by_tool: Counter[str] = field(default_factory=Counter)
    tool_errors: int = 0
    empty_tool_args: int = 0  # calls with no arguments to a tool that takes some
    retries: int = 0
    injected_faults: list[str] = field(default_factory=list)  # by a scripted model's `+faults=`
    call_providers: list[str | None] = field(default_factory=list)  # who served each model call
    call_usage: list[dict[str, Any]] = field(default_factory=list)  # each answered model call's tokens and seconds
    tool_usage: list[dict[str, Any]] = field(default_factory=list)  # each answered tool call's seconds, CPU, queue, limits
    tool_cpu_seconds: float = 0.0  # what the tool calls measured (sandbox calls), all calls together
    tool_queue_seconds: float = 0.0  # tool calls waiting for a free core
    tool_limits_hit: list[str] = field(default_factory=list)  # "<tool>:<limit>" per limit a call hit
    calling: CallUsage | None = None  # the meter of the tool call in progress, if one is
    model_seconds: float = 0.0
    tool_seconds: float = 0.0
    wall_seconds: float = 0.0
    waiting_on: Phase = "agent"
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def actions(self) -> int:
        return sum(self.actions_by_tool.values())

    @property
    def provider(self) -> str | None:
        return next((p for p in self.call_providers if p), None)

    def end(self, reason: StopReason, error: str | None = None, kind: ErrorKind | None = None) -> None:
        self.stop_reason, self.error, self.error_kind = reason, error, kind


async def run_episode(
    question: Question,
    arm: ArmTools,
    caller: ModelCaller,
    *,
    budget: int = DEFAULT_BUDGET,
    resources: str = "",
    limits: RunLimits = NO_LIMITS,
) -> Episode:
    return await converse(system_prompt(budget, resources), question.prompt(), arm, caller, budget=budget,
                          limits=limits)


async def converse(
    system: str,
    user: str,
    arm: ArmTools,
    client: ModelCaller,
    *,
    budget: int = DEFAULT_BUDGET,
    limits: RunLimits = NO_LIMITS,
    submitted: Callable[[], bool] = lambda: False,
) -> Episode:
    """The loop behind every episode: a question's run, or a synthesis (which ends as `submitted`
    once its submit tool has frozen a tool, with no further model call). `client`: the model's
    caller, for this run."""
    episode = Episode()
    started = time.perf_counter()
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    with faults_injected() as episode.injected_faults:
        try:
            async with asyncio.timeout(limits.timeout) as deadline:
                await _loop(episode, messages, arm, client, budget, limits, submitted, deadline)
        except TimeoutError:
            _end_by_timeout(episode, limits.timeout)
        finally:
            episode.wall_seconds = time.perf_counter() - started
            episode.transcript = with_call_usage(messages, episode.call_usage, episode.tool_usage)
    _end_by_corrupted_tool_calls(episode)
    return episode


def with_call_usage(
    messages: list[dict[str, Any]], usage: list[dict[str, Any]], tool_usage: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The transcript: each assistant turn with its model call's `usage`, and each tool result with
    its tool call's, in call order. Copies, as `messages` is what the provider is sent (and what a
    replay compares), where the key has no place."""
    calls = {"assistant": iter(usage), "tool": iter(tool_usage)}
    transcript = []
    for message in messages:
        call = next(calls[message["role"]], None) if message["role"] in calls else None
        transcript.append({**message, "usage": call} if call else message)
    return transcript


def _end_by_corrupted_tool_calls(episode: Episode) -> None:
    """However the run ended, it went on from tool calls the agent did not make: neither its miss nor
    its success, and no outage either (the oracle gives up on a call its solution did not send)."""
    corrupting = sorted({f for f in episode.injected_faults if f in TOOL_CALL_FAULTS})
    if corrupting:
        message = f"an injected fault corrupted the tool calls ({', '.join(corrupting)})"
        if episode.error:
            message += f"; then: {episode.error}"
        episode.end(episode.stop_reason, message, ErrorKind.injected)


def _end_by_timeout(episode: Episode, timeout: float | None) -> None:
    where = {"model": "waiting for the model", "tool": "while a tool ran", "agent": "in the agent loop"}
    kind = ErrorKind.infra if episode.waiting_on == "model" else ErrorKind.agent
    limit = f" ({timeout:g} s)" if timeout else ""  # none set: a replay of a recorded timeout
    if episode.calling is not None and episode.calling.waiting_for_core:  # the machine's doing, not the agent's
        episode.end(StopReason.timeout, f"run timeout{limit} while a tool call waited for the harness (a free core "
                    "or a restarting replica)", ErrorKind.infra)
        episode.retryable = True
        return
    episode.end(StopReason.timeout, f"run timeout{limit} {where[episode.waiting_on]}", kind)


def _give_back(deadline: asyncio.Timeout, seconds: float) -> None:
    """A tool call's wait for the harness (a free core, a restarting replica) is not the run's time:
    load must not change a grade. Told as each wait ends, so the deadline moves before it passes."""
    when = deadline.when()
    if when is not None:
        deadline.reschedule(when + seconds)


async def _loop(
    episode: Episode,
    messages: list[dict[str, Any]],
    arm: ArmTools,
    client: ModelCaller,
    budget: int,
    limits: RunLimits,
    submitted: Callable[[], bool],
    deadline: asyncio.Timeout,
) -> None:
    while True:
        cap = limits.reached(episode.usage.tokens, episode.usage.cost_usd)
        if cap:
            reason, message = cap
            episode.end(reason, message, ErrorKind.agent)
            return
        response = await _complete(episode, messages, arm, client)
        if response is None:
            return
        if limits.cost_must_be_known and episode.usage.cost_usd is None:
            unpriced = "LiteLLM could not price a call, so the cost cap cannot be enforced"
            episode.end(StopReason.infra_error, unpriced, ErrorKind.infra)
            return
        message = response.choices[0].message
        tool_calls = list(message.tool_calls or [])
        messages.append(assistant_message(message.content, tool_calls))
        if not tool_calls:
            episode.final_message = message.content
            episode.answer = extract_answer(message.content)
            episode.stop_reason = StopReason.answered if episode.answer else StopReason.stopped
            return
        for call in tool_calls:
            if episode.actions >= budget:
                episode.stop_reason = StopReason.budget
                return
            try:
                outcome, usage = await _call_tool(episode, arm, call.function.name, call.function.arguments,
                                                  deadline)
            except ToolInfraError as error:
                episode.end(StopReason.infra_error, f"ToolInfraError: {error}", ErrorKind.infra)
                episode.retryable = True
                return
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.function.name,
                    "content": outcome.to_message_content(),
                }
            )
            episode.tool_usage.append(usage)
            if submitted():
                episode.stop_reason = StopReason.submitted
                return


async def _complete(episode: Episode, messages, arm: ArmTools, client: ModelCaller):
    started = time.perf_counter()
    episode.waiting_on = "model"
    try:
        response, retries = await client.complete(messages, arm.schemas(), "auto")
    except ProviderFailure as failure:
        episode.retries += failure.attempts - 1
        if failure.context_window_exceeded:
            episode.end(StopReason.context_window, str(failure), ErrorKind.agent)  # the conversation grew too long
        else:
            episode.end(StopReason.infra_error, failure.with_attempts, ErrorKind.infra)
            episode.stops_the_set = episode.retryable = failure.stops_the_set(first_call=not episode.call_usage)
        return None
    finally:
        episode.model_seconds += time.perf_counter() - started
    episode.waiting_on = "agent"
    episode.retries += retries
    episode.usage.add(response)
    episode.call_providers.append(served_by(response))
    usage = getattr(response, "usage", None)
    episode.call_usage.append({
        "prompt_tokens": getattr(usage, "prompt_tokens", None) or 0,
        "completion_tokens": getattr(usage, "completion_tokens", None) or 0,
        "seconds": round(time.perf_counter() - started, 3),  # retries included
    })
    return response


async def _call_tool(
    episode: Episode, arm: ArmTools, name: str, arguments: str | None, deadline: asyncio.Timeout
) -> tuple[ToolOutcome, dict[str, Any]]:
    """The call's outcome, and its usage for the transcript: seconds, CPU seconds, queue seconds, limits hit."""
    episode.actions_by_tool[name] += 1
    episode.waiting_on = "tool"
    started = time.perf_counter()
    tool = arm.tool(name)
    if tool is None:
        usage = CallUsage()
        outcome = arm.unknown_tool(name)
    else:
        episode.empty_tool_args += takes_arguments(tool) and _is_empty(arguments)
        with metered() as usage:
            usage.on_queued = lambda seconds: _give_back(deadline, seconds)
            episode.calling = usage  # left set if the call is cancelled: _end_by_timeout reads it
            try:
                outcome = await tool.invoke(arguments)
            finally:  # a call that ends the run (ToolInfraError) still counts in the run's totals
                _add_tool_usage(episode, name, usage)
            episode.calling = None
    seconds = time.perf_counter() - started
    episode.tool_seconds += seconds
    episode.waiting_on = "agent"
    episode.tool_errors += outcome.is_error
    return outcome, {"seconds": round(seconds, 3), **usage.as_dict()}


def _add_tool_usage(episode: Episode, name: str, usage: CallUsage) -> None:
    episode.tool_cpu_seconds += usage.cpu_seconds or 0.0
    episode.tool_queue_seconds += usage.queue_seconds
    episode.tool_limits_hit += [f"{name}:{limit}" for limit in usage.limits_hit]


def takes_arguments(tool: OfferedTool) -> bool:
    """Whether the tool has parameters, required or not: `{}` may be a legal query (gpu_query's
    every GPU) yet is also what a provider that drops arguments sends; a tool without parameters
    (browser_back) has none to drop. Read from the schema the model saw, so it holds for MCP tools."""
    return bool(tool.schema()["function"]["parameters"].get("properties"))


def _is_empty(arguments: str | None) -> bool:
    if arguments is None or not arguments.strip():
        return True
    try:
        return json.loads(arguments) in ({}, None)
    except (ValueError, RecursionError):  # not JSON, or nested past the parser's depth: not empty either way
        return False

