"""A model string, read: the provider that serves it, and what that provider knows about it.

`get_model` (armbench.models) picks the provider from the string's prefix and returns its Model,
which knows how to check the string before anything runs, what the model costs, how long a call
may take, whether its replies can be recorded, and how to build the callers a run set's runs use.
This base class is what a provider served through LiteLLM shares; each provider adds its own.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from armbench.errors import UserError
from armbench.models.client import ModelCaller, ModelClient
from armbench.models.pricing import check_priced, register_price
from armbench.models.ratelimit import Limiter, RpmLimiter
from armbench.models.recording import Recorder, recording_path
from armbench.models.retry import RetryPolicy
from armbench.types import DEFAULT_REQUEST_TIMEOUT, ReplayOf, RunConfig


def _no_divergence(_caller: ModelCaller) -> None:
    return None


@dataclass(frozen=True)
class RunCallers:
    """Where each run of a run set gets its model turns from."""

    for_run: Callable[[str], ModelCaller]  # a run id -> the caller its episode uses
    replay_of: ReplayOf | None = None  # a replay: the recording it plays back, for the manifest
    divergence: Callable[[Any], Any] = _no_divergence  # a run's caller -> where it left its recording


class Model(ABC):
    """A model string and its provider (one subclass per provider)."""

    provider: str  # who serves it, as LiteLLM's cost map names the provider
    recordable = True  # False for a replay: its replies are the recording's, none of its own
    needs_preflight = False  # True for a provider over the network: `bench run` first makes the doctor's round trip
    # True when every run should be correct (the oracle): a run that is not is a broken stored
    # solution or harness, never a model's miss, and `bench run` fails on it
    answers_every_question = False

    def __init__(self, name: str):
        self.name = name  # the model string as given, e.g. "scripted/oracle+seed=1"

    @abstractmethod
    def check(self) -> None:
        """Refuse, before anything runs, a model that cannot work: a UserError naming the fix."""

    def default_request_timeout(self, otherwise: float) -> float:
        """Seconds a call may take when --request-timeout is not given; `otherwise` unless the model needs more."""
        return otherwise

    def decoding(self, offered: dict[str, list[dict[str, Any]]]) -> dict[str, Any] | None:
        """How this model's replies are shaped beyond the prompt, for the manifest: None when the
        provider decodes freely (API models). `offered`: "<arm>/<domain>" -> its tool dicts."""
        return None

    def set_price(self, input_per_million: float, output_per_million: float) -> None:
        """`--price`: dollars per million input and output tokens, for a model LiteLLM does not price."""
        register_price(self.name, self.provider, input_per_million, output_per_million)

    def check_priced(self) -> None:
        """A cost cap needs prices: refuse an unpriced model before anything runs."""
        check_priced(self.name)

    def provider_routing(self, order: list[str], ignore: list[str]) -> dict[str, Any]:
        """LiteLLM kwargs for OpenRouter's provider routing (`provider.order`, `provider.ignore`)."""
        if not order and not ignore:
            return {}
        if self.provider != "openrouter":
            raise UserError(
                f"--provider-order/--provider-ignore route OpenRouter requests; {self.name!r} is not an "
                "openrouter/ model"
            )
        routing: dict[str, Any] = {}
        if order:
            routing["order"] = order
        if ignore:
            routing["ignore"] = ignore
        return {"extra_body": {"provider": routing}}

    def client(
        self,
        completion_kwargs: dict[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT,
        limiter: Limiter | None = None,
    ) -> ModelCaller:
        """A caller of the live model: retried, bounded in time, rate limited when given a limiter."""
        return ModelClient(self.name, completion_kwargs or {}, retry or RetryPolicy(), request_timeout, limiter)

    def callers(self, config: RunConfig, run_ids: list[str], run_set: Path,
                limiter: Limiter | None = None) -> RunCallers:
        """One client for every run (so one rate limit: `limiter` when the run set's is shared beyond
        this process, else one of --rpm's own); with --record each run's calls are written to
        `run_set`'s recording."""
        client = self.client(
            config.completion_kwargs,
            RetryPolicy(max_retries=config.max_retries, base_delay=config.retry_base_delay),
            config.request_timeout,
            limiter or (RpmLimiter(config.rpm) if config.rpm else None),
        )
        if config.record:
            return RunCallers(lambda run_id: Recorder(client, recording_path(run_set, run_id)))
        return RunCallers(lambda run_id: client)
