"""CPU-heavy tool calls take turns at the machine's cores: `async with admitted() as queued_s:`.

Python sandbox calls (the synthesized tool's included) and browser steps do their work on the
machine's CPUs, and their limits are times. Started all at once (16 runs on 2 cores), each would get
an eighth of a core and a call that takes 6 s alone would pass its 30 s limit: a grade that depends
on the machine's load. So at most `usable_cores()` such calls run at once and the rest wait their
turn here; the wait is reported (`queued_s`), and a call's own limits start after it.

One limit per event loop, since asyncio's primitives belong to one: a bench process runs all its
workers on one loop; a Ray actor, another process, has a limit of its own.
"""
from __future__ import annotations

import asyncio
import functools
import math
import os
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from armbench.tools.call_usage import charge, queueing
from armbench.tools.cgroups import harness_cpu_quota

_limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


@functools.cache
def usable_cores() -> int:
    """The CPUs this process may run on (its affinity), fewer if a cgroup quota allows fewer."""
    cores = len(os.sched_getaffinity(0))
    quota = harness_cpu_quota()
    return max(1, min(cores, math.ceil(quota))) if quota is not None else cores


@asynccontextmanager
async def admitted() -> AsyncIterator[float]:
    """Hold one of the cores' turns for the block; yields how long the call waited for it."""
    loop = asyncio.get_running_loop()
    limit = _limits.get(loop)
    if limit is None:
        limit = _limits[loop] = asyncio.Semaphore(usable_cores())
    started = time.monotonic()
    with queueing():
        await limit.acquire()
    queued_s = time.monotonic() - started
    charge(queue_seconds=queued_s)  # now, not when the call ends: a run's clock gives the wait back at once
    try:
        yield queued_s
    finally:
        limit.release()
