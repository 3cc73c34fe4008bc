"""The replicas one `bench` process owns: started, watched, restarted when they die, stopped.

`ReplicaServer(replicas).start()` listens on every replica's port and socket in this process
(`serve.listen`: taking them is the lock), then starts one server process on those sockets
(`python -m armbench.replicas.serve`, forked from this process's fork server, `SERVERS`, which has
imported the web stack once). Holding the listening sockets here means:
- no other process takes or shares the replicas while this one lives, and the kernel frees them
  when it dies, kill -9 included: no stale lock, no race between two processes starting at once;
- a server that died is restarted on the same sockets (`restart`); requests sent meanwhile wait
  in the kernel's queue;
- the server stops when this process dies any other way: it watches a pipe whose only writer is
  this process, and the kernel closes that at this process's death. It runs in a session of its
  own, so a Ctrl-C at the terminal reaches this process alone, which stops the server in order.
Each start writes the server's pid to `<socket dir>/server-<port base>.pid`, so whatever uses the
replicas (`ServerWatch`) can tell whether the server it talked to lived through a call.

A process that runs several run sets (a notebook, a test suite) may keep the server warm between
them: `done_with(server, keep=True)` keeps a run set's server, and the next run set's
`server_for(replicas, warm=True)` takes it when it still lives and serves every replica asked for
(the same data, on the same port base and socket dir), so only the first run set pays the start. It
stops at the process's exit; a kept server nobody asks for again holds its ports until then.

Starting blocks while the server loads its data (about 2 s a replica); from async code use
`asyncio.to_thread`. The wait is `START_SECONDS_BASE` + `START_SECONDS_PER_REPLICA` per replica,
or `$ARMBENCH_REPLICA_START_TIMEOUT` seconds.
"""
from __future__ import annotations

import asyncio
import atexit
import contextlib
import math
import os
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from armbench.errors import UserError
from armbench.forkserver import ForkedProcess, ForkServer
from armbench.paths import ROOT
from armbench.replicas.serve import (
    PORT_BASE_ENV,
    PortTaken,
    Replica,
    ReplicaEndpoint,
    endpoint,
    free_port_base,
    listen,
    make_socket_dir,
    port_base,
    socket_dir,
)

START_TIMEOUT_ENV = "ARMBENCH_REPLICA_START_TIMEOUT"
MAX_RESTARTS = 5  # a server that keeps dying is given up on: calls to it end at once, as infra errors
WATCH_INTERVAL_S = 0.25
DOWN = "down"  # what the pid file says once the server is given up on
START_SECONDS_BASE = 20.0
START_SECONDS_PER_REPLICA = 5.0
PROBE_TIMEOUT_S = 2.0
STOP_WAIT_S = 5.0
# The server is the website the agents read: on the real web its speed does not depend on this
# machine's load, so it runs ahead of the runs' sandboxes and browser (set before its threads start).
SERVER_NICENESS = -5
# Every server starts from one fork server per process, which imports these once (about 0.6 s of
# each start's 0.9 s of CPU): a restart, the next run set's server, a test's, start from there.
SERVERS = ForkServer("armbench.replicas.serve", preload=[
    "fastapi", "fastapi.templating", "pydantic.v1", "polars", "jinja2", "uvloop", "httptools", "uvicorn",
    "uvicorn.config", "uvicorn.main", "uvicorn.protocols.http.httptools_impl", "uvicorn.lifespan.on"])


def start_timeout(replicas: int) -> float:
    """Seconds a server of `replicas` replicas may take to answer healthy: more replicas, more data."""
    raw = os.environ.get(START_TIMEOUT_ENV, "")
    if not raw:
        return START_SECONDS_BASE + START_SECONDS_PER_REPLICA * replicas
    try:
        seconds = float(raw)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and seconds > 0):
        raise UserError(f"{START_TIMEOUT_ENV}={raw!r} is not a number of seconds more than 0")
    return seconds


def pid_path() -> Path:
    """Where the pid of the server on the current port base is written."""
    return socket_dir() / f"server-{port_base()}.pid"


class ReplicaServer:
    """One process serving `replicas`, on sockets this process listens on; see the module docstring."""

    def __init__(self, replicas: Iterable[Replica]):
        self.replicas = list({replica.name: replica for replica in replicas}.values())
        self.listeners: list[list[Any]] = []
        self.listening: list[ReplicaEndpoint] = []  # the endpoints of `listeners`
        self.process: ForkedProcess | None = None
        self.pipe_writer: int | None = None
        self.restarts = 0
        self.pid_file: Path | None = None
        self.log_path: Path | None = None
        self.lock = threading.Lock()  # a restart (in a thread) and stop() never interleave

    @property
    def endpoints(self) -> dict[str, ReplicaEndpoint]:
        return {replica.name: endpoint(replica) for replica in self.replicas}

    def start(self, move_if_taken: bool = False) -> dict[str, ReplicaEndpoint]:
        """Listen, start the server and wait until every replica answers healthy. A port base that
        another process holds is refused (PortTaken), or with `move_if_taken` and no port base set
        in the environment, left for a free one (set in this process's environment, so every
        address this process derives agrees)."""
        try:
            self._listen(move_if_taken)
            self.pid_file = pid_path()
            self._launch()
            self._wait_healthy()
        except BaseException:
            self._stop()
            raise
        return self.endpoints

    def serves(self, replicas: list[Replica]) -> bool:
        """It runs, listens where each of `replicas` is looked for now (the current port base and
        socket dir), and each answers healthy with its data."""
        return self.exit_code() is None and all(endpoint(replica) in self.listening and health(replica)
                                                for replica in replicas)

    def exit_code(self) -> int | None:
        """The server's exit code once it has died (it is reaped then), else None."""
        return None if self.process is None else self.process.poll()

    def restart(self) -> None:
        """A new server on the same sockets, for one that died."""
        with self.lock:
            if not self.listeners:
                return  # stopped meanwhile
            self._end_process()
            self.restarts += 1
            self._launch()
            self._wait_healthy()

    async def supervise(self, say: Callable[[str], None]) -> None:
        """Restart the server whenever it dies, until cancelled; after MAX_RESTARTS, mark it down
        (ServerWatch then fails calls at once). `say` tells the person running bench."""
        while True:
            await asyncio.sleep(WATCH_INTERVAL_S)
            code = self.exit_code()
            if code is None:
                continue
            if self.restarts >= MAX_RESTARTS:
                self._write_pid(DOWN)
                say(f"the replica server exited with code {code}, its {MAX_RESTARTS + 1}th death: left down; "
                    "the runs that need it end as retryable infra errors")
                return
            say(f"the replica server exited with code {code}; restarting it (runs it broke are retryable "
                "infra errors)")
            try:
                await asyncio.to_thread(self.restart)
            except Exception as error:  # any failure to restart is said, and met again at the next death
                say(f"the replica server did not restart: {error}")

    def stop(self) -> None:
        """Stop the server and give up the replicas' ports and sockets."""
        with self.lock:
            self._stop()

    def _stop(self) -> None:
        self._end_process()
        for sockets in self.listeners:
            for sock in sockets:
                sock.close()
        for target in self.listening:  # where it listens, whatever the environment says by now
            target.socket_path.unlink(missing_ok=True)
        self.listeners, self.listening = [], []
        if self.pid_file is not None:
            self.pid_file.unlink(missing_ok=True)

    def _listen(self, move_if_taken: bool) -> None:
        while True:
            try:
                for replica in self.replicas:
                    target = endpoint(replica)
                    self.listeners.append(listen(target))
                    self.listening.append(target)
                return
            except PortTaken:
                self._stop()
                if not move_if_taken or os.environ.get(PORT_BASE_ENV):
                    raise
                os.environ[PORT_BASE_ENV] = str(free_port_base())

    def _launch(self) -> None:
        make_socket_dir()
        self.log_path = socket_dir() / f"{'+'.join(r.name for r in self.replicas)}-{port_base()}.log"
        # The write end stays open in this process alone (pipes are not inherited by other children),
        # so the server sees end-of-file exactly when this process dies or stops it.
        watched, self.pipe_writer = os.pipe()
        descriptors = [[sock.fileno() for sock in sockets] for sockets in self.listeners]
        arguments = ["--parent-pipe", str(watched)]
        for replica, fds in zip(self.replicas, descriptors):
            arguments += ["--replica", replica.argument(), "--sockets", ",".join(map(str, fds))]
        try:
            with self.log_path.open("ab") as log:
                self.process = SERVERS.start(arguments, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                             stderr=subprocess.STDOUT, start_new_session=True,
                                             pass_fds=(watched, *(fd for fds in descriptors for fd in fds)))
        finally:
            os.close(watched)
        with contextlib.suppress(OSError):  # only root may raise a priority: elsewhere it serves at the usual one
            os.setpriority(os.PRIO_PROCESS, self.process.pid, SERVER_NICENESS)
        self._write_pid(str(self.process.pid))

    def _write_pid(self, text: str) -> None:
        assert self.pid_file is not None
        staging = self.pid_file.with_suffix(".tmp")
        staging.write_text(f"{text}\n")
        os.replace(staging, self.pid_file)

    def _wait_healthy(self) -> None:
        assert self.process is not None and self.log_path is not None
        names = ", ".join(replica.name for replica in self.replicas)
        limit = start_timeout(len(self.replicas))
        deadline = time.monotonic() + limit
        waiting = list(self.replicas)
        while waiting := [replica for replica in waiting if not health(replica)]:
            if self.process.poll() is not None:
                tail = "\n".join(self.log_path.read_text(errors="replace").splitlines()[-5:])
                raise UserError(f"the {names} replica server exited with code {self.process.returncode}; "
                                f"see {self.log_path}:\n{tail}")
            if time.monotonic() > deadline:
                raise UserError(f"the {', '.join(r.name for r in waiting)} replica was not healthy after "
                                f"{limit:g} s; see {self.log_path}, or allow longer with {START_TIMEOUT_ENV}")
            time.sleep(0.1)

    def _end_process(self) -> None:
        """Close the server's pipe first: it then stops every replica at once (0.4 s for all ten, where
        SIGTERM, which uvicorn hands to one server at a time, took 2.3 s); a server that does not exit
        in time is terminated, then killed."""
        if self.pipe_writer is not None:
            os.close(self.pipe_writer)
            self.pipe_writer = None
        if self.process is None:
            return
        for end in (self.process.terminate, self.process.kill):
            try:
                self.process.wait(timeout=STOP_WAIT_S)
                return
            except subprocess.TimeoutExpired:
                end()
        self.process.wait()


class WarmServer:
    """The one server this process keeps between run sets."""

    def __init__(self) -> None:
        self.kept: ReplicaServer | None = None
        self.lock = threading.Lock()
        atexit.register(self.keep, None)

    def take(self, replicas: list[Replica]) -> ReplicaServer | None:
        """The kept server if it still serves all `replicas` here (it is no longer kept then)."""
        with self.lock:
            server, self.kept = self.kept, None
        if server is None:
            return None
        if server.serves(replicas):
            server.restarts = 0  # a run set's restarts are its own
            return server
        server.stop()
        return None

    def keep(self, server: ReplicaServer | None) -> None:
        """Keep `server` (None: none, as at the process's exit), stopping the one kept before."""
        with self.lock:
            dropped, self.kept = self.kept, server
        if dropped is not None:
            dropped.stop()


WARM = WarmServer()


def server_for(replicas: Iterable[Replica], warm: bool = False) -> tuple[ReplicaServer, dict[str, ReplicaEndpoint]]:
    """A started server of `replicas` and their endpoints: with `warm`, the one kept warm when it
    serves them all; else a new one (moving to a free port base when this one is taken and none is set)."""
    wanted = list(replicas)
    if not warm:
        WARM.keep(None)  # one kept by an earlier run set would hold the ports this one takes
    server = WARM.take(wanted) if warm else None
    if server is None:
        server = ReplicaServer(wanted)
        server.start(move_if_taken=True)
    return server, {replica.name: endpoint(replica) for replica in wanted}


def done_with(server: ReplicaServer, keep: bool = False) -> None:
    """A run set is done with its server: stop it, or with `keep` keep it warm for the next."""
    if keep and server.exit_code() is None:
        WARM.keep(server)
    else:
        server.stop()


@contextmanager
def replicas_running(replicas: Iterable[Replica]) -> Iterator[dict[str, ReplicaEndpoint]]:
    """Replicas of this process's own while the block runs: their endpoints by name."""
    server = ReplicaServer(replicas)
    endpoints = server.start()
    try:
        yield endpoints
    finally:
        server.stop()


class ServerWatch:
    """Whether the replica server a call talked to lived through it: the call takes `ready()`'s
    token (the live server's pid) before it starts, and asks `intact(token)` when it ends. Reads
    the pid file, so it works in any process using the replicas (a Ray actor's too)."""

    def __init__(self, path: Path, patience: float):
        self.path = path
        self.patience = patience  # seconds to wait for a restart

    def current(self) -> int | None:
        """The pid of the running server, or None while it is dead, restarting or given up on."""
        try:
            pid = int(self.path.read_text())
        except (OSError, ValueError):
            return None
        return pid if is_alive(pid) else None

    def given_up(self) -> bool:
        try:
            return self.path.read_text().strip() == DOWN
        except OSError:
            return False

    async def ready(self) -> int | None:
        """The live server's pid, once there is one (None if none came within `patience`, or the
        server was given up on)."""
        deadline = time.monotonic() + self.patience
        while (pid := self.current()) is None and time.monotonic() < deadline and not self.given_up():
            await asyncio.sleep(0.05)
        return pid

    def intact(self, token: int | None) -> bool:
        return token is not None and self.current() == token


def is_alive(pid: int) -> bool:
    """The process runs: it exists and is not a zombie (killed, its exit not yet collected)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] not in ("Z", "X")


# --- health ----------------------------------------------------------------------------------


def whoami(target: ReplicaEndpoint, via_socket: bool = False) -> dict[str, Any] | None:
    """The `/healthz` JSON at `target`; None if nothing listens, {} if something else answers."""
    import httpx  # loaded where it is used: naming a domain stays a light import

    transport = httpx.HTTPTransport(uds=str(target.socket_path)) if via_socket else None
    try:
        with httpx.Client(transport=transport, timeout=PROBE_TIMEOUT_S, trust_env=False) as client:
            response = client.get(f"{target.base_url}/healthz")
    except httpx.ConnectError:
        return None
    except httpx.HTTPError:
        return {}
    try:
        body = response.json()
    except ValueError:
        return {}
    return body if response.status_code == 200 and isinstance(body, dict) else {}


def is_current(body: dict[str, Any] | None, replica: Replica) -> bool:
    return bool(body) and body.get("replica") == replica.name and body.get("data_hash") == replica.data_hash


def health(replica: Replica) -> bool:
    """True if the replica answers on TCP and on its UNIX socket, with this checkout's data."""
    target = endpoint(replica)
    return all(is_current(whoami(target, via_socket), replica) for via_socket in (False, True))
