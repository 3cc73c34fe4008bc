"""Caps on one sandbox call as a whole, from the kernel's cgroups: `CallCgroup`.

rlimits bind one process (RLIMIT_AS) or one uid (RLIMIT_NPROC), so the processes of one call
could together hold NPROC x AS. A cgroup leaf per call holds every process the call starts (they
cannot leave it: the sandbox sees no cgroupfs and is not root), and the kernel counts their memory
together, tmpfs files and socket buffers included:
- cgroup v2 (one hierarchy): memory.max, memory.swap.max = 0, pids.max; kills in memory.events;
- cgroup v1 (a hierarchy per controller): memory.limit_in_bytes, memory.memsw.limit_in_bytes (no
  swap beyond the cap), memory.kmem.tcp.limit_in_bytes (socket buffers), pids.max.
Where the CPU controllers are there too (optional: the memory and pids caps work without them), the
leaf also counts the call's CPU time (v2 cpu.stat, v1 cpuacct.usage) and how long a CPU quota held
it back (cpu.stat), and can take a quota of its own (v2 cpu.max, v1 cpu.cfs_quota_us).
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
CPU_CONTROLLERS = {2: ("cpu",), 1: ("cpu", "cpuacct")}  # optional: the CPU figures and quota
CPU_PERIOD_US = 100_000
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
    controllers: tuple[tuple[str, ...], ...]  # what each directory's hierarchy controls

    @classmethod
    def make(cls, memory_bytes: int, processes: int, cpus: float | None = None) -> CallCgroup:
        """`cpus`: a CPU quota for the call's processes together (None: none); an OSError where
        no CPU controller can take one."""
        hierarchies = find_hierarchies()
        if isinstance(hierarchies, str):
            raise OSError(hierarchies)
        name = f"armbench-{os.getpid()}-{next(_serial)}"
        made = cls(hierarchies[0].version, tuple(h.own / name for h in hierarchies),
                   tuple(h.controllers for h in hierarchies))
        try:
            if cpus is not None and made.directory("cpu") is None:
                raise OSError("no cpu controller for a CPU quota")
            for hierarchy, leaf in zip(hierarchies, made.dirs, strict=True):
                leaf.mkdir()
                for file, value in limit_files(hierarchy, memory_bytes, processes, cpus):
                    if file.startswith("memory.memsw") or file.startswith("memory.kmem"):
                        if not (leaf / file).exists():  # swap accounting off, or an older kernel
                            continue
                    (leaf / file).write_text(str(value))
        except OSError:
            made.remove()
            raise
        return made

    def directory(self, controller: str) -> Path | None:
        """The leaf's directory in the hierarchy of `controller` (v2: every file is in the one)."""
        for leaf, controllers in zip(self.dirs, self.controllers, strict=True):
            if controller in controllers or (self.version == 2 and controller == "cpuacct"):
                return leaf
        return None

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

    def cpu_seconds(self) -> float | None:
        """CPU time the leaf's processes have used, all together (None: not counted here)."""
        try:
            if self.version == 2:  # cpu.stat's usage is kept in every v2 cgroup
                return stat_value(self.dirs[0] / "cpu.stat", "usage_usec") / 1e6
            accounting = self.directory("cpuacct")
            return None if accounting is None else int((accounting / "cpuacct.usage").read_text()) / 1e9
        except (OSError, ValueError):
            return None

    def throttled_seconds(self) -> float:
        """Wall time a CPU quota held the leaf back. The kernel adds it up over each CPU's run queue,
        and a quota throttles them all at once: so the sum over the CPUs, divided by their number."""
        cpu = self.directory("cpu")
        key, unit = ("throttled_usec", 1e6) if self.version == 2 else ("throttled_time", 1e9)
        try:
            return 0.0 if cpu is None else stat_value(cpu / "cpu.stat", key) / unit / (os.cpu_count() or 1)
        except (OSError, ValueError):
            return 0.0

    def thread_ids(self) -> list[int]:
        """Every thread of the leaf's processes, as the host numbers them."""
        listing = self.dirs[0] / ("cgroup.threads" if self.version == 2 else "tasks")
        try:
            return [int(tid) for tid in listing.read_text().split()]
        except (OSError, ValueError):
            return []

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


def stat_value(path: Path, key: str) -> int:
    """One counter of a `key value` file such as cpu.stat (0 when the kernel does not keep it)."""
    for line in path.read_text().splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def limit_files(
    hierarchy: Hierarchy, memory_bytes: int, processes: int, cpus: float | None = None
) -> list[tuple[str, int | str]]:
    files: list[tuple[str, int | str]] = []
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
    if "cpu" in hierarchy.controllers and cpus is not None:
        quota = max(1_000, round(cpus * CPU_PERIOD_US))  # the kernel's smallest quota is 1 ms
        if hierarchy.version == 2:
            files.append(("cpu.max", f"{quota} {CPU_PERIOD_US}"))
        else:
            files += [("cpu.cfs_period_us", CPU_PERIOD_US), ("cpu.cfs_quota_us", quota)]
    return files


def pids_in(leaf: Path) -> list[int]:
    try:
        return [int(pid) for pid in (leaf / "cgroup.procs").read_text().split()]
    except OSError:
        return []


@functools.cache
def find_hierarchies() -> tuple[Hierarchy, ...] | str:
    """The hierarchies that cap memory and pids for this process (v2 preferred), with the CPU
    controllers where they are there too, or why none can."""
    mounts = cgroup_mounts()
    own = own_cgroups()
    v2 = mounts.get("cgroup2")
    if v2 is not None and "" in own:
        directory = v2 / own[""].lstrip("/")
        available = (directory / "cgroup.controllers").read_text().split() if directory.exists() else []
        if all(c in available for c in CONTROLLERS):
            problem = enable_v2_controllers(directory, CONTROLLERS)
            if problem is None:
                cpu = [c for c in CPU_CONTROLLERS[2] if c in available]
                if cpu and enable_v2_controllers(directory, tuple(cpu)) is not None:
                    cpu = []  # e.g. a realtime thread in the subtree: the CPU figures are optional
                return (Hierarchy(2, directory, CONTROLLERS + tuple(cpu)),)
            v2_problem = problem
        else:
            v2_problem = f"cgroup v2 at {v2} lacks the {' and '.join(CONTROLLERS)} controllers"
    else:
        v2_problem = "no cgroup v2 hierarchy"
    for controller in CONTROLLERS:
        if controller not in mounts or controller not in own:
            return f"{v2_problem}, and no cgroup v1 {controller} hierarchy"
    by_directory: dict[Path, tuple[str, ...]] = {}  # controllers mounted together share a leaf
    for controller in CONTROLLERS + CPU_CONTROLLERS[1]:
        if controller in mounts and controller in own:
            directory = mounts[controller] / own[controller].lstrip("/")
            by_directory[directory] = by_directory.get(directory, ()) + (controller,)
    return tuple(Hierarchy(1, directory, controllers) for directory, controllers in by_directory.items())


def enable_v2_controllers(directory: Path, controllers: tuple[str, ...]) -> str | None:
    """Children of `directory` get these controllers' caps only if its subtree_control enables them."""
    control = directory / "cgroup.subtree_control"
    try:
        enabled = control.read_text().split()
        missing = [c for c in controllers if c not in enabled]
        if missing:
            control.write_text(" ".join(f"+{c}" for c in missing))
    except OSError as error:  # EBUSY: a non-root cgroup holding processes cannot delegate
        return f"cannot enable {' and '.join(controllers)} for children of {directory}: {error.strerror}"
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


def counts_cpu() -> bool:
    """Whether a call's leaf counts its CPU time (so the CPU limit and the CPU waits are the call's)."""
    hierarchies = find_hierarchies()
    if isinstance(hierarchies, str):
        return False
    return hierarchies[0].version == 2 or any("cpuacct" in h.controllers for h in hierarchies)


def harness_cpu_quota() -> float | None:
    """How many CPUs a quota on the harness's cgroup, or on one above it, allows (None: no quota)."""
    mounts, own = cgroup_mounts(), own_cgroups()
    quotas = []
    if "cgroup2" in mounts and "" in own:
        for directory in ancestors(mounts["cgroup2"], own[""]):
            quota, _, period = read_text(directory / "cpu.max").partition(" ")
            if quota.isdigit() and period.strip().isdigit():
                quotas.append(int(quota) / int(period))
    if "cpu" in mounts and "cpu" in own:
        for directory in ancestors(mounts["cpu"], own["cpu"]):
            quota, period = read_text(directory / "cpu.cfs_quota_us"), read_text(directory / "cpu.cfs_period_us")
            if quota.isdigit() and period.isdigit():  # "-1": no quota
                quotas.append(int(quota) / int(period))
    return min(quotas, default=None)


def ancestors(mount: Path, path: str) -> list[Path]:
    """The cgroup at `path` under `mount` and each one above it, up to the mount's root."""
    directory = mount / path.lstrip("/")
    return [directory, *[parent for parent in directory.parents if parent.is_relative_to(mount)]]


def read_text(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
