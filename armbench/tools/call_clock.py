"""The clock a sandbox call's time limits run on: `CallClock`, sampled from the call's cgroup leaf.

- CPU time: what the leaf's processes used, all together (the kernel counts it per cgroup).
- Waited time: the wall time in which the call was ready to run but held from a CPU, by other
  processes (the longest run-queue delay of any one of its threads, /proc/<tid>/schedstat: threads
  of one call that queue behind each other add nothing) or by a CPU quota on its leaf (cpu.stat's
  throttled time).
- Awaited time: the wall time in which the call waited for a replica's reply (the replica gate
  counts it, tools/replica_gate.py): how long a reply takes is the harness's doing, however busy the
  machine is, and what the call's traffic costs is held to its share of the server there.
- Own time: the rest of the wall time. A call that keeps the usable cores busy is on its own time
  whatever its threads wait for each other (a fork bomb waits on itself, not on the machine).

Its wall limit counts own time, so a call the machine starves is not timed out for it: a script
that sleeps runs on its own time and is stopped at the limit as on an idle machine. Without a leaf
no CPU wait is measured: own time is wall time less the awaited time.
"""
from __future__ import annotations

import time
from collections.abc import Callable

from armbench.tools.cgroups import CallCgroup

SAMPLE_S = 0.1  # how often a running call is measured: its limits hold to about this
# The kernel credits throttled time in lumps, when a quota period ends, so a sample may see more
# waiting than its interval and the next one none: the excess is carried over, up to this much.
CARRY_S = 0.3


class CallClock:
    def __init__(self, leaf: CallCgroup | None, cores: int, awaited: Callable[[], float] | None = None):
        """`awaited`: the seconds the call has waited for replicas so far (a running total)."""
        self.leaf = leaf
        self.awaited = awaited
        self.awaited_seen = awaited() if awaited is not None else 0.0
        self.cores = cores
        self.started = self.sampled = time.monotonic()
        self.cpu_s: float | None = leaf.cpu_seconds() if leaf is not None else None
        self.cpu_start = self.cpu_s
        self.waited_s = 0.0
        self.own_s = 0.0
        self.delays: dict[int, int] = {}  # each thread's run-queue delay when last sampled, ns
        self.delay_s = 0.0  # per sample, the longest run-queue delay of one thread, added up
        self.throttled_start = leaf.throttled_seconds() if leaf is not None else 0.0
        self.held_s = 0.0  # the larger of the two: how long the machine held the call back
        self.carried_s = 0.0

    @property
    def wall_s(self) -> float:
        return self.sampled - self.started

    @property
    def used_cpu_s(self) -> float | None:
        """CPU time the call has used so far (None: not counted here)."""
        if self.cpu_s is None or self.cpu_start is None:
            return None
        return self.cpu_s - self.cpu_start

    def sample(self) -> None:
        now = time.monotonic()
        interval, self.sampled = now - self.sampled, now
        awaited = self.awaited_since_last(interval)
        if self.leaf is None:
            self.own_s += interval - awaited
            self.waited_s += awaited
            return
        cpu_s = self.leaf.cpu_seconds()
        cpu_used = 0.0 if cpu_s is None or self.cpu_s is None else cpu_s - self.cpu_s
        self.cpu_s = cpu_s
        self.delay_s += self.longest_delay_since_last() / 1e9
        held_s = max(self.delay_s, self.leaf.throttled_seconds() - self.throttled_start)
        held = self.carried_s + held_s - self.held_s
        self.held_s = held_s
        self.carried_s = min(CARRY_S, max(0.0, held - interval))
        own = max(interval - min(interval, max(held, awaited)), min(interval, cpu_used / self.cores))
        self.own_s += own
        self.waited_s += interval - own

    def awaited_since_last(self, interval: float) -> float:
        if self.awaited is None:
            return 0.0
        total = self.awaited()
        awaited, self.awaited_seen = total - self.awaited_seen, total
        return min(interval, max(0.0, awaited))

    def longest_delay_since_last(self) -> int:
        """The longest run-queue delay any one of the leaf's threads had since the last sample (ns);
        a thread that ended between two samples takes its last stretch with it."""
        longest = 0
        for tid in self.leaf.thread_ids() if self.leaf is not None else []:
            delay = run_delay_ns(tid)
            if delay is not None:
                longest = max(longest, delay - self.delays.get(tid, 0))
                self.delays[tid] = delay
        return longest


def run_delay_ns(tid: int) -> int | None:
    """How long the thread has waited on a run queue, ready to run, since it started."""
    try:
        with open(f"/proc/{tid}/schedstat") as stats:
            return int(stats.read().split()[1])
    except (OSError, ValueError, IndexError):  # gone already, or no schedstats in this kernel
        return None
