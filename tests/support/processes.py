"""Processes a test starts and watches: two (a `subprocess.Popen` or a forked `bench`) started at
once, racing for one thing (a run set's lock, a port base); processes that must end."""
from __future__ import annotations

import time
from typing import Protocol

from armbench.replicas.supervisor import is_alive


class Process(Protocol):
    def poll(self) -> int | None: ...


def first_to_end(processes: list[Process], seconds: float) -> tuple[Process, Process]:
    """(the one that ended first, the other), once one of the two has ended."""
    deadline = time.monotonic() + seconds
    while all(process.poll() is None for process in processes):
        assert time.monotonic() < deadline, "neither process ended"
        time.sleep(0.02)
    ended = next(process for process in processes if process.poll() is not None)
    return ended, next(process for process in processes if process is not ended)


def gone_within(pids: list[int], seconds: float) -> bool:
    """Whether every one of `pids` has ended (a zombie counts as ended) within `seconds`."""
    deadline = time.monotonic() + seconds
    while any(map(is_alive, pids)):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True
