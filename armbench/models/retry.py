"""Which provider errors are worth retrying, and how long to wait before the next attempt.

Transient: rate limits (429), server errors (5xx), timeouts and broken connections — the same
request may succeed a moment later. Everything else (bad request, auth, not found, a context
window overflow) fails the same way every time, so it is never retried.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache

from armbench.types import DEFAULT_MAX_RETRIES, DEFAULT_RETRY_BASE_DELAY

TRANSIENT_STATUS = {408, 409, 425, 429}


@cache
def transient_types() -> tuple[type[BaseException], ...]:
    """LiteLLM's transient errors, read when a call first fails (LiteLLM is loaded and configured by then)."""
    import litellm

    return (
        litellm.RateLimitError,
        litellm.InternalServerError,
        litellm.ServiceUnavailableError,
        litellm.BadGatewayError,
        litellm.APIConnectionError,  # includes litellm.Timeout
        litellm.Timeout,
        ConnectionError,  # a reset socket that escaped LiteLLM's mapping
        TimeoutError,  # our own per-request deadline
    )


def is_transient(error: BaseException) -> bool:
    if isinstance(error, transient_types()):
        return True
    status = getattr(error, "status_code", None)
    return isinstance(status, int) and (status in TRANSIENT_STATUS or status >= 500)


@dataclass(frozen=True)
class RetryPolicy:
    """Exponential backoff with jitter: attempt n waits between d/2 and d, d = base * 2**n (capped).

    A `Retry-After` the provider sends is honoured when longer, up to `max_delay`.
    """

    max_retries: int = DEFAULT_MAX_RETRIES
    base_delay: float = DEFAULT_RETRY_BASE_DELAY
    max_delay: float = 60.0

    def delay(self, attempt: int, error: BaseException, rng: random.Random) -> float:
        ceiling = min(self.max_delay, self.base_delay * 2**attempt)
        wait = ceiling / 2 + rng.uniform(0, ceiling / 2)
        return max(wait, min(self.max_delay, retry_after(error) or 0.0))


def retry_after(error: BaseException) -> float | None:
    """Seconds from the error's `Retry-After` header, when it has a numeric one."""
    response = getattr(error, "response", None)
    headers = getattr(response, "headers", None) or getattr(error, "headers", None) or {}
    try:
        value = float(headers.get("retry-after", ""))
    except (TypeError, ValueError, AttributeError):
        return None
    return value if value >= 0 else None
