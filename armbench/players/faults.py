"""Provider misbehaviour for scripted models, named in the model string:

    scripted/<script>+<option>=<value>,<option>=<value>...

    latency=<seconds>  every call waits this long (an asyncio sleep) before the script replies
    faults=<rate>      each call misbehaves with this probability (0..1), one fault drawn evenly from
                       FAULTS: rate_limit (429), server_error (500), timeout and connection_reset
                       raise LiteLLM's exceptions at once; malformed_tool_json and dropped_args
                       corrupt the reply's tool calls (truncated JSON, or no arguments) — a reply
                       without tool calls passes unharmed
    seed=<int>         seeds the fault draw (default 0)

e.g. `scripted/oracle+faults=0.2,seed=1` or `scripted/oracle+latency=1`. The draw is one random
stream per model string: at concurrency 1 a run set sees the same faults every time; with more
workers the rate holds but which call draws which fault follows the scheduling.

Each fault that takes effect is logged to the episode making the call (`faults_injected`), so its
run record lists it and a run whose tool calls were corrupted is not graded as the agent's miss.
LiteLLM is imported only to raise a fault, so the run loop can import this module cheaply.
"""
from __future__ import annotations

import asyncio
import math
import random
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

PROVIDER_FAULTS = ("rate_limit", "server_error", "timeout", "connection_reset")
TOOL_CALL_FAULTS = ("malformed_tool_json", "dropped_args")
FAULTS = PROVIDER_FAULTS + TOOL_CALL_FAULTS
OPTIONS = "latency=<seconds, finite and >= 0>, faults=<rate 0..1>, seed=<int>"


@dataclass
class Misbehaviour:
    latency: float = 0.0
    fault_rate: float = 0.0
    seed: int = 0
    rng: random.Random = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def draw(self) -> str | None:
        """The fault this call suffers, or None."""
        if self.fault_rate and self.rng.random() < self.fault_rate:
            return self.rng.choice(FAULTS)
        return None

    async def delay(self) -> None:
        if self.latency:
            await asyncio.sleep(self.latency)


def parse_options(text: str) -> Misbehaviour:
    """`latency=1,faults=0.2,seed=3` -> Misbehaviour; ValueError naming the bad part."""
    values: dict[str, float | int] = {}
    for part in filter(None, text.split(",")):
        key, _, raw = part.partition("=")
        try:
            if key == "latency":
                values["latency"] = _at_least_zero(float(raw))
            elif key == "faults":
                values["fault_rate"] = _probability(float(raw))
            elif key == "seed":
                values["seed"] = int(raw)
            else:
                raise ValueError
        except ValueError:
            raise ValueError(f"bad scripted-model option {part!r}; options: {OPTIONS}") from None
    return Misbehaviour(**values)


def _at_least_zero(value: float) -> float:
    """A finite number of seconds: `inf` or `nan` would make every call wait forever."""
    if not (math.isfinite(value) and value >= 0):
        raise ValueError
    return value


def _probability(value: float) -> float:
    if not 0 <= value <= 1:
        raise ValueError
    return value


_INJECTED: ContextVar[list[str] | None] = ContextVar("injected_faults", default=None)


@contextmanager
def faults_injected() -> Iterator[list[str]]:
    """The faults injected into the model calls made inside, in order: one episode's, since episodes
    that run at the same time run in separate asyncio tasks, each with its own context."""
    injected: list[str] = []
    token = _INJECTED.set(injected)
    try:
        yield injected
    finally:
        _INJECTED.reset(token)


def log_injected(fault: str) -> None:
    """Note a fault that took effect, for the episode that made the call (none: a call outside one)."""
    injected = _INJECTED.get()
    if injected is not None:
        injected.append(fault)


def raise_provider_fault(fault: str, model: str) -> None:
    import litellm

    where = {"llm_provider": "scripted", "model": model}
    if fault == "rate_limit":
        raise litellm.RateLimitError(message="injected 429", **where)
    if fault == "server_error":
        raise litellm.InternalServerError(message="injected 500", **where)
    if fault == "timeout":
        raise litellm.Timeout(message="injected timeout", **where)
    if fault == "connection_reset":
        raise litellm.APIConnectionError(message="injected: Connection reset by peer", **where)


def corrupt_tool_calls(reply: Any, fault: str) -> Any:
    """The scripted `Reply` with its tool calls' arguments dropped or cut short."""
    if fault == "dropped_args":
        calls = [replace(call, arguments={}) for call in reply.tool_calls]
    else:  # malformed_tool_json: cut short, as a truncated stream would leave them
        calls = [replace(call, arguments=call.wire_arguments()[:-1]) for call in reply.tool_calls]
    return replace(reply, tool_calls=calls)
