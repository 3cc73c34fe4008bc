"""Serve replicas on loopback, each on TCP 127.0.0.1:<port> and on a UNIX socket.

The UNIX socket `<socket dir>/<name>.sock` is how a sandbox in its own network namespace reaches
a replica. Ports: `ARMBENCH_REPLICA_PORT_BASE` (default 8301) + the replica's fixed offset. Sockets
and serve logs go to `ARMBENCH_REPLICA_SOCKET_DIR` (default /tmp/armbench-replicas-<port base>, so run
sets on different port bases never share a socket).

This kit knows replicas, not domains: `armbench.domains` says which replicas exist.
- `serve_forever(replicas)`: serve in the foreground (`bench replicas serve`).
- `ensure_replicas(replicas)`: reuse the replicas that already answer with this checkout's data,
  start the others in one background process (`python -m armbench.replicas.serve`), stopped at
  interpreter exit. It also stops when its parent dies any other way (kill -9): it watches a pipe
  whose only writer is the parent, and the kernel closes that at the parent's death.
- `with replicas_running(replicas) as endpoints:` the same, stopping what it started on exit.
Both block while a server starts (about 2 s); from async code use `asyncio.to_thread`.
"""
from __future__ import annotations

import argparse
import asyncio
import atexit
import importlib
import os
import random
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from armbench.errors import UserError
from armbench.paths import ROOT

PORT_BASE_ENV = "ARMBENCH_REPLICA_PORT_BASE"
SOCKET_DIR_ENV = "ARMBENCH_REPLICA_SOCKET_DIR"
DEFAULT_PORT_BASE = 8301
DEFAULT_SOCKET_DIR = "/tmp/armbench-replicas-{port_base}"
HOST = "127.0.0.1"
START_TIMEOUT_S = 20.0
PROBE_TIMEOUT_S = 2.0
MAX_OFFSET = 99  # port base + offset must stay a port number for every offset a domain may take
PARENT_PIPES: dict[int, int] = {}  # server pid -> the write end of the pipe it watches (launch)


@dataclass(frozen=True)
class Replica:
    """What serving needs of a domain's replica."""

    name: str
    offset: int  # port = port base + offset; fixed, so a replica's port never moves
    app: str  # "module:factory"; the factory returns an ASGI app whose /healthz names it and its data
    data_hash: str | None = None  # what /healthz must report; None in the serving process itself

    def argument(self) -> str:
        return f"{self.name}={self.offset}={self.app}"

    @classmethod
    def from_argument(cls, text: str) -> Replica:
        name, offset, app = text.split("=", 2)
        return cls(name, int(offset), app)


@dataclass(frozen=True)
class ReplicaEndpoint:
    domain: str
    base_url: str  # http://127.0.0.1:<port>
    port: int
    socket_path: Path


def port_base() -> int:
    raw = os.environ.get(PORT_BASE_ENV, "")
    if not raw:
        return DEFAULT_PORT_BASE
    if not raw.isdigit() or not 1 <= int(raw) <= 65535 - MAX_OFFSET:
        raise UserError(f"{PORT_BASE_ENV}={raw!r} is not a usable TCP port number (1-{65535 - MAX_OFFSET})")
    return int(raw)


def socket_dir() -> Path:
    return Path(os.environ.get(SOCKET_DIR_ENV) or DEFAULT_SOCKET_DIR.format(port_base=port_base()))


def free_port_base() -> int:
    """A port base whose every port (base + 0..MAX_OFFSET) is free now, below the ephemeral range
    (32768+), where the kernel would otherwise hand the same ports to client connections: for
    replicas of their own (a Ray actor's, a test's) beside any others on the machine."""
    generator = random.Random()
    while True:
        base = generator.randrange(10_000, 32_768 - MAX_OFFSET - 1)
        if all(port_is_free(base + offset) for offset in range(MAX_OFFSET + 1)):
            return base


def port_is_free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind((HOST, port))
        except OSError:
            return False
    return True


def endpoint(replica: Replica) -> ReplicaEndpoint:
    """Where `replica` listens (under the current environment), running or not."""
    port = port_base() + replica.offset
    return ReplicaEndpoint(replica.name, f"http://{HOST}:{port}", port, socket_dir() / f"{replica.name}.sock")


# --- serving -------------------------------------------------------------------------------


def bind(target: ReplicaEndpoint) -> list[socket.socket]:
    """The TCP and UNIX listening sockets; refuses to take over a socket a live server holds."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        tcp.bind((HOST, target.port))
    except OSError as exc:
        tcp.close()
        raise UserError(f"cannot listen on {HOST}:{target.port} for the {target.domain} replica ({exc}); "
                        f"stop what holds it or set {PORT_BASE_ENV}") from None
    path = target.socket_path
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.exists():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
            if probe.connect_ex(str(path)) == 0:
                tcp.close()
                raise UserError(f"a server already listens on {path}; stop it or set {SOCKET_DIR_ENV}")
        path.unlink()  # left behind by a server that was killed
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(path))
    # The sandbox may run as another user; the TCP port is open to every local user anyway.
    path.chmod(0o666)
    return [tcp, unix]


def load_reference(reference: str) -> Any:
    """The attribute a "module:attribute" string names (how domains name their apps, tools, builders)."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_app(replica: Replica) -> Any:
    return load_reference(replica.app)()


async def serve(replicas: list[Replica], parent_pipe: int | None = None) -> None:
    """Serve until cancelled or, given `parent_pipe` (a pipe's read end), until its writer is gone."""
    import uvicorn  # only the serving process needs it: naming a domain stays a light import

    targets = [endpoint(replica) for replica in replicas]
    listeners = [bind(target) for target in targets]  # before loading any data: fail fast
    servers = [uvicorn.Server(uvicorn.Config(load_app(replica), log_level="warning")) for replica in replicas]
    if parent_pipe is not None:
        loop = asyncio.get_running_loop()
        loop.add_reader(parent_pipe, stop_servers, loop, parent_pipe, servers)
    try:
        await asyncio.gather(*(server.serve(sockets=sockets) for server, sockets in zip(servers, listeners)))
    finally:
        for target in targets:
            target.socket_path.unlink(missing_ok=True)


def stop_servers(loop: asyncio.AbstractEventLoop, parent_pipe: int, servers: list[Any]) -> None:
    """The parent is gone (its end of the pipe closed): stop now, without waiting for clients."""
    loop.remove_reader(parent_pipe)  # end-of-file stays readable: once is enough
    for server in servers:
        server.should_exit = server.force_exit = True


def serve_forever(replicas: list[Replica], parent_pipe: int | None = None) -> None:
    """Serve `replicas` in the foreground until Ctrl-C or SIGTERM (or the parent's death)."""
    # uvicorn re-raises the signal it stopped on; this makes SIGTERM unwind like Ctrl-C does,
    # so `serve` still removes its socket files.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        asyncio.run(serve(replicas, parent_pipe))
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- health and background start ----------------------------------------------------------


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


def check_reusable(replica: Replica) -> bool:
    """True if the replica already runs; False if its port is free; UserError if it is taken."""
    target = endpoint(replica)
    body = whoami(target)
    if body is None:
        return False
    if not is_current(body, replica):
        who = (f"a {body['replica']!r} replica with data {str(body.get('data_hash'))[:12]}"
               if body.get("replica") else "something that is not an armbench replica")
        raise UserError(f"port {target.port} is taken by {who}, not the {target.domain} replica with this "
                        f"checkout's data ({(replica.data_hash or '')[:12]}); stop it or set {PORT_BASE_ENV}")
    if not is_current(whoami(target, via_socket=True), replica):
        raise UserError(f"the {target.domain} replica on port {target.port} does not answer on "
                        f"{target.socket_path}; it may use another {SOCKET_DIR_ENV}; stop it and retry")
    return True


def launch(replicas: list[Replica]) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = socket_dir() / f"{'+'.join(r.name for r in replicas)}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    # The write end stays open in this process alone (pipes are not inherited by other children),
    # so the server sees end-of-file exactly when this process dies or stops it.
    watched, writer = os.pipe()
    command = [sys.executable, "-m", "armbench.replicas.serve", "--parent-pipe", str(watched),
               *(arg for replica in replicas for arg in ("--replica", replica.argument()))]
    try:
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log,
                                       stderr=subprocess.STDOUT, pass_fds=(watched,))
    except BaseException:
        os.close(writer)
        raise
    finally:
        os.close(watched)
    PARENT_PIPES[process.pid] = writer
    return process, log_path


def wait_healthy(replicas: list[Replica], process: subprocess.Popen[bytes], log_path: Path) -> None:
    names = ", ".join(r.name for r in replicas)
    deadline = time.monotonic() + START_TIMEOUT_S
    while replicas := [r for r in replicas if not health(r)]:
        if process.poll() is not None:
            tail = "\n".join(log_path.read_text(errors="replace").splitlines()[-5:])
            raise UserError(f"the {names} replica server exited with code {process.returncode}; "
                            f"see {log_path}:\n{tail}")
        if time.monotonic() > deadline:
            raise UserError(f"the {names} replica was not healthy after {START_TIMEOUT_S:.0f} s; see {log_path}")
        time.sleep(0.1)


def stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    writer = PARENT_PIPES.pop(process.pid, None)
    if writer is not None:
        os.close(writer)


def start_missing(replicas: Iterable[Replica]) -> tuple[dict[str, ReplicaEndpoint], subprocess.Popen[bytes] | None]:
    """Every replica's endpoint by name, and the process started for those not yet running (or None)."""
    wanted = list({replica.name: replica for replica in replicas}.values())
    endpoints = {replica.name: endpoint(replica) for replica in wanted}
    missing = [replica for replica in wanted if not check_reusable(replica)]
    if not missing:
        return endpoints, None
    process, log_path = launch(missing)
    try:
        wait_healthy(missing, process, log_path)
    except BaseException:
        stop(process)
        raise
    return endpoints, process


def ensure_replicas(replicas: Iterable[Replica]) -> dict[str, ReplicaEndpoint]:
    """Endpoints of healthy `replicas`, by name; what this starts is stopped at interpreter exit."""
    endpoints, process = start_missing(replicas)
    if process is not None:
        atexit.register(stop, process)
    return endpoints


@contextmanager
def replicas_running(replicas: Iterable[Replica]) -> Iterator[dict[str, ReplicaEndpoint]]:
    """`ensure_replicas`, stopping on exit the server it started (a reused one keeps running)."""
    endpoints, process = start_missing(replicas)
    try:
        yield endpoints
    finally:
        if process is not None:
            stop(process)


def main(argv: list[str] | None = None) -> None:
    """The background server `launch` starts; people use `bench replicas serve`."""
    parser = argparse.ArgumentParser(prog="python -m armbench.replicas.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--replica", action="append", required=True, type=Replica.from_argument,
                        help="NAME=OFFSET=MODULE:FACTORY (repeatable)")
    parser.add_argument("--parent-pipe", type=int, help="a pipe's read end: stop when its writer is gone")
    arguments = parser.parse_args(argv)
    try:
        for target in map(endpoint, arguments.replica):
            print(f"{target.domain}: {target.base_url} and unix:{target.socket_path}", flush=True)
        serve_forever(arguments.replica, arguments.parent_pipe)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
