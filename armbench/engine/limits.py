"""Per-run limits beyond the tool budget: wall time, tokens and cost.

Token and cost caps are checked before each model call, like the tool budget before each tool
call: a run that has reached a cap makes no further call (so it overshoots by at most one call)
and ends with no answer. The wall timeout is enforced around the whole episode.
"""
from __future__ import annotations

from dataclasses import dataclass

from armbench.types import StopReason


@dataclass(frozen=True)
class RunLimits:
    timeout: float | None = None  # seconds of wall time per run
    max_tokens: int | None = None  # prompt + completion tokens per run
    max_cost_usd: float | None = None  # dollars per run
    cost_must_be_known: bool = False  # set when any cost cap (per run or per set) is in force

    def reached(self, tokens: int, cost_usd: float | None) -> tuple[StopReason, str] | None:
        """The cap this run has reached, with a message, or None."""
        if self.max_tokens is not None and tokens >= self.max_tokens:
            return StopReason.token_cap, f"{tokens:,} tokens used; the cap is {self.max_tokens:,} per run"
        if self.max_cost_usd is not None and cost_usd is not None and cost_usd >= self.max_cost_usd:
            return StopReason.cost_cap, f"${cost_usd:.4f} spent; the cap is ${self.max_cost_usd:.4f} per run"
        return None


NO_LIMITS = RunLimits()
