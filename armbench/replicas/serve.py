"""Where replicas listen, and the process that serves them.

Each replica listens on TCP 127.0.0.1:<port> and on a UNIX socket `<socket dir>/<name>-<port>.sock`,
which is how a sandbox in its own network namespace reaches it. Ports: `ARMBENCH_REPLICA_PORT_BASE`
(default 8301) + the replica's fixed offset. Sockets and serve logs go to
`ARMBENCH_REPLICA_SOCKET_DIR` (default /tmp/armbench-replicas-<port base>).

- `listen(target)`: the replica's two listening sockets, or a UserError naming what holds them.
  Listening is the lock: the kernel gives a port to one process, and it frees it when that process
  dies (even by kill -9), so two `bench` processes never share or race for a replica.
- `serve_forever(replicas)`: listen and serve in the foreground (`bench replicas serve`).
- `python -m armbench.replicas.serve`: serve on sockets its parent listens on and passes down
  (supervisor.py), so a server that dies is restarted on the same sockets, and connections that
  arrive meanwhile wait in the kernel's queue instead of being refused.
"""
from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import random
import signal
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from armbench.errors import UserError
from armbench.replicas.cost_meter import ServerMeter, metered

PORT_BASE_ENV = "ARMBENCH_REPLICA_PORT_BASE"
SOCKET_DIR_ENV = "ARMBENCH_REPLICA_SOCKET_DIR"
DEFAULT_PORT_BASE = 8301
DEFAULT_SOCKET_DIR = "/tmp/armbench-replicas-{port_base}"
HOST = "127.0.0.1"
BACKLOG = 512  # connections that wait while a server starts or restarts
MAX_OFFSET = 99  # port base + offset must stay a port number for every offset a domain may take


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


def make_socket_dir() -> Path:
    """The socket folder, made if missing; a UserError when it cannot be (a file, /proc, no rights)."""
    directory = socket_dir()
    try:
        directory.mkdir(parents=True, exist_ok=True)
        if not directory.is_dir():
            raise NotADirectoryError(20, "Not a directory")
        with tempfile.TemporaryFile(dir=directory):
            pass
    except OSError as error:
        raise UserError(f"{SOCKET_DIR_ENV}={directory} cannot hold the replicas' sockets ({error.strerror or error}); "
                        "set it to a folder of your own") from None
    return directory


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
    return ReplicaEndpoint(replica.name, f"http://{HOST}:{port}", port, socket_dir() / f"{replica.name}-{port}.sock")


# --- serving -------------------------------------------------------------------------------


def listen(target: ReplicaEndpoint) -> list[socket.socket]:
    """The replica's TCP and UNIX listening sockets. The TCP port is taken first: whoever holds it
    owns the socket path too (it names the port), so a stale file there is removed safely."""
    tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT is free; one in LISTEN is not
    try:
        tcp.bind((HOST, target.port))
        tcp.listen(BACKLOG)
    except OSError as exc:
        tcp.close()
        raise PortTaken(f"port {target.port} for the {target.domain} replica is taken ({exc.strerror}); "
                        f"stop what holds it or set {PORT_BASE_ENV} to another base") from None
    path = target.socket_path
    make_socket_dir()
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        path.unlink(missing_ok=True)  # left by a server of this port that died
        unix.bind(str(path))
        unix.listen(BACKLOG)
        path.chmod(0o666)  # the sandbox may run as another user; the TCP port is open to every local user anyway
    except OSError as exc:
        tcp.close()
        unix.close()
        raise UserError(f"cannot listen on {path} for the {target.domain} replica ({exc.strerror}); "
                        f"set {SOCKET_DIR_ENV} to a folder of your own") from None
    return [tcp, unix]


class PortTaken(UserError):
    """Another process listens on a replica's port."""


def load_reference(reference: str) -> Any:
    """The attribute a "module:attribute" string names (how domains name their apps, tools, builders)."""
    module, _, attribute = reference.partition(":")
    return getattr(importlib.import_module(module), attribute)


def load_app(replica: Replica) -> Any:
    return load_reference(replica.app)()


async def serve(replicas: list[Replica], listeners: list[list[socket.socket]], parent_pipe: int | None = None,
                on_ready: Callable[[], None] | None = None) -> None:
    """Serve each replica on its listening sockets until cancelled or, given `parent_pipe` (a pipe's
    read end), until its writer is gone. `on_ready` is called once every replica serves."""
    import uvicorn  # only the serving process needs it: naming a domain stays a light import

    from armbench.replicas.web.frictions import Frictions  # as light: it reads pages as the sites do (polars)

    class Member(uvicorn.Server):
        """One replica's server: the Ctrl-C or SIGTERM it catches stops every replica at once
        (uvicorn would pass it on from one server to the next: 2.4 s for ten replicas)."""

        def handle_exit(self, sig: int, frame: Any) -> None:
            super().handle_exit(sig, frame)
            for server in servers:
                server.should_exit = True

    meter = ServerMeter()
    # The frictions outside the meter: a request's latency is no server time it costs the others.
    apps = [Frictions(metered(load_app(replica), meter)) for replica in replicas]
    servers = [Member(uvicorn.Config(app, log_level="warning")) for app in apps]
    if parent_pipe is not None:
        loop = asyncio.get_running_loop()
        loop.add_reader(parent_pipe, stop_servers, loop, parent_pipe, servers)
    serving = [asyncio.create_task(server.serve(sockets=sockets)) for server, sockets in zip(servers, listeners)]
    if on_ready is not None:
        while not all(server.started for server in servers) and not any(task.done() for task in serving):
            await asyncio.sleep(0.05)
        if all(server.started for server in servers):
            on_ready()
    await asyncio.gather(*serving)


def stop_servers(loop: asyncio.AbstractEventLoop, parent_pipe: int, servers: list[Any]) -> None:
    """The parent is gone (its end of the pipe closed): stop now, without waiting for clients."""
    loop.remove_reader(parent_pipe)  # end-of-file stays readable: once is enough
    for server in servers:
        server.should_exit = server.force_exit = True


def serve_forever(replicas: list[Replica], on_ready: Callable[[], None] | None = None) -> None:
    """Listen and serve `replicas` in the foreground until Ctrl-C or SIGTERM (`on_ready`: see `serve`)."""
    targets = [endpoint(replica) for replica in replicas]
    listeners = []
    try:
        for target in targets:  # before loading any data: fail fast
            listeners.append(listen(target))
        run_until_stopped(serve(replicas, listeners, on_ready=on_ready))
    finally:
        for sockets in listeners:
            for sock in sockets:
                sock.close()
        for target in targets[:len(listeners)]:
            target.socket_path.unlink(missing_ok=True)


def run_until_stopped(main: Any) -> None:
    """Run the `serve` coroutine until Ctrl-C or SIGTERM."""
    # uvicorn re-raises the signal it stopped on; this makes SIGTERM unwind like Ctrl-C does.
    previous = signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        # The replicas are the web the agents read, and the parity checks crawl whole sites: uvloop,
        # and httptools (which uvicorn picks when it is installed), spend less CPU on a page than
        # asyncio's own loop and h11.
        import uvloop
        with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
            runner.run(main)
    except KeyboardInterrupt:
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)


def main(argv: list[str] | None = None) -> None:
    """The background server supervisor.py starts; people use `bench replicas serve`."""
    parser = argparse.ArgumentParser(prog="python -m armbench.replicas.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--replica", action="append", required=True, type=Replica.from_argument,
                        help="NAME=OFFSET=MODULE:FACTORY (repeatable)")
    parser.add_argument("--sockets", action="append", required=True, metavar="TCP_FD,UNIX_FD",
                        help="the listening sockets of each --replica, in their order (inherited descriptors)")
    parser.add_argument("--parent-pipe", type=int, help="a pipe's read end: stop when its writer is gone")
    arguments = parser.parse_args(argv)
    if len(arguments.sockets) != len(arguments.replica):
        parser.error("give one --sockets per --replica")
    listeners = [[socket.socket(fileno=int(fd)) for fd in pair.split(",")] for pair in arguments.sockets]
    for target in map(endpoint, arguments.replica):
        print(f"{target.domain}: {target.base_url} and unix:{target.socket_path}", flush=True)
    run_until_stopped(serve(arguments.replica, listeners, arguments.parent_pipe))


if __name__ == "__main__":
    main()
