"""`bench doctor`: check that a provider carries tool calls intact before a run set pays for it.

The probe offers one tiny tool with a required argument and asks the model to call it with a
given word: the arguments must arrive exactly (some providers silently drop them). The tool then
runs for real and its result goes back; the model must reply with the code in it, which shows
that tool results reach the model. Each check is one line; any failure makes the doctor exit 1.

`bench run` makes the same round trip first with a real model (`preflight`): an unreachable
provider or mangled tool arguments would otherwise turn a whole run set into infra errors or,
worse, into the agent's misses.
"""
from __future__ import annotations

import json
import secrets
from dataclasses import dataclass
from typing import Any

from armbench.models.client import ModelCaller, ProviderFailure, served_by
from armbench.models.model import Model
from armbench.models.retry import RetryPolicy
from armbench.players.probe import PROBE_PROMPT, PROBE_TOOL, ProbeTool

PREFLIGHT_MAX_RETRIES = 2  # as `bench doctor` by default: an unreachable provider is named in seconds


@dataclass(frozen=True)
class Check:
    ok: bool
    name: str
    detail: str

    def line(self) -> str:
        return f"{'ok  ' if self.ok else 'FAIL'} {self.name}: {self.detail}"


async def run_probe(client: ModelCaller) -> list[Check]:
    """The checks in order; it stops at the first failure, since later ones depend on it."""
    word, tool = secrets.token_hex(4), ProbeTool(code=secrets.token_hex(3))
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": PROBE_PROMPT.format(tool=PROBE_TOOL, word=word)}
    ]
    forced = {"type": "function", "function": {"name": PROBE_TOOL}}
    try:
        response, retries = await client.complete(messages, [tool.schema()], forced)
    except ProviderFailure as failure:
        return [Check(False, "provider", failure.with_attempts)]
    checks = [Check(True, "provider", f"replied (served by {served_by(response)}, {retries} retries)")]
    message = response.choices[0].message
    problem = _tool_call_problem(message.tool_calls or [], word)
    if problem:
        return [*checks, Check(False, "tool call", problem)]
    call = message.tool_calls[0]
    checks.append(Check(True, "tool call", f"{PROBE_TOOL}(word={word!r}) arrived intact"))

    outcome = await tool.invoke(call.function.arguments)
    messages += [
        {"role": "assistant", "content": message.content, "tool_calls": [
            {"id": call.id, "type": "function",
             "function": {"name": PROBE_TOOL, "arguments": call.function.arguments}}
        ]},
        {"role": "tool", "tool_call_id": call.id, "name": PROBE_TOOL, "content": outcome.to_message_content()},
    ]
    try:
        response, _ = await client.complete(messages, [tool.schema()], "auto")
    except ProviderFailure as failure:
        return [*checks, Check(False, "tool result", f"replying to the tool result: {failure.with_attempts}")]
    reply = response.choices[0].message.content or ""
    if tool.code not in reply:
        return [*checks, Check(False, "tool result", f"the reply does not quote the tool's code: {reply[:200]!r}")]
    return [*checks, Check(True, "tool result", "the model read the tool's result back")]


async def preflight(
    model: Model, completion_kwargs: dict[str, Any] | None = None, request_timeout: float | None = 60.0
) -> Check | None:
    """The doctor's round trip before a run set: its first failed check, or None when tool calls
    survive it."""
    client = model.client(completion_kwargs, RetryPolicy(max_retries=PREFLIGHT_MAX_RETRIES), request_timeout)
    return next((check for check in await run_probe(client) if not check.ok), None)


def _tool_call_problem(tool_calls: list[Any], word: str) -> str | None:
    if not tool_calls:
        return "the model replied without calling the tool (does this model support tool calling?)"
    call = tool_calls[0]
    if call.function.name != PROBE_TOOL:
        return f"the model called {call.function.name!r}, not {PROBE_TOOL!r}"
    raw = call.function.arguments
    try:
        arguments = json.loads(raw) if raw and raw.strip() else {}
    except ValueError:
        return f"the arguments are not valid JSON: {raw[:200]!r}"
    if not arguments:
        return (f"the arguments arrived empty ({raw!r}) although `word` is required: the provider "
                "dropped them")
    if arguments.get("word") != word:
        return f"word arrived as {arguments.get('word')!r}, the prompt asked for {word!r}"
    return None
