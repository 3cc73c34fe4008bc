"""How long to wait before the next attempt at a provider call that failed transiently (which
failures are transient: provider_errors.py's classes)."""
from __future__ import annotations

import random
from dataclasses import dataclass

from armbench.types import DEFAULT_MAX_RETRIES, DEFAULT_RETRY_BASE_DELAY


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
