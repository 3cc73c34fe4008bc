"""Caps on one sandbox call as a whole, from the kernel's cgroups: `CallCgroup`.

rlimits bind one process (RLIMIT_AS) or one uid (RLIMIT_NPROC), so the processes of one call
could together hold NPROC x AS. A cgroup leaf per call holds every process the call starts (they
cannot leave it: the sandbox sees no cgroupfs and is not root), and the kernel counts their memory
together, tmpfs files and socket buffers included:
- cgroup v2 (one hierarchy): memory.max, memory.swap.max = 0, pids.max; kills in memory.events;
- cgroup v1 (a hierarchy per controller): memory.limit_in_bytes, memory.memsw.limit_in_bytes (no
  swap beyond the cap), memory.kmem.tcp.limit_in_bytes (socket buffers), pids.max.
Leaves go under the harness's own cgroup, so limits set on the harness (a container, a slice) still
hold above them. It needs root or a delegated subtree; `cgroup_problem()` says why it cannot work.
"""
from __future__ import annotations

import functools
import itertools
import os
import shlex
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids")
REMOVE_WAIT_S = 5.0  # a killed process needs a moment to leave its cgroup
_serial = itertools.count()


@dataclass(frozen=True)
class Hierarchy:
    """Where a leaf is made: the harness's own cgroup in one mounted hierarchy."""

    version: int
    own: Path  # the harness's cgroup directory
    controllers: tuple[str, ...]  # the caps this hierarchy sets


@dataclass(frozen=True)
class CallCgroup:
    """One call's leaf (one directory per hierarchy). Create with `CallCgroup.make`."""

    version: int
    dirs: tuple[Path, ...]

    @classmethod
    def make(cls, memory_bytes: int, processes: int) -> CallCgroup:
        hierarchies = find_hierarchies()
        if isinstance(hierarchies, str):
            raise OSError(hierarchies)
        name = f"armbench-{os.getpid()}-{next(_serial)}"
        made = cls(hierarchies[0].version, tuple(h.own / name for h in hierarchies))
        try:
            for hierarchy, leaf in zip(hierarchies, made.dirs, strict=True):
                leaf.mkdir()
                for file, value in limit_files(hierarchy, memory_bytes, processes):
                    if file.startswith("memory.memsw") or file.startswith("memory.kmem"):
                        if not (leaf / file).exists():  # swap accounting off, or an older kernel
                            continue
                    (leaf / file).write_text(str(value))
        except OSError:
            made.remove()
            raise
        return made

    def enter(self) -> list[str]:
        """A command prefix that moves itself into the leaf, then execs the rest (as root, before
        any uid drop), so the call's first process is capped before it can fork."""
        moves = " && ".join(f"echo $$ > {shlex.quote(str(leaf / 'cgroup.procs'))}" for leaf in self.dirs)
        return ["/bin/sh", "-c", f'{moves} && exec "$@"', "armbench-cgroup"]

    def memory_kills(self) -> int:
        """How many processes the kernel killed at the memory cap."""
        memory_dir = self.dirs[0]
        events = memory_dir / ("memory.events" if self.version == 2 else "memory.oom_control")
        try:
            for line in events.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            pass
        return 0

    def peak_memory(self) -> int | None:
        """The most memory the leaf's processes held at once, as the kernel counted it."""
        peak = self.dirs[0] / ("memory.peak" if self.version == 2 else "memory.max_usage_in_bytes")
        try:
            return int(peak.read_text())
        except (OSError, ValueError):  # memory.peak is a v2 file of Linux 5.19+
            return None

    def remove(self) -> None:
        """Kill whatever is left in the leaf, then remove it."""
        deadline = time.monotonic() + REMOVE_WAIT_S
        for leaf in self.dirs:
            while leaf.exists():
                for pid in pids_in(leaf):
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                try:
                    leaf.rmdir()
                except OSError:
                    if time.monotonic() > deadline:
                        break  # left for the operator: a process stuck in the kernel
                    time.sleep(0.01)


def limit_files(hierarchy: Hierarchy, memory_bytes: int, processes: int) -> list[tuple[str, int]]:
    files: list[tuple[str, int]] = []
    if "memory" in hierarchy.controllers:
        if hierarchy.version == 2:
            files += [("memory.max", memory_bytes), ("memory.swap.max", 0)]
        else:  # memsw (memory + swap) may not be below limit_in_bytes: set it second
            files += [
                ("memory.limit_in_bytes", memory_bytes),
                ("memory.memsw.limit_in_bytes", memory_bytes),
                ("memory.kmem.tcp.limit_in_bytes", memory_bytes),
            ]
    if "pids" in hierarchy.controllers:
        files.append(("pids.max", processes))
    return files


def pids_in(leaf: Path) -> list[int]:
    try:
        return [int(pid) for pid in (leaf / "cgroup.procs").read_text().split()]
    except OSError:
        return []


@functools.cache
def find_hierarchies() -> tuple[Hierarchy, ...] | str:
    """The hierarchies that cap memory and pids for this process (v2 preferred), or why none can."""
    mounts = cgroup_mounts()
    own = own_cgroups()
    v2 = mounts.get("cgroup2")
    if v2 is not None and "" in own:
        directory = v2 / own[""].lstrip("/")
        available = (directory / "cgroup.controllers").read_text().split() if directory.exists() else []
        if all(c in available for c in CONTROLLERS):
            problem = enable_v2_controllers(directory)
            if problem is None:
                return (Hierarchy(2, directory, CONTROLLERS),)
            v2_problem = problem
        else:
            v2_problem = f"cgroup v2 at {v2} lacks the {' and '.join(CONTROLLERS)} controllers"
    else:
        v2_problem = "no cgroup v2 hierarchy"
    v1 = []
    for controller in CONTROLLERS:
        if controller not in mounts or controller not in own:
            return f"{v2_problem}, and no cgroup v1 {controller} hierarchy"
        v1.append(Hierarchy(1, mounts[controller] / own[controller].lstrip("/"), (controller,)))
    return tuple(v1)


def enable_v2_controllers(directory: Path) -> str | None:
    """Children of `directory` get memory and pids caps only if its subtree_control enables them."""
    control = directory / "cgroup.subtree_control"
    try:
        enabled = control.read_text().split()
        missing = [c for c in CONTROLLERS if c not in enabled]
        if missing:
            control.write_text(" ".join(f"+{c}" for c in missing))
    except OSError as error:  # EBUSY: a non-root cgroup holding processes cannot delegate
        return f"cannot enable {' and '.join(CONTROLLERS)} for children of {directory}: {error.strerror}"
    return None


def cgroup_mounts() -> dict[str, Path]:
    """Mount points by hierarchy: "cgroup2", or a v1 controller's name."""
    mounts: dict[str, Path] = {}
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return mounts
    for line in lines:
        fields = line.split()
        separator = fields.index("-")
        fstype, options = fields[separator + 1], fields[separator + 3].split(",")
        if fields[3] != "/":
            continue  # a mount of a sub-tree: own_cgroups() paths would not resolve in it
        if fstype == "cgroup2":
            mounts.setdefault("cgroup2", Path(fields[4]))
        elif fstype == "cgroup":
            for option in options:
                mounts.setdefault(option, Path(fields[4]))
    return mounts


def own_cgroups() -> dict[str, str]:
    """This process's cgroup path per hierarchy ("" for v2, the controller's name for v1)."""
    paths: dict[str, str] = {}
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in controllers.split(",") if controllers else [""]:
            paths[controller] = path
    return paths


def remove_stale_leaves() -> None:
    """Leaves of harnesses that died (kill -9) before removing them: empty now, so rmdir works."""
    hierarchies = find_hierarchies()
    for hierarchy in () if isinstance(hierarchies, str) else hierarchies:
        for leaf in hierarchy.own.glob("armbench-*-*"):
            pid = leaf.name.split("-")[1]
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                try:
                    leaf.rmdir()
                except OSError:
                    pass  # still holds a process: left alone


@functools.cache
def cgroup_problem() -> str | None:
    """Why per-call cgroups cannot work here (None if they can), found by making one leaf."""
    try:
        CallCgroup.make(64 << 20, 8).remove()
    except OSError as error:
        return str(error)
    remove_stale_leaves()
    return None
