"""The scripted LiteLLM provider: `scripted/<name>` plays a deterministic script instead of a model.

A script is a function from what a model would see (the messages and the offered tools) to a
reply: text, tool calls, or a raised provider error. Scripts drive the tests, `scripted/oracle`
checks that every question is solvable with its arm's tools, and the fault scripts let tests see
how the harness survives a misbehaving provider. Options after a `+` add latency or random faults
to any script (`scripted/oracle+faults=0.2,seed=1`; see `faults.py`). Only the model is
scripted: tools, grading and recording run for real.
"""
from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any, Callable

import litellm
from litellm import CustomLLM, ModelResponse

from armbench.models.faults import (
    PROVIDER_FAULTS,
    Misbehaviour,
    corrupt_tool_calls,
    parse_options,
    raise_provider_fault,
)
from armbench.models.litellm_setup import register_price


@dataclass(frozen=True)
class ScriptedToolCall:
    name: str
    arguments: dict[str, Any] | str  # a str is sent verbatim (e.g. malformed JSON)

    def wire_arguments(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments)


@dataclass(frozen=True)
class Reply:
    text: str | None = None
    tool_calls: list[ScriptedToolCall] = field(default_factory=list)


@dataclass(frozen=True)
class Turn:
    """What a script sees: exactly what a model would."""

    messages: list[dict[str, Any]]
    tool_names: list[str]

    @property
    def user_prompt(self) -> str:
        return next(str(m.get("content") or "") for m in self.messages if m.get("role") == "user")

    def tool_results(self) -> list[str]:
        return [str(m.get("content") or "") for m in self.messages if m.get("role") == "tool"]


Script = Callable[[Turn], Reply]
SCRIPTS: dict[str, Script] = {}


def register_script(name: str, *, free: bool = True) -> Callable[[Script], Script]:
    """Register `fn` as `scripted/<name>`. Tests register their own scripts the same way.

    A scripted model costs nothing, so it is priced at $0 unless `free=False`, which leaves it
    unpriced (its cost is then recorded as unknown, as for any model LiteLLM cannot price).
    """

    def decorate(fn: Script) -> Script:
        SCRIPTS[name] = fn
        if free:
            register_price(f"scripted/{name}", 0.0, 0.0)
        return fn

    return decorate


_MISBEHAVIOURS: dict[str, Misbehaviour] = {}  # per model string, so each keeps one random stream


def resolve(model: str) -> tuple[Script, Misbehaviour]:
    """`oracle+faults=0.2` -> the oracle script and its misbehaviour; ValueError naming the problem."""
    name, _, options = model.partition("+")
    script = SCRIPTS.get(name)
    if script is None:
        raise ValueError(f"no script {name!r}; scripts: {', '.join(sorted(SCRIPTS))}")
    if model not in _MISBEHAVIOURS:
        _MISBEHAVIOURS[model] = parse_options(options)
        base = litellm.model_cost.get(f"scripted/{name}")
        if options and base and base.get("input_cost_per_token") is not None:
            register_price(
                f"scripted/{model}", base["input_cost_per_token"] * 1e6, base["output_cost_per_token"] * 1e6
            )
    return script, _MISBEHAVIOURS[model]


def as_dict(message: Any) -> dict[str, Any]:
    return message if isinstance(message, dict) else message.model_dump()


class ScriptedProvider(CustomLLM):
    async def acompletion(self, model: str, messages: list, optional_params: dict, **_: Any):
        try:
            script, misbehaviour = resolve(model)
        except ValueError as error:
            raise litellm.NotFoundError(message=str(error), llm_provider="scripted", model=model) from None
        await misbehaviour.delay()
        fault = misbehaviour.draw()
        if fault in PROVIDER_FAULTS:
            raise_provider_fault(fault, model)
        tools = optional_params.get("tools") or []
        turn = Turn(
            messages=[as_dict(m) for m in messages],
            tool_names=[tool["function"]["name"] for tool in tools],
        )
        reply = script(turn)
        if fault:
            reply = corrupt_tool_calls(reply, fault)
        return to_model_response(model, turn, reply)

    def completion(self, *args: Any, **kwargs: Any):
        raise litellm.BadRequestError(
            message="scripted models are async-only", llm_provider="scripted", model="scripted"
        )


def to_model_response(model: str, turn: Turn, reply: Reply) -> ModelResponse:
    tool_calls = [
        {
            "id": f"call_{uuid.uuid4().hex[:12]}",
            "type": "function",
            "function": {"name": call.name, "arguments": call.wire_arguments()},
        }
        for call in reply.tool_calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    completion_text = (reply.text or "") + "".join(c["function"]["arguments"] for c in tool_calls)
    prompt_tokens = litellm.token_counter(model="gpt-4o", messages=turn.messages)
    completion_tokens = litellm.token_counter(model="gpt-4o", text=completion_text)
    return ModelResponse(
        id=f"scripted-{uuid.uuid4().hex[:12]}",
        created=int(time.time()),
        model=f"scripted/{model}",
        choices=[
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        usage={
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    )


PROVIDER = ScriptedProvider()
