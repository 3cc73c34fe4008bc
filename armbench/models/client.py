"""One model call as the run engine makes it: rate limited, bounded in time, retried when transient.

Our retry policy is the only one: LiteLLM and the provider SDKs are told not to retry
(`max_retries=0`), so `--max-retries` means what it says. A client is built by the Model
`get_model` returns, which has configured LiteLLM by then; so LiteLLM is imported where a call
needs it, and importing this module (as the run loop does) loads none of it.
"""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

from armbench.models.provider_errors import STOPS_THE_SET, FailureKind, classify, describe, is_transient
from armbench.models.ratelimit import Limiter
from armbench.models.retry import RetryPolicy
from armbench.types import DEFAULT_REQUEST_TIMEOUT


class ProviderFailure(Exception):
    """No usable reply: a non-transient error, or transient ones past the retry limit. Its text
    names the failure's class first (provider_errors.py); `message` gives a recorded one's text."""

    def __init__(self, error: BaseException, attempts: int, kind: FailureKind | None = None,
                 message: str | None = None):
        self.kind = kind or classify(error)
        super().__init__(message or describe(error, self.kind))
        self.error = error
        self.attempts = attempts

    @property
    def with_attempts(self) -> str:
        """What failed and how many attempts it was given, as a person is told."""
        return f"{self} (after {self.attempts} attempt(s))"

    @property
    def context_window_exceeded(self) -> bool:
        """The conversation outgrew the model's context: the agent's failure, not the provider's."""
        return self.kind is FailureKind.context_window

    def stops_the_set(self, first_call: bool) -> bool:
        """Every run would fail the same way (see provider_errors.py)."""
        return self.kind in STOPS_THE_SET or (first_call and self.kind is FailureKind.bad_request)


class ModelCaller(Protocol):
    """What an episode calls the model through: the client, or a recording's player."""

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any = None
    ) -> tuple[Any, int]: ...


@dataclass
class ModelClient:
    model: str
    completion_kwargs: dict[str, Any] = field(default_factory=dict)
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT
    limiter: Limiter | None = None
    rng: random.Random = field(default_factory=random.Random)

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any = None
    ) -> tuple[Any, int]:
        """The response and how many retries it took; raises ProviderFailure."""
        import litellm

        attempt = 0
        while True:
            if self.limiter is not None:
                await self.limiter.acquire()
            try:
                async with asyncio.timeout(self.request_timeout):
                    response = await litellm.acompletion(
                        model=self.model,
                        messages=messages,
                        tools=tools or None,
                        tool_choice=tool_choice if tools else None,
                        max_retries=0,
                        **self.completion_kwargs,
                    )
                return response, attempt
            except Exception as error:  # classified below; nothing a provider does escapes raw
                if isinstance(error, TimeoutError) and not str(error):
                    error = TimeoutError(f"no reply within {self.request_timeout:g} s")
                if not is_transient(error) or attempt >= self.retry.max_retries:
                    raise ProviderFailure(error, attempt + 1) from error
                await asyncio.sleep(self.retry.delay(attempt, error, self.rng))
                attempt += 1


def served_by(response: Any) -> str | None:
    """The provider that served a response: OpenRouter's upstream provider when LiteLLM exposes it."""
    hidden = getattr(response, "_hidden_params", None) or {}
    routed = hidden.get("upstream_provider") or hidden.get("custom_llm_provider")
    model = hidden.get("litellm_model_name") or ""
    return routed or (model.split("/", 1)[0] if "/" in model else None)
