"""A requests-per-minute limit on the provider: at most N model calls start in any 60-second window.

A run set uses one model, so one limiter per run set is one limiter per provider. On a Ray cluster
the one limiter lives in an actor of its own, and each episode actor's client asks it for permits
(armbench/engine/ray_executor.py): anything with `acquire` is a Limiter.
"""
from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol


class Limiter(Protocol):
    async def acquire(self) -> None:
        """Return once a model call may start."""


class RpmLimiter:
    """A sliding-window limiter. Waiters are served in arrival order (the lock is fair)."""

    def __init__(
        self,
        rpm: int,
        *,
        window: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ):
        if rpm < 1:
            raise ValueError("rpm must be at least 1")
        self.rpm = rpm
        self.window = window
        self._clock = clock
        self._sleep = sleep
        self._starts: deque[float] = deque()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        async with self._lock:
            while True:
                now = self._clock()
                while self._starts and self._starts[0] <= now - self.window:
                    self._starts.popleft()
                if len(self._starts) < self.rpm:
                    self._starts.append(now)
                    return
                await self._sleep(self._starts[0] + self.window - now)

