"""One model call as the run engine makes it: rate limited, bounded in time, retried when transient.

Our retry policy is the only one: LiteLLM and the provider SDKs are told not to retry
(`max_retries=0`), so `--max-retries` means what it says.
"""
from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass, field
from typing import Any, Protocol

import litellm

from armbench.errors import UserError
from armbench.models.ratelimit import RpmLimiter
from armbench.models.retry import RetryPolicy, is_transient

DEFAULT_REQUEST_TIMEOUT = 120.0


class ProviderFailure(Exception):
    """The provider gave no reply: a non-transient error, or transient ones past the retry limit."""

    def __init__(self, error: BaseException, attempts: int):
        name = type(error).__name__
        super().__init__(str(error) if name in str(error) else f"{name}: {error}")
        self.error = error
        self.attempts = attempts


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
    limiter: RpmLimiter | None = None
    rng: random.Random = field(default_factory=random.Random)

    async def complete(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, tool_choice: Any = None
    ) -> tuple[Any, int]:
        """The response and how many retries it took; raises ProviderFailure."""
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


def provider_routing(model: str, order: list[str], ignore: list[str]) -> dict[str, Any]:
    """LiteLLM kwargs for OpenRouter's provider routing (`provider.order`, `provider.ignore`)."""
    if not order and not ignore:
        return {}
    if not model.startswith("openrouter/"):
        raise UserError(
            f"--provider-order/--provider-ignore route OpenRouter requests; {model!r} is not an "
            "openrouter/ model"
        )
    routing: dict[str, Any] = {}
    if order:
        routing["order"] = order
    if ignore:
        routing["ignore"] = ignore
    return {"extra_body": {"provider": routing}}


def served_by(response: Any) -> str | None:
    """The provider that served a response: OpenRouter's upstream provider when LiteLLM exposes it."""
    hidden = getattr(response, "_hidden_params", None) or {}
    routed = hidden.get("upstream_provider") or hidden.get("custom_llm_provider")
    model = hidden.get("litellm_model_name") or ""
    return routed or (model.split("/", 1)[0] if "/" in model else None)
