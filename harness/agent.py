"""One episode: a question, an arm and a model, through LiteLLM's tool-calling loop.

The episode never raises for anything a model or tool does: a bad tool call becomes an error
message to the model; a provider failure, or a tool whose backend is gone (ToolInfraError), ends
the episode as an infra error. What it returns is everything a run record needs; grading happens
elsewhere.
"""
from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Literal

import litellm

import harness.models  # noqa: F401  (registers the offline providers)
from arms.base import Arm, ToolError, ToolInfraError, ToolOutcome
from graders.strict import extract_answer
from harness.questions import Question

DEFAULT_BUDGET = 24

SYSTEM_PROMPT = """\
You are a careful research agent. Answer the user's question using the tools you are given; \
look the facts up rather than relying on memory. Each tool call counts against a budget of \
{budget} tool calls.

When you are done, reply without calling a tool. The last line of that reply must be:
ANSWER: <your answer>
If the answer has several items, put all of them on that one line, joined by the separator the \
question asks for. Write each item exactly in the format the question asks for, with no extra words."""

StopReason = Literal["answered", "stopped", "budget", "infra_error"]


def system_prompt(budget: int) -> str:
    return SYSTEM_PROMPT.format(budget=budget)


def prompt_hash(budget: int) -> str:
    return hashlib.sha256(system_prompt(budget).encode()).hexdigest()


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float | None = 0.0  # becomes None as soon as one call has no known price

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
    stop_reason: StopReason = "stopped"
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    actions_by_tool: Counter[str] = field(default_factory=Counter)
    tool_errors: int = 0
    model_seconds: float = 0.0
    tool_seconds: float = 0.0
    wall_seconds: float = 0.0
    provider: str | None = None
    transcript: list[dict[str, Any]] = field(default_factory=list)

    @property
    def actions(self) -> int:
        return sum(self.actions_by_tool.values())


async def run_episode(
    question: Question,
    arm: Arm,
    model: str,
    *,
    budget: int = DEFAULT_BUDGET,
    completion_kwargs: dict[str, Any] | None = None,
) -> Episode:
    episode = Episode()
    started = time.perf_counter()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system_prompt(budget)},
        {"role": "user", "content": question.prompt()},
    ]
    try:
        await _loop(episode, messages, arm, model, budget, completion_kwargs or {})
    finally:
        episode.wall_seconds = time.perf_counter() - started
        episode.transcript = messages
    return episode


async def _loop(
    episode: Episode,
    messages: list[dict[str, Any]],
    arm: Arm,
    model: str,
    budget: int,
    completion_kwargs: dict[str, Any],
) -> None:
    while True:
        response = await _complete(episode, messages, arm, model, completion_kwargs)
        if response is None:
            return
        message = response.choices[0].message
        tool_calls = list(message.tool_calls or [])
        messages.append(_assistant_message(message.content, tool_calls))
        if not tool_calls:
            episode.final_message = message.content
            episode.answer = extract_answer(message.content)
            episode.stop_reason = "answered" if episode.answer else "stopped"
            return
        for call in tool_calls:
            if episode.actions >= budget:
                episode.stop_reason = "budget"
                return
            try:
                outcome = await _call_tool(episode, arm, call.function.name, call.function.arguments)
            except ToolInfraError as error:
                episode.stop_reason = "infra_error"
                episode.error = f"ToolInfraError: {error}"
                return
            messages.append(
                {
                    "role": "tool",
                    "tool_call_id": call.id,
                    "name": call.function.name,
                    "content": outcome.to_message_content(),
                }
            )


async def _complete(episode, messages, arm, model, completion_kwargs):
    started = time.perf_counter()
    try:
        response = await litellm.acompletion(
            model=model,
            messages=messages,
            tools=arm.schemas() or None,
            tool_choice="auto" if arm.tools else None,
            **completion_kwargs,
        )
    except Exception as error:  # any provider failure ends the run as an infra error
        episode.stop_reason = "infra_error"
        episode.error = f"{type(error).__name__}: {error}"
        return None
    finally:
        episode.model_seconds += time.perf_counter() - started
    episode.usage.add(response)
    episode.provider = episode.provider or _provider_of(response)
    return response


async def _call_tool(episode: Episode, arm: Arm, name: str, arguments: str | None) -> ToolOutcome:
    episode.actions_by_tool[name] += 1
    started = time.perf_counter()
    tool = arm.tool(name)
    if tool is None:
        known = [t.name for t in arm.tools]
        outcome = ToolOutcome(
            ToolError("unknown_tool", f"no tool named {name!r}", valid_choices=known).as_result(),
            is_error=True,
        )
    else:
        outcome = await tool.invoke(arguments)
    episode.tool_seconds += time.perf_counter() - started
    episode.tool_errors += outcome.is_error
    return outcome


def _assistant_message(content: str | None, tool_calls: list[Any]) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.function.name, "arguments": call.function.arguments},
            }
            for call in tool_calls
        ]
    return message


def _provider_of(response: Any) -> str | None:
    hidden = getattr(response, "_hidden_params", None) or {}
    return hidden.get("custom_llm_provider") or hidden.get("litellm_model_name")
