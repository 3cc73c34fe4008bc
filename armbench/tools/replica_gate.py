"""What one run may take of a shared replica server: `ReplicaShare`, enforced by `gated()`.

Runs share one replica server per domain, and a run's python sandbox can send it whatever it likes.
So a sandbox never sees a replica's own socket: `gated(routes, share)` puts a relay in the harness
between them, one UNIX socket per replica, that holds the run to
- one request per connection (the relay forwards the request head with `Connection: close`), so
  every request is seen and charged, pipelined or not;
- at most `connections` requests at once (up to MAX_WAITING more wait; beyond that, 503), and
- a share of the server's time: each request pays what it cost the server, as the server measures it
  (replicas/cost_meter.py: its part of the server's CPU time, the same however busy the machine is),
  or, where no measure comes back (the server died, the call ended first), its whole wait for the
  reply; the run earns `time_share` seconds per second (saving up to `burst_s`), and a run in debt
  sends no new request until it has earned its way out.
Server time is what one run's traffic costs the others: a 4 MB World Bank reply holds the replica's
interpreter for ~0.1 s. Counting bytes would miss many small requests, counting requests would miss
big replies; the clock sees both. The wait for a reply beyond that (other runs' requests ahead of
it, or a busy server writing a reply in parts) is the harness's: the share counts it (`waited_s`),
and the sandbox's wall limit does not.
"""
from __future__ import annotations

import asyncio
import fcntl
import os
import shutil
import stat
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from functools import cache

from armbench.tools.sandbox import ReplicaRoute
from armbench.types import REPLICA_COST_HEADER, REPLICA_WANT_COST_HEADER
from armbench.web_profile import WEB_HEADERS

READ_CHUNK = 65_536
MAX_WAITING = 16  # a run's connections waiting for a slot; more are answered 503 at once
HOP_BY_HOP = {b"connection", b"keep-alive", b"proxy-connection", b"upgrade"}
# the harness's, never the sandbox's: its cost headers, and the run's web profile (the route's own)
DROPPED = HOP_BY_HOP | {REPLICA_WANT_COST_HEADER, REPLICA_COST_HEADER, *(name.encode() for name in WEB_HEADERS)}
ASK_COST = REPLICA_WANT_COST_HEADER + b": 1"
GATE_PREFIX = "armbench-gate-"  # then the owner's pid, "-", and mkdtemp's letters


class ReplicaShare:
    """One run's allowance at the replicas: open connections and server time. Keep one per run."""

    def __init__(self, connections: int = 4, time_share: float = 0.25, burst_s: float = 1.0):
        self.connections = connections
        self.slots = asyncio.Semaphore(connections)
        self.waiting = 0
        self.time_share = time_share
        self.burst_s = burst_s
        self.balance = burst_s  # seconds of server time the run may still take at once
        self.awaited = 0  # requests out whose reply (or the rest of it) has not come
        self.awaited_s = 0.0  # time in which any request of the run awaited its reply
        self.updated = time.monotonic()

    def settle(self) -> None:
        """Earn for the time since the last settling, and count it as awaited if a request was out."""
        now = time.monotonic()
        elapsed, self.updated = now - self.updated, now
        self.balance = min(self.burst_s, self.balance + elapsed * self.time_share)
        if self.awaited:
            self.awaited_s += elapsed

    async def admit(self) -> None:
        """Wait until the run is out of debt."""
        self.settle()
        while self.balance < 0:
            await asyncio.sleep(-self.balance / self.time_share)
            self.settle()

    def sent(self) -> float:
        """A request went out; returns when, for `answered`."""
        self.settle()
        self.awaited += 1
        return self.updated

    def answered(self, sent_at: float, cost_s: float | None) -> None:
        """The reply started, or the request ended without one: pay its cost, or its whole wait."""
        self.settle()
        self.awaited -= 1
        self.balance -= cost_s if cost_s is not None else self.updated - sent_at

    @contextmanager
    def awaiting_more(self) -> Iterator[None]:
        """The rest of a reply is awaited: counted as the harness's time, as its first byte was (a
        busy server may write a reply's head and its body apart), and paid for by no one."""
        self.settle()
        self.awaited += 1
        try:
            yield
        finally:
            self.settle()
            self.awaited -= 1

    def waited_s(self) -> float:
        """How long, so far, the run awaited a reply, or the rest of one (the harness's time)."""
        self.settle()
        return self.awaited_s


async def relay(share: ReplicaShare, route: ReplicaRoute, client_reader: asyncio.StreamReader,
                client_writer: asyncio.StreamWriter) -> None:
    """One request: wait for a slot and for the run to be out of debt, forward the request head with
    `Connection: close` and the route's headers (the replicas take GET and HEAD; a body or a
    pipelined request behind the head is not forwarded), charge the wait for the reply's first
    byte, then pass the reply on (its wait for the rest of the reply is the harness's too)."""
    socket_path = route.socket_path
    if share.waiting >= MAX_WAITING:  # each waiting connection holds a harness file descriptor
        await refuse(client_writer, "503 Service Unavailable", f"sandbox: more than {MAX_WAITING} "
                     f"connections wait for the replica; {share.connections} are served at once")
        return
    share.waiting += 1
    try:
        await share.slots.acquire()
    finally:
        share.waiting -= 1
    try:
        try:
            head = await client_reader.readuntil(b"\r\n\r\n")
        except asyncio.LimitOverrunError:
            await refuse(client_writer, "431 Request Header Fields Too Large", "sandbox: request head too long")
            return
        except (asyncio.IncompleteReadError, OSError):
            await close(client_writer)
            return
        await share.admit()
        try:
            server_reader, server_writer = await asyncio.open_unix_connection(socket_path)
        except OSError as error:
            await refuse(client_writer, "502 Bad Gateway", f"sandbox: replica socket {socket_path} unavailable: {error}")
            return
        try:
            added = [f"{name}: {value}".encode("latin-1") for name, value in route.headers.items()]
            await pass_reply(share, closing(head, ASK_COST, *added), server_reader, server_writer, client_writer)
        except OSError:
            pass  # either side hung up mid-way: both are closed below
        finally:
            await close(server_writer)
            await close(client_writer)
    finally:
        share.slots.release()


async def pass_reply(share: ReplicaShare, head: bytes, server_reader: asyncio.StreamReader,
                     server_writer: asyncio.StreamWriter, client_writer: asyncio.StreamWriter) -> None:
    sent_at, cost_s = share.sent(), None
    try:
        server_writer.write(head)
        await server_writer.drain()
        data = await server_reader.read(READ_CHUNK)
        if b"\r\n\r\n" in data:  # the reply's head (in its first chunk, as it always is in practice)
            head, _, body = data.partition(b"\r\n\r\n")
            cost_s = reply_cost(head)
            data = closing(head) + body
    finally:  # paid also when the call ends first: a request left behind is no free lunch
        share.answered(sent_at, cost_s)
    while data:
        client_writer.write(data)
        await client_writer.drain()  # the sandbox's time: it reads at its own pace
        with share.awaiting_more():
            data = await server_reader.read(READ_CHUNK)


def closing(head: bytes, *added: bytes) -> bytes:
    """A request's or reply's head with `Connection: close`, whatever it said (the server ends the
    connection after this reply, and the client knows not to send another on it), without the
    harness's cost headers, and with the `added` header lines."""
    lines = head.rstrip(b"\r\n").split(b"\r\n")
    kept = [line for line in lines[1:] if line.split(b":", 1)[0].strip().lower() not in DROPPED]
    return b"\r\n".join([lines[0], *kept, *added, b"Connection: close"]) + b"\r\n\r\n"


def reply_cost(head: bytes) -> float | None:
    """The server time a reply's head says its request cost (replicas/cost_meter.py), if it says."""
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == REPLICA_COST_HEADER:
            try:
                cost_s = float(value)
            except ValueError:
                return None
            return cost_s if 0 <= cost_s < float("inf") else None
    return None


async def refuse(writer: asyncio.StreamWriter, status: str, message: str) -> None:
    body = message + "\n"
    writer.write(f"HTTP/1.0 {status}\r\nContent-Type: text/plain\r\nContent-Length: {len(body)}\r\n\r\n{body}".encode())
    await close(writer)


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


@asynccontextmanager
async def gated(routes: list[ReplicaRoute], share: ReplicaShare) -> AsyncIterator[list[ReplicaRoute]]:
    """The same routes, each through a relay socket that holds the run to `share`, for one sandbox
    call. A replica that is down is answered 502 by its relay."""
    directory, lock = gate_folder()
    servers: list[asyncio.Server] = []
    relays: set[asyncio.Task] = set()

    def relay_to(upstream: ReplicaRoute):
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            relays.add(task)
            try:
                await relay(share, upstream, reader, writer)
            except asyncio.CancelledError:
                pass  # the call is over (below); asyncio would log a cancelled callback task
            finally:
                relays.discard(task)
        return serve

    try:
        gated_routes = []
        for route in routes:
            path = os.path.join(directory, f"{route.port}.sock")
            servers.append(await asyncio.start_unix_server(relay_to(route), path=path))
            os.chmod(path, 0o666)
            gated_routes.append(route.model_copy(update={"socket_path": path}))
        yield gated_routes
    finally:  # the sandbox is gone: end what it left open
        for server in servers:
            server.close()
        for task in list(relays):
            task.cancel()
        await asyncio.gather(*relays, return_exceptions=True)
        shutil.rmtree(directory, ignore_errors=True)
        os.close(lock)


def gate_folder() -> tuple[str, int]:
    """A new folder for one call's relay sockets and a descriptor holding its lock. The folder is
    named after this process and locked while it lives (the kernel lets go however the process
    ends), so a later process can tell a leftover of a `kill -9` from a folder in use."""
    sweep_leftover_gates()
    directory = tempfile.mkdtemp(prefix=f"{GATE_PREFIX}{os.getpid()}-")
    os.chmod(directory, 0o755)  # the sandbox's uid must reach the sockets
    lock = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return directory, lock


@cache  # once per process: the leftovers of the processes that died before it started
def sweep_leftover_gates() -> None:
    """Remove this user's gate folders whose owner is gone: the pid in the name runs no process and
    nobody holds the folder's lock. A live process's folder (its pid alive, or its lock held, as in
    another pid namespace sharing /tmp) is never touched."""
    root = tempfile.gettempdir()
    for name in os.listdir(root):
        pid = name.removeprefix(GATE_PREFIX).partition("-")[0]
        if not name.startswith(GATE_PREFIX) or not pid.isdigit() or process_exists(int(pid)):
            continue
        path = os.path.join(root, name)
        try:
            info = os.lstat(path)
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            lock = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            shutil.rmtree(path, ignore_errors=True)
        except OSError:
            pass  # locked: its owner lives
        finally:
            os.close(lock)


def process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
