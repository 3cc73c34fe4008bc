"""Serve the replica sites on loopback, each on TCP 127.0.0.1:<port> and on a UNIX socket.

The UNIX socket `<socket dir>/<domain>.sock` is how a sandbox in its own network namespace
reaches a replica. Ports: `ARMBENCH_REPLICA_PORT_BASE` (default 8301) + the domain's offset, so
gpus is 8301 and later domains take 8302, 8303, ... Sockets and serve logs go to
`ARMBENCH_REPLICA_SOCKET_DIR` (default /tmp/armbench-replicas).

- `serve_forever(domains)`: serve in the foreground (`python -m replicas.serve`, `bench replicas serve`).
- `ensure_replicas(domains)`: reuse the replicas that already answer with this checkout's data,
  start the others in one background process, stopped at interpreter exit.
- `with replicas_running(domains) as endpoints:` the same, stopping what it started on exit.
Both block while a server starts (about 2 s); from async code use `asyncio.to_thread`.
"""
from __future__ import annotations

import argparse
import asyncio
import atexit
import hashlib
import importlib
import os
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

import httpx
import uvicorn

from harness.errors import UserError
from harness.paths import ROOT
from replicas.data import data_hash

PORT_BASE_ENV = "ARMBENCH_REPLICA_PORT_BASE"
SOCKET_DIR_ENV = "ARMBENCH_REPLICA_SOCKET_DIR"
DEFAULT_PORT_BASE = 8301
DEFAULT_SOCKET_DIR = "/tmp/armbench-replicas"
HOST = "127.0.0.1"
START_TIMEOUT_S = 20.0
PROBE_TIMEOUT_S = 2.0


@dataclass(frozen=True)
class ReplicaSpec:
    domain: str
    app: str  # "module:factory", the factory returns an ASGI app
    offset: int  # port = port base + offset; fixed, so a domain's port never moves
    title: str  # how every arm's system prompt names it
    tables: str  # glob of its tables in replicas/data: what its data hash covers


REPLICAS: dict[str, ReplicaSpec] = {
    spec.domain: spec
    for spec in (
        ReplicaSpec("gpus", "replicas.gpus.app:create_app", 0, "GPU specification database (website)", "gpus"),
        ReplicaSpec("worldbank", "replicas.worldbank.app:create_app", 1, "World Bank Indicators API v2", "wb_*"),
        ReplicaSpec("funds", "replicas.funds.app:create_app", 2, "US mutual fund screener (website)", "funds"),
    )
}


@dataclass(frozen=True)
class ReplicaEndpoint:
    domain: str
    base_url: str  # http://127.0.0.1:<port>
    port: int
    socket_path: Path


def replica_data_hash(domains: Iterable[str]) -> str:
    """The data hash of these domains' tables: adding or rebuilding another domain's data leaves a
    run set's hash, its resume and its recording's comparisons alone."""
    hashes = [data_hash(replica_spec(domain).tables) for domain in sorted(set(domains))]
    return hashes[0] if len(hashes) == 1 else hashlib.sha256("".join(hashes).encode()).hexdigest()


def port_base() -> int:
    raw = os.environ.get(PORT_BASE_ENV, "")
    if not raw:
        return DEFAULT_PORT_BASE
    if not raw.isdigit() or not 1 <= int(raw) <= 65535 - len(REPLICAS):
        raise UserError(f"{PORT_BASE_ENV}={raw!r} is not a usable TCP port number")
    return int(raw)


def socket_dir() -> Path:
    return Path(os.environ.get(SOCKET_DIR_ENV) or DEFAULT_SOCKET_DIR)


def replica_spec(domain: str) -> ReplicaSpec:
    spec = REPLICAS.get(domain)
    if spec is None:
        raise UserError(f"no replica for domain {domain!r}; replicas: {', '.join(REPLICAS)}")
    return spec


def endpoint(domain: str) -> ReplicaEndpoint:
    """Where `domain`'s replica listens (under the current environment), running or not."""
    port = port_base() + replica_spec(domain).offset
    return ReplicaEndpoint(domain, f"http://{HOST}:{port}", port, socket_dir() / f"{domain}.sock")


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


def load_app(target: ReplicaEndpoint) -> Any:
    module, _, factory = REPLICAS[target.domain].app.partition(":")
    return getattr(importlib.import_module(module), factory)()


async def serve(targets: list[ReplicaEndpoint]) -> None:
    listeners = [bind(target) for target in targets]  # before loading any data: fail fast
    servers = [uvicorn.Server(uvicorn.Config(load_app(target), log_level="warning")) for target in targets]
    try:
        await asyncio.gather(*(server.serve(sockets=sockets) for server, sockets in zip(servers, listeners)))
    finally:
        for target in targets:
            target.socket_path.unlink(missing_ok=True)


def serve_forever(domains: Iterable[str] | None = None) -> None:
    """Serve `domains` (default: every replica) in the foreground until Ctrl-C or SIGTERM."""
    targets = [endpoint(domain) for domain in dict.fromkeys(domains or REPLICAS)]
    # uvicorn re-raises the signal it stopped on; this makes SIGTERM unwind like Ctrl-C does,
    # so `serve` still removes its socket files.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        asyncio.run(serve(targets))
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


# --- health and background start ----------------------------------------------------------


def whoami(target: ReplicaEndpoint, via_socket: bool = False) -> dict[str, Any] | None:
    """The `/healthz` JSON at `target`; None if nothing listens, {} if something else answers."""
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


def is_current(body: dict[str, Any] | None, domain: str) -> bool:
    return bool(body) and body.get("replica") == domain and body.get("data_hash") == replica_data_hash([domain])


def health(target: ReplicaEndpoint) -> bool:
    """True if the replica answers on TCP and on its UNIX socket, with this checkout's data."""
    return all(is_current(whoami(target, via_socket), target.domain) for via_socket in (False, True))


def check_reusable(target: ReplicaEndpoint) -> bool:
    """True if the replica already runs; False if its port is free; UserError if it is taken."""
    body = whoami(target)
    if body is None:
        return False
    if not is_current(body, target.domain):
        who = (f"a {body['replica']!r} replica with data {str(body.get('data_hash'))[:12]}"
               if body.get("replica") else "something that is not an armbench replica")
        raise UserError(f"port {target.port} is taken by {who}, not the {target.domain} replica with this "
                        f"checkout's data ({replica_data_hash([target.domain])[:12]}); stop it or set {PORT_BASE_ENV}")
    if not is_current(whoami(target, via_socket=True), target.domain):
        raise UserError(f"the {target.domain} replica on port {target.port} does not answer on "
                        f"{target.socket_path}; it may use another {SOCKET_DIR_ENV}; stop it and retry")
    return True


def launch(domains: list[str]) -> tuple[subprocess.Popen[bytes], Path]:
    log_path = socket_dir() / f"{'+'.join(domains)}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    command = [sys.executable, "-m", "replicas.serve", *(arg for d in domains for arg in ("--domain", d))]
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=ROOT, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT)
    return process, log_path


def wait_healthy(targets: list[ReplicaEndpoint], process: subprocess.Popen[bytes], log_path: Path) -> None:
    names = ", ".join(t.domain for t in targets)
    deadline = time.monotonic() + START_TIMEOUT_S
    while targets := [t for t in targets if not health(t)]:
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


def start_missing(domains: Iterable[str]) -> tuple[dict[str, ReplicaEndpoint], subprocess.Popen[bytes] | None]:
    """Every domain's endpoint, and the process started for those not yet running (or None)."""
    endpoints = {domain: endpoint(domain) for domain in dict.fromkeys(domains)}
    missing = [domain for domain, target in endpoints.items() if not check_reusable(target)]
    if not missing:
        return endpoints, None
    process, log_path = launch(missing)
    try:
        wait_healthy([endpoints[domain] for domain in missing], process, log_path)
    except BaseException:
        stop(process)
        raise
    return endpoints, process


def ensure_replicas(domains: Iterable[str]) -> dict[str, ReplicaEndpoint]:
    """Endpoints of healthy replicas for `domains`; what this starts is stopped at interpreter exit."""
    endpoints, process = start_missing(domains)
    if process is not None:
        atexit.register(stop, process)
    return endpoints


@contextmanager
def replicas_running(domains: Iterable[str]) -> Iterator[dict[str, ReplicaEndpoint]]:
    """`ensure_replicas`, stopping on exit the server it started (a reused one keeps running)."""
    endpoints, process = start_missing(domains)
    try:
        yield endpoints
    finally:
        if process is not None:
            stop(process)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m replicas.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", choices=list(REPLICAS),
                        help="replica to serve (repeatable; default: all)")
    domains = parser.parse_args(argv).domain or list(REPLICAS)
    try:
        for target in map(endpoint, domains):
            print(f"{target.domain}: {target.base_url} and unix:{target.socket_path}", flush=True)
        serve_forever(domains)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
