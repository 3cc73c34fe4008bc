"""CPU-heavy tool calls take turns at the machine's cores: `async with admitted() as queued_s:`.

Python sandbox calls (the synthesized tool's included) and browser steps do their work on the
machine's CPUs, and their limits are times. Started all at once (16 runs on 2 cores), each would get
an eighth of a core and a call that takes 6 s alone would pass its 30 s limit: a grade that depends
on the machine's load. So at most `usable_cores()` such calls run at once and the rest wait their
turn here; the wait is reported (`queued_s`), and a call's own limits start after it.

The turns are the machine's, not one process's: Ray actors beside the driver, or two `bench run`s,
share the same cores. A turn is an flock on one of `usable_cores()` files in a folder every process
of the user finds (`turns_folder()`); the kernel lets go of it however the holder ends, so nothing is
stale after a kill -9. Within a process an asyncio semaphore (one per event loop, since asyncio's
primitives belong to one) queues the calls first, so a process polls for at most that many files.

Every holder's own limits end its turn within minutes (a sandbox call at its backstop, a browser step
at its deadline), so a call that finds no turn for TURN_WAIT_LIMIT_S is a harness fault, not a queue:
it ends as ToolInfraError naming the pids that hold the turns (each writes its pid in its file),
instead of holding every process of the machine up behind a stuck one.
"""
from __future__ import annotations

import asyncio
import fcntl
import functools
import math
import os
import random
import tempfile
import time
import weakref
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from armbench.tools.base import ToolInfraError
from armbench.tools.call_usage import charge, queueing
from armbench.tools.cgroups import harness_cpu_quota

POLL_S = 0.02  # how often a call waiting for another process's turn tries again (jittered)
TURN_WAIT_LIMIT_S = 900.0
TURNS_DIR_ENV = "ARMBENCH_CORE_TURNS_DIR"

_limits: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = weakref.WeakKeyDictionary()


@functools.cache
def usable_cores() -> int:
    """The CPUs this process may run on (its affinity), fewer if a cgroup quota allows fewer."""
    cores = len(os.sched_getaffinity(0))
    quota = harness_cpu_quota()
    return max(1, min(cores, math.ceil(quota))) if quota is not None else cores


def turns_folder() -> str:
    """Where the turn files live: $ARMBENCH_CORE_TURNS_DIR, else one folder per user in the temp dir."""
    folder = os.environ.get(TURNS_DIR_ENV) or os.path.join(tempfile.gettempdir(), f"armbench-cores-{os.getuid()}")
    os.makedirs(folder, mode=0o700, exist_ok=True)
    return folder


def try_turn(folder: str, cores: int) -> int | None:
    """A descriptor holding a free turn's lock, or None when every turn is taken."""
    for core in random.sample(range(cores), cores):  # spread the tries: no file is everyone's first
        descriptor = os.open(os.path.join(folder, f"core-{core}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(descriptor)
            continue
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)
        return descriptor
    return None


async def take_turn() -> int:
    folder, cores = turns_folder(), usable_cores()
    deadline = time.monotonic() + TURN_WAIT_LIMIT_S
    while (descriptor := try_turn(folder, cores)) is None:
        if time.monotonic() > deadline:
            raise ToolInfraError(f"no core was free for {TURN_WAIT_LIMIT_S:g} s: the turns in {folder} "
                                 f"are held by {holders(folder, cores)}")
        await asyncio.sleep(POLL_S * random.uniform(0.5, 1.5))
    return descriptor


def holders(folder: str, cores: int) -> str:
    """The pids the turns' files name (their holders, or their last ones)."""
    pids = []
    for core in range(cores):
        try:
            with open(os.path.join(folder, f"core-{core}.lock")) as turn:
                pids.append(turn.read().strip() or "?")
        except OSError:
            pids.append("?")
    return "pids " + ", ".join(pids)


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
        try:
            turn = await take_turn()
        except BaseException:
            limit.release()
            raise
    queued_s = time.monotonic() - started
    charge(queue_seconds=queued_s)  # now, not when the call ends: a run's clock gives the wait back at once
    try:
        yield queued_s
    finally:
        os.close(turn)  # closing the descriptor lets go of its lock
        limit.release()
