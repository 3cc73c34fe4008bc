"""What one run may take of a shared replica server: `ReplicaShare`, enforced by `gated()`.

Runs share one replica server per domain, and a run's python sandbox can send it whatever it likes.
So a sandbox never sees a replica's own socket: `gated(routes, share)` puts a relay in the harness
between them, one UNIX socket per replica, that holds the run to
- at most `connections` open connections at once (more wait in the relay's accept queue), and
- a share of the server's time: each request's wait for its first response byte is charged to the
  run, which earns `time_share` seconds per second (saving up to `burst_s`); a run in debt sends no
  new request until it has earned its way out.
Server time is what one run's traffic costs the others: a 4 MB World Bank reply holds the replica's
interpreter for ~0.1 s. Counting bytes would miss many small requests, counting requests would miss
big replies; the clock sees both.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from armbench.tools.sandbox import ReplicaRoute

READ_CHUNK = 65_536
BAD_GATEWAY = (
    "HTTP/1.0 502 Bad Gateway\r\nContent-Type: text/plain\r\nContent-Length: {length}\r\n\r\n{body}"
)


class ReplicaShare:
    """One run's allowance at the replicas: open connections and server time. Keep one per run."""

    def __init__(self, connections: int = 4, time_share: float = 0.25, burst_s: float = 1.0):
        self.slots = asyncio.Semaphore(connections)
        self.time_share = time_share
        self.burst_s = burst_s
        self.balance = burst_s  # seconds of server time the run may still take at once
        self.updated = time.monotonic()

    def earn(self) -> None:
        now = time.monotonic()
        self.balance = min(self.burst_s, self.balance + (now - self.updated) * self.time_share)
        self.updated = now

    async def admit(self) -> None:
        """Wait until the run is out of debt."""
        self.earn()
        while self.balance < 0:
            await asyncio.sleep(-self.balance / self.time_share)
            self.earn()

    def charge(self, seconds: float) -> None:
        self.earn()
        self.balance -= seconds


class Connection:
    """One relayed connection: times each request from its first byte out to the first byte back."""

    def __init__(self, share: ReplicaShare):
        self.share = share
        self.sent_at: float | None = None  # a request is out and its reply has not started

    async def upstream(self, client: asyncio.StreamReader, server: asyncio.StreamWriter) -> None:
        while data := await client.read(READ_CHUNK):
            if self.sent_at is None:
                await self.share.admit()
                self.sent_at = time.monotonic()
            server.write(data)
            await server.drain()
        if server.can_write_eof():
            server.write_eof()

    async def downstream(self, server: asyncio.StreamReader, client: asyncio.StreamWriter) -> None:
        while data := await server.read(READ_CHUNK):
            if self.sent_at is not None:
                self.share.charge(time.monotonic() - self.sent_at)
                self.sent_at = None
            client.write(data)
            await client.drain()


async def relay(share: ReplicaShare, socket_path: str, client_reader: asyncio.StreamReader,
                client_writer: asyncio.StreamWriter) -> None:
    async with share.slots:
        try:
            server_reader, server_writer = await asyncio.open_unix_connection(socket_path)
        except OSError as error:
            body = f"sandbox: replica socket {socket_path} unavailable: {error}\n"
            client_writer.write(BAD_GATEWAY.format(length=len(body), body=body).encode())
            await close(client_writer)
            return
        connection = Connection(share)
        try:
            await asyncio.gather(
                connection.upstream(client_reader, server_writer),
                connection.downstream(server_reader, client_writer),
            )
        except OSError:
            pass  # either side hung up mid-way: the other is closed below
        finally:
            await close(server_writer)
            await close(client_writer)


async def close(writer: asyncio.StreamWriter) -> None:
    writer.close()
    try:
        await writer.wait_closed()
    except OSError:
        pass


@asynccontextmanager
async def gated(routes: list[ReplicaRoute], share: ReplicaShare) -> AsyncIterator[list[ReplicaRoute]]:
    """The same routes, each through a relay socket that holds the run to `share`, for one sandbox
    call. A replica whose socket is missing keeps its route: the sandbox answers 502 for it."""
    directory = tempfile.mkdtemp(prefix="armbench-gate-")
    os.chmod(directory, 0o755)  # the sandbox's uid must reach the sockets
    servers: list[asyncio.Server] = []
    relays: set[asyncio.Task] = set()

    def relay_to(upstream: str):
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
            if not os.path.exists(route.socket_path):
                gated_routes.append(route)
                continue
            path = os.path.join(directory, f"{route.port}.sock")
            servers.append(await asyncio.start_unix_server(relay_to(route.socket_path), path=path))
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
