"""What one tool call cost beyond its wall time: `CallUsage` (CPU seconds, seconds queued for a
core, limits hit).

The agent loop opens a meter around each call (`metered()`, a context variable, so tasks the call
starts add to it too) and tools `charge()` it from wherever they measure. The figures so reach the
transcript and the run record without a change to what a tool returns, which is what the model is
sent and a replay compares. A tool that measures nothing (an MCP server's, a typed query in the
harness) leaves its meter empty.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any


@dataclass
class CallUsage:
    cpu_seconds: float | None = None  # None: no CPU was measured for the call
    queue_seconds: float = 0.0  # waiting for a core (armbench/tools/admission.py)
    limits_hit: list[str] = field(default_factory=list)  # "cpu_limit", "wall_timeout", "starved", ...
    waiting_for_core: bool = False  # right now: in admission.py's queue (a run timeout then is the machine's doing)
    on_queued: Callable[[float], None] | None = None  # told each wait as it ends (the run's clock gives it back)

    def as_dict(self) -> dict[str, Any]:
        return {
            "cpu_seconds": None if self.cpu_seconds is None else round(self.cpu_seconds, 3),
            "queue_seconds": round(self.queue_seconds, 3),
            "limits_hit": list(self.limits_hit),
        }


_meter: ContextVar[CallUsage | None] = ContextVar("armbench_call_usage", default=None)


@contextmanager
def metered() -> Iterator[CallUsage]:
    """A fresh meter for the tool call made inside the block."""
    usage = CallUsage()
    token = _meter.set(usage)
    try:
        yield usage
    finally:
        _meter.reset(token)


@contextmanager
def queueing() -> Iterator[None]:
    """Marks the call being metered as waiting for a core while the block runs; a call cancelled
    there (its run timed out) keeps the mark, for the loop to tell whose doing the timeout was."""
    usage = _meter.get()
    if usage is not None:
        usage.waiting_for_core = True
    yield  # no `finally`: the mark stays if the block raises
    if usage is not None:
        usage.waiting_for_core = False


def charge(cpu_seconds: float | None = None, queue_seconds: float = 0.0, limit: str | None = None) -> None:
    """Add to the call being metered (nothing happens outside a meter, e.g. in a test)."""
    usage = _meter.get()
    if usage is None:
        return
    if cpu_seconds is not None:
        usage.cpu_seconds = (usage.cpu_seconds or 0.0) + cpu_seconds
    usage.queue_seconds += queue_seconds
    if queue_seconds and usage.on_queued is not None:
        usage.on_queued(queue_seconds)
    if limit is not None:
        usage.limits_hit.append(limit)
