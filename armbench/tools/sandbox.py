"""Run agent-written Python isolated: `run_python(code, config) -> SandboxResult`.

Isolation mode "bwrap+netns" (the normal one, needs bubblewrap and user namespaces):
- `prlimit` sets the rlimits (CPU, address space, file size, processes, open files, no core), then
  `setpriv` drops to a fresh non-root uid (when the harness is root) and execs `bwrap`. Each run
  gets its own outside uid, drawn from SANDBOX_UIDS, because RLIMIT_NPROC counts every process of a
  uid: with a shared uid one run's fork bomb would starve the others. Inside it is uid 65534.
- bwrap unshares every namespace (user, pid, net, ipc, uts, cgroup), forbids nested user namespaces,
  dies with the harness and starts a new session. The filesystem is read-only /usr (plus the
  /bin, /lib... links), a fresh /proc and /dev, and three size-capped tmpfs mounts, /work (the
  cwd), /tmp and /dev/shm, which are the only writable places and vanish with the run. /etc,
  /root, /home and the checkout are not there at all.
- The network namespace holds only loopback. A replica is reached at its usual URL
  `http://127.0.0.1:<port>/` because BOOTSTRAP, run by the sandbox's interpreter before the
  agent's code, listens on 127.0.0.1:<port> inside and pipes each connection to a UNIX socket
  bind-mounted at /run/replicas/<port>.sock: the python tool's relay (replica_gate.py), which holds
  the run to its share of the replica. Anything else is unreachable by construction.
- A cgroup leaf per call (cgroups.py), when the machine allows, caps the memory and processes of all
  the call's processes together; else the rlimits shrink so that their product fits the same cap.
- Calls take turns at the machine's cores (admission.py); a call's limits start once it runs. Its
  CPU limit is the CPU time of all its processes (the leaf's; RLIMIT_CPU per process as well), and
  its wall limit counts its own time: wall time minus the time the machine held it from a CPU or
  it awaited a replica's reply (call_clock.py). A backstop of BACKSTOP_FACTOR x the wall limit in real time ends a call the
  machine starved: `killed_reason` "starved", the harness's failure, not the agent's.
- The environment is PATH, HOME, LANG and MALLOC_ARENA_MAX only (no API keys).
- A time limit kills bwrap; its pid-1 child dies with it and takes the whole pid namespace.

Mode "fallback" (only with `allow_fallback=True`, when bwrap cannot run): the same rlimits, uid
drop, clean environment and a host temp dir as cwd (deleted afterwards), but NO network isolation
(any address the host reaches, including model providers and the internet), the host filesystem
readable wherever file modes allow, a per-file size cap instead of a disk cap, and processes that
start their own session outlive the timeout (until the call's cgroup leaf, if any, is removed).
docs/sandbox.md lists this.
"""
from __future__ import annotations

import asyncio
import codecs
import dataclasses
import functools
import os
import random
import shutil
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

from pydantic import BaseModel, Field

from armbench.errors import UserError
from armbench.tools.admission import admitted, usable_cores
from armbench.tools.call_clock import SAMPLE_S, CallClock
from armbench.tools.cgroups import CallCgroup, cgroup_problem, counts_cpu

BWRAP = "bwrap+netns"
FALLBACK = "fallback"
# Outside uids for runs. systemd's uid map leaves 1879048192-2147483647 unused.
SANDBOX_UIDS = range(1_900_000_000, 2_000_000_000)
INSIDE_UID = 65534
WORK_DIR = "/work"
SOCKET_DIR = "/run/replicas"
DRAIN_S = 2.0  # how long to wait for output after the sandbox's main process is gone
PROBE_TIMEOUT_S = 20.0
READ_CHUNK = 65_536
# Without cgroups, the call's memory is bounded by NPROC x AS: at most this many processes and
# threads, each with memory_bytes / this much address space, so the worst case stays memory_bytes.
RLIMIT_ONLY_PROCESSES = 8
# A call still short of its wall limit in own time after this many times that limit in real time
# was starved by the machine (it waited for a CPU for the rest).
BACKSTOP_FACTOR = 3

# The sandbox's main program (`python -c`): start the forwarders, then run the agent's code
# (read from stdin) as a script named main.py, with tracebacks free of this wrapper.
BOOTSTRAP = r"""
import linecache, socket, sys, threading, traceback, types

def pump(src, dst):
    try:
        while data := src.recv(65536):
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass

def relay(client, path):
    upstream = socket.socket(socket.AF_UNIX)
    try:
        upstream.connect(path)
    except OSError as error:
        body = f"sandbox: replica socket {path} unavailable: {error}\n".encode()
        head = "HTTP/1.0 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n\r\n"
        client.sendall((head % len(body)).encode() + body)
    else:
        back = threading.Thread(target=pump, args=(upstream, client), daemon=True)
        back.start()
        pump(client, upstream)
        back.join()
    finally:
        upstream.close()
        client.close()

def accept(listener, path):
    while True:
        client, _ = listener.accept()
        try:
            threading.Thread(target=relay, args=(client, path), daemon=True).start()
        except RuntimeError:  # out of processes (RLIMIT_NPROC counts threads)
            client.close()

for route in sys.argv[1:]:
    port, path = route.split("=", 1)
    listener = socket.create_server(("127.0.0.1", int(port)))
    threading.Thread(target=accept, args=(listener, path), daemon=True).start()

source = sys.stdin.buffer.read().decode("utf-8", "replace")
linecache.cache["main.py"] = (len(source), None, source.splitlines(True), "main.py")
sys.argv = ["main.py"]
sys.modules["__main__"] = main = types.ModuleType("__main__")  # so pickle finds its functions
try:
    exec(compile(source, "main.py", "exec"), main.__dict__)
except SystemExit:
    raise
except BaseException as error:
    traceback.print_exception(type(error), error, error.__traceback__.tb_next)
    sys.exit(1)
"""


class ReplicaRoute(BaseModel):
    """A replica: reachable inside the sandbox at http://127.0.0.1:<port>, served by socket_path."""

    port: int = Field(ge=1, le=65535)
    socket_path: str
    headers: dict[str, str] = Field(default_factory=dict)  # added to each request by the gate (replica_gate.py)


class SandboxConfig(BaseModel):
    wall_timeout_s: float = 30.0
    cpu_s: int = 20
    memory_bytes: int = 1 << 30  # address space
    file_size_bytes: int = 16 << 20
    disk_bytes: int = 64 << 20  # size of each tmpfs: /work, /tmp, /dev/shm (bwrap mode)
    processes: int = 64  # counts threads too
    open_files: int = 256
    output_chars: int = 16_000  # per stream
    replicas: list[ReplicaRoute] = Field(default_factory=list)
    interpreter: str = "/usr/bin/python3"  # must live under /usr and be executable by any uid
    allow_fallback: bool = False
    cpus: float | None = None  # a CPU quota for the call's processes together (needs the cgroup cpu controller)


@dataclass(frozen=True)
class SandboxResult:
    stdout: str
    stderr: str
    exit_code: int  # a death by signal N is 128 + N, as in a shell
    timed_out: bool
    stdout_truncated: bool
    stderr_truncated: bool
    duration_s: float  # from the start of the sandbox, after any wait for a core
    # "wall_timeout", "cpu_limit", "memory_limit", "starved" (the backstop), "signal SIGKILL", ...
    killed_reason: str | None
    isolation: str  # BWRAP or FALLBACK
    call_caps: str  # how the call's processes are capped together: call_caps()
    peak_memory_bytes: int | None  # all the call's processes together, when a cgroup counted them
    cpu_seconds: float | None = None  # all the call's processes together, when a cgroup counted them
    held_seconds: float = 0.0  # held from a CPU by the machine, or awaiting replicas (not the call's own time)
    queue_seconds: float = 0.0  # waiting for a core before it started


class SandboxUnavailable(UserError):
    """bwrap cannot run here and the fallback was not allowed."""


class ReplicaSocketBlocked(UserError):
    """A replica's UNIX socket exists but the sandbox's uid may not connect to it."""


def isolation_mode(config: SandboxConfig) -> str:
    """BWRAP if it works on this machine (probed once), else FALLBACK if allowed, else refuse."""
    problem = bwrap_problem(config.interpreter)
    if problem is None:
        return BWRAP
    if config.allow_fallback:
        return FALLBACK
    raise SandboxUnavailable(
        f"the python sandbox needs bubblewrap with user namespaces, and it failed here: {problem}. "
        "Install bubblewrap and enable user namespaces, or set allow_fallback=True to accept the "
        "weaker fallback (no network isolation; see docs/sandbox.md)."
    )


def call_caps(config: SandboxConfig) -> str:
    """How one call's processes are capped together: a cgroup leaf, or rlimits sized to the cap; and
    what its CPU and wall limits count."""
    if cgroup_problem() is None:
        if counts_cpu():
            return (f"cgroup per call ({config.memory_bytes >> 20} MiB, {config.processes} processes, "
                    f"{config.cpu_s} s CPU; wall limit on the call's own time)")
        return (f"cgroup per call ({config.memory_bytes >> 20} MiB, {config.processes} processes; "
                "CPU limit per process, wall limit on wall time)")
    processes, address_space = rlimit_only_caps(config)
    return (f"rlimits only ({processes} processes x {address_space >> 20} MiB; "
            "CPU limit per process, wall limit on wall time)")


def rlimit_only_caps(config: SandboxConfig) -> tuple[int, int]:
    """(processes, address space per process) without a cgroup. Only a run with a uid of its own
    (a root harness) can shrink RLIMIT_NPROC: otherwise it counts the harness's threads too, and 8
    would leave the sandbox none."""
    if os.geteuid() != 0:
        return config.processes, config.memory_bytes
    processes = min(config.processes, RLIMIT_ONLY_PROCESSES)
    return processes, config.memory_bytes // processes


@functools.cache
def bwrap_problem(interpreter: str) -> str | None:
    """Why bwrap mode cannot run (None if it can), found by running `pass` in a sandbox."""
    if shutil.which("bwrap") is None:
        return "bwrap is not installed"
    try:
        probe = subprocess.run(
            bwrap_command(SandboxConfig(interpreter=interpreter), random_uid(), in_cgroup=False),
            input=b"pass",
            capture_output=True,
            env=sandbox_env(WORK_DIR),
            timeout=PROBE_TIMEOUT_S,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return str(error)
    if probe.returncode != 0:
        return probe.stderr.decode(errors="replace").strip()[-500:] or f"exit {probe.returncode}"
    return None


async def run_python(code: str, config: SandboxConfig, awaited: Callable[[], float] | None = None) -> SandboxResult:
    """Run `code` once a core is free (admission.py); its limits start then. `awaited`: the running
    total of seconds its requests waited for replicas (the gate's), not counted as its own time."""
    isolation = isolation_mode(config)
    async with admitted() as queued_s:
        result = await run_admitted(code, config, isolation, awaited)
    return dataclasses.replace(result, queue_seconds=queued_s)


async def run_admitted(code: str, config: SandboxConfig, isolation: str,
                       awaited: Callable[[], float] | None = None) -> SandboxResult:
    uid = random_uid()
    leaf = CallCgroup.make(config.memory_bytes, config.processes, config.cpus) if cgroup_problem() is None else None
    workdir = None if isolation == BWRAP else tempfile.mkdtemp(prefix="armbench-sandbox-")
    try:
        if workdir is None:
            command = bwrap_command(config, uid, in_cgroup=leaf is not None)
        else:
            if os.geteuid() == 0:
                os.chown(workdir, uid, uid)
            command = fallback_command(config, uid, in_cgroup=leaf is not None)
        return await execute(
            (leaf.enter() if leaf else []) + command, code, config, workdir, isolation, leaf, awaited
        )
    finally:
        if leaf is not None:  # also kills what escaped the process group (fallback's setsid)
            await asyncio.to_thread(leaf.remove)  # it may wait for the kernel: not on the loop
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)


def random_uid() -> int:
    return random.choice(SANDBOX_UIDS)


def limited(config: SandboxConfig, uid: int, in_cgroup: bool) -> list[str]:
    """prlimit, then (if we are root) setpriv to `uid`: the prefix of both modes' commands.
    `in_cgroup`: a cgroup caps the call as a whole; otherwise the rlimits shrink to bound it."""
    processes, address_space = (
        (config.processes, config.memory_bytes) if in_cgroup else rlimit_only_caps(config)
    )
    command = [
        "prlimit",
        f"--cpu={config.cpu_s}:{config.cpu_s + 1}",  # SIGXCPU, then SIGKILL a second later
        f"--as={address_space}",
        f"--fsize={config.file_size_bytes}",
        f"--nproc={processes}",
        f"--nofile={config.open_files}",
        "--core=0",
        "--",
    ]
    if os.geteuid() == 0:
        command += ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--"]
    return command


def python_command(config: SandboxConfig, routes: list[str]) -> list[str]:
    return [config.interpreter, "-I", "-u", "-c", BOOTSTRAP, *routes]


def bwrap_command(config: SandboxConfig, uid: int, in_cgroup: bool) -> list[str]:
    command = [
        "bwrap",
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid", str(INSIDE_UID),
        "--gid", str(INSIDE_UID),
        "--die-with-parent",
        "--new-session",
        "--hostname", "sandbox",
        "--ro-bind", "/usr", "/usr",
    ]  # fmt: skip
    for top in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"):
        if os.path.islink(top):
            command += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            command += ["--ro-bind", top, top]
    command += ["--proc", "/proc", "--dev", "/dev"]
    for writable in (WORK_DIR, "/tmp", "/dev/shm"):
        command += ["--size", str(config.disk_bytes), "--tmpfs", writable]
    routes = []
    for replica in config.replicas:
        inside = f"{SOCKET_DIR}/{replica.port}.sock"
        # A replica that is down is not bound (-try covers one stopping right now): the
        # forwarder answers 502 for it and the run goes on.
        if os.path.exists(replica.socket_path):
            check_socket(replica.socket_path)
            command += ["--ro-bind-try", replica.socket_path, inside]
        routes.append(f"{replica.port}={inside}")
    command += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", WORK_DIR, "--"]
    return limited(config, uid, in_cgroup) + command + python_command(config, routes)


def check_socket(path: str) -> None:
    """A run's uid owns nothing on the host: it reaches a socket only through "other" bits."""
    mode = os.stat(path).st_mode
    blocked = [] if mode & stat.S_IWOTH else [f"{path} (mode {stat.filemode(mode)}, needs o+w)"]
    parent = os.path.dirname(os.path.abspath(path))
    while parent != "/":
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            blocked.append(f"{parent} (needs o+x)")
        parent = os.path.dirname(parent)
    if blocked:
        raise ReplicaSocketBlocked(
            f"the sandbox cannot reach replica socket {path}: {'; '.join(blocked)}. "
            "Serve replicas on a world-writable socket (0666) in world-searchable directories."
        )


def fallback_command(config: SandboxConfig, uid: int, in_cgroup: bool) -> list[str]:
    return limited(config, uid, in_cgroup) + python_command(config, [])


def sandbox_env(home: str) -> dict[str, str]:
    # Few malloc arenas: each thread's arena reserves 64 MiB of address space under RLIMIT_AS.
    return {"PATH": "/usr/bin:/bin", "HOME": home, "LANG": "C.UTF-8", "MALLOC_ARENA_MAX": "2"}


class BoundedText:
    """Decodes a byte stream as UTF-8, keeping the first `cap` characters and counting the rest."""

    def __init__(self, cap: int):
        self.cap = cap
        self.kept: list[str] = []
        self.size = 0
        self.dropped = 0
        self.decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: bytes, final: bool = False) -> None:
        text = self.decoder.decode(data, final)
        room = self.cap - self.size
        self.kept.append(text[:room])
        self.size += min(len(text), room)
        self.dropped += max(0, len(text) - room)

    def text(self) -> str:
        self.feed(b"", final=True)
        text = "".join(self.kept)
        if self.dropped:
            text += f"\n[output truncated: {self.dropped:,} more characters]"
        return text


async def pump(stream: asyncio.StreamReader, sink: BoundedText) -> None:
    while chunk := await stream.read(READ_CHUNK):
        sink.feed(chunk)


async def feed_stdin(stdin: asyncio.StreamWriter, code: str) -> None:
    try:
        stdin.write(code.encode("utf-8", "replace"))
        await stdin.drain()
        stdin.close()
    except (BrokenPipeError, ConnectionResetError):  # the sandbox died before reading it all
        pass


async def execute(
    command: list[str],
    code: str,
    config: SandboxConfig,
    cwd: str | None,
    isolation: str,
    leaf: CallCgroup | None,
    awaited: Callable[[], float] | None = None,
) -> SandboxResult:
    start = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=sandbox_env(cwd or WORK_DIR),
        start_new_session=True,
    )
    out, err = BoundedText(config.output_chars), BoundedText(config.output_chars)
    readers = [
        asyncio.create_task(pump(proc.stdout, out)),
        asyncio.create_task(pump(proc.stderr, err)),
    ]
    writer = asyncio.create_task(feed_stdin(proc.stdin, code))
    clock = CallClock(leaf if leaf is not None and leaf.cpu_seconds() is not None else None, usable_cores(), awaited)
    limit_hit = None
    try:
        limit_hit = await watch(proc, clock, config)
    finally:  # also on cancellation: never leave a sandbox running
        if proc.returncode is None:
            kill_group(proc.pid)
            await proc.wait()
        _, lingering = await asyncio.wait(readers, timeout=DRAIN_S)
        if lingering and isolation == FALLBACK:  # children of the group still hold the pipes
            kill_group(proc.pid)
        for task in (*lingering, writer):
            task.cancel()
    clock.sample()  # the leaf still counts what the call's processes used
    exit_code = proc.returncode if proc.returncode >= 0 else 128 - proc.returncode
    if limit_hit is not None:
        killed_reason = limit_hit
    elif leaf is not None and leaf.memory_kills():
        killed_reason = "memory_limit"
    else:
        killed_reason = signal_reason(exit_code)
    return SandboxResult(
        stdout=out.text(),
        stderr=err.text(),
        exit_code=exit_code,
        timed_out=killed_reason == "wall_timeout",
        stdout_truncated=out.dropped > 0,
        stderr_truncated=err.dropped > 0,
        duration_s=time.perf_counter() - start,
        killed_reason=killed_reason,
        isolation=isolation,
        call_caps=call_caps(config),
        peak_memory_bytes=leaf.peak_memory() if leaf is not None else None,
        cpu_seconds=clock.used_cpu_s,
        held_seconds=clock.waited_s,
    )


async def watch(proc: asyncio.subprocess.Process, clock: CallClock, config: SandboxConfig) -> str | None:
    """Wait for the sandbox to end; the limit it reached first, if one ended it: "cpu_limit" (CPU
    time of all its processes), "wall_timeout" (its own time) or, at the backstop, "starved". A call
    stopped by the backstop that used CPU fast enough to spend its allowance within its wall limit
    would have been stopped at its CPU limit on an idle machine, and is: "cpu_limit", the agent's."""
    ended = asyncio.ensure_future(proc.wait())
    try:
        while True:
            done, _ = await asyncio.wait({ended}, timeout=SAMPLE_S)
            if done:
                return None
            clock.sample()
            used = clock.used_cpu_s
            if used is not None and used >= config.cpu_s:
                return "cpu_limit"
            if clock.own_s >= config.wall_timeout_s:
                return "wall_timeout"
            if clock.wall_s >= config.wall_timeout_s * BACKSTOP_FACTOR:
                cpu_bound = used is not None and used >= clock.own_s * config.cpu_s / config.wall_timeout_s
                return "cpu_limit" if cpu_bound else "starved"
    finally:
        ended.cancel()


def kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def signal_reason(exit_code: int) -> str | None:
    """What killed the program, read from a shell-style exit code (so `exit(137)` reads as one)."""
    if exit_code <= 128:
        return None
    try:
        sig = signal.Signals(exit_code - 128)
    except ValueError:
        return None
    return "cpu_limit" if sig == signal.SIGXCPU else f"signal {sig.name}"
