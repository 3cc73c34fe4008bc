"""`scripted/<name>`: a deterministic script plays the model, behind LiteLLM.

A script is a function from what a model would see (the messages and the offered tools) to a
reply: text, tool calls, or a raised provider error (script_registry.py). Scripts drive the tests,
`scripted/oracle` checks that every question is solvable with its arm's tools, and the fault
scripts let tests see how the harness survives a misbehaving provider. Options after a `+` add
latency or random faults to any script (`scripted/oracle+faults=0.2,seed=1`; see `faults.py`).
Only the model is scripted: tools, grading and recording run for real.
"""
from __future__ import annotations

import time
import uuid
from typing import Any

import litellm
from litellm import CustomLLM, ModelResponse

from armbench.errors import UserError
from armbench.models.litellm_setup import add_custom_provider
from armbench.models.model import Model
from armbench.models.pricing import price_per_million, register_price
from armbench.players.faults import (
    PROVIDER_FAULTS,
    Misbehaviour,
    corrupt_tool_calls,
    log_injected,
    parse_options,
    raise_provider_fault,
)
from armbench.players.script_registry import SCRIPTS, Reply, Script, Turn, register_script
from armbench.players.scripts import BUILT_IN_SCRIPTS

PROVIDER = "scripted"


def set_up() -> None:
    """Route `scripted/...` to the scripts and register the built-in ones (once: get_model's loader)."""
    add_custom_provider(PROVIDER, ScriptedProvider())
    for name, script in BUILT_IN_SCRIPTS.items():
        register_script(name)(script)


class ScriptedModel(Model):
    provider = PROVIDER  # priced per script: $0 unless registered with free=False

    @property
    def answers_every_question(self) -> bool:
        """The oracle plays every question's stored solution; with injected faults some runs fail on purpose."""
        try:
            script, misbehaviour = resolve(self.name.partition("/")[2])
        except ValueError:  # check() says what is wrong with it
            return False
        return script is BUILT_IN_SCRIPTS["oracle"] and misbehaviour.fault_rate == 0

    def check(self) -> None:
        """Refuse an unknown script or a bad option."""
        try:
            resolve(self.name.partition("/")[2])
        except ValueError as error:
            raise UserError(str(error)) from None


_MISBEHAVIOURS: dict[str, Misbehaviour] = {}  # per model string, so each keeps one random stream


def resolve(model: str) -> tuple[Script, Misbehaviour]:
    """`oracle+faults=0.2` -> the oracle script and its misbehaviour; ValueError naming the problem."""
    name, _, options = model.partition("+")
    script = SCRIPTS.get(name)
    if script is None:
        raise ValueError(f"no script {name!r}; scripts: {', '.join(sorted(SCRIPTS))}")
    if model not in _MISBEHAVIOURS:
        _MISBEHAVIOURS[model] = parse_options(options)
        base = price_per_million(f"{PROVIDER}/{name}")
        if options and base:  # the options change how the script behaves, not what it costs
            register_price(f"{PROVIDER}/{model}", PROVIDER, *base)
    return script, _MISBEHAVIOURS[model]


def as_dict(message: Any) -> dict[str, Any]:
    return message if isinstance(message, dict) else message.model_dump()


class ScriptedProvider(CustomLLM):
    async def acompletion(self, model: str, messages: list, optional_params: dict, **_: Any):
        try:
            script, misbehaviour = resolve(model)
        except ValueError as error:
            raise litellm.NotFoundError(message=str(error), llm_provider=PROVIDER, model=model) from None
        await misbehaviour.delay()
        fault = misbehaviour.draw()
        if fault in PROVIDER_FAULTS:
            log_injected(fault)
            raise_provider_fault(fault, model)
        tools = optional_params.get("tools") or []
        turn = Turn(
            messages=[as_dict(m) for m in messages],
            tool_names=[tool["function"]["name"] for tool in tools],
        )
        reply = script(turn)
        if fault and reply.tool_calls:  # a reply without tool calls passes unharmed
            log_injected(fault)
            reply = corrupt_tool_calls(reply, fault)
        return to_model_response(model, turn, reply)

    def completion(self, *args: Any, **kwargs: Any):
        raise litellm.BadRequestError(
            message="scripted models are async-only", llm_provider=PROVIDER, model=PROVIDER
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
