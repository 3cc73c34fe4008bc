"""The relay between a run's sandbox and a shared replica: one run cannot crowd out another."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import tempfile

import pytest

from armbench.domains import find_domain
from armbench.replicas.supervisor import replicas_running
from armbench.tools.replica_gate import ReplicaShare
from armbench.tools.sandbox import ReplicaRoute, SandboxConfig
from armbench.tools.web_tools import PythonTool
from tests.conftest import free_port, free_port_base

# A 4 MB reply: about 0.1 s of the replica's interpreter each.
BIG = "/v2/country/all/indicator/SP.POP.TOTL;NY.GDP.MKTP.CD?format=json&per_page=20000&source=2"
SMALL = "/v2/country/DEU/indicator/SP.POP.TOTL?format=json&date=2019"

FLOOD = """
import threading, urllib.request
def fetch():
    while True:
        try:
            urllib.request.urlopen("{base}{path}", timeout=30).read()
        except Exception:
            pass
for _ in range(8):  # more would spend the sandbox's 64 threads (the forwarder takes 2 per connection)
    threading.Thread(target=fetch).start()
"""

MEASURE = """
import json, statistics, time, urllib.request
latencies = []
for _ in range({count}):
    start = time.perf_counter()
    urllib.request.urlopen("{base}{path}", timeout=30).read()
    latencies.append(time.perf_counter() - start)
    time.sleep(0.05)
print(json.dumps(statistics.median(latencies)))
"""


@pytest.fixture(scope="module")
def worldbank():
    directory = tempfile.mkdtemp(prefix="ab-", dir="/tmp")
    os.chmod(directory, 0o755)
    saved = {key: os.environ.get(key) for key in ("ARMBENCH_REPLICA_PORT_BASE", "ARMBENCH_REPLICA_SOCKET_DIR")}
    os.environ.update(ARMBENCH_REPLICA_PORT_BASE=str(free_port_base()), ARMBENCH_REPLICA_SOCKET_DIR=directory)
    try:
        with replicas_running([find_domain("worldbank").replica]) as endpoints:
            target = endpoints["worldbank"]
            yield target.base_url.rstrip("/"), ReplicaRoute(port=target.port, socket_path=str(target.socket_path))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(directory, ignore_errors=True)


async def median_latency(tool: PythonTool, base: str, count: int = 40) -> float:
    outcome = await tool.invoke({"code": MEASURE.format(base=base, path=SMALL, count=count)})
    assert outcome.result["exit_code"] == 0, outcome.result
    return json.loads(outcome.result["stdout"])


async def test_a_flooding_run_leaves_another_runs_replica_calls_within_2x(worldbank):
    """Without the gate the same flood took the other run's p50 from ~3 ms to ~400 ms."""
    base, route = worldbank
    config = SandboxConfig(wall_timeout_s=30.0)
    victim, flooder = PythonTool([route], config), PythonTool([route], config)
    quiet = await median_latency(victim, base)
    flood = asyncio.create_task(flooder.invoke({"code": FLOOD.format(base=base, path=BIG)}))
    await asyncio.sleep(2.0)  # the flood is under way, its savings spent
    crowded = await median_latency(victim, base)
    flood.cancel()
    await asyncio.gather(flood, return_exceptions=True)
    print(f"p50 quiet {quiet * 1000:.1f} ms, beside a flood {crowded * 1000:.1f} ms")
    assert crowded <= 2 * quiet, f"p50 {quiet * 1000:.1f} ms quiet, {crowded * 1000:.1f} ms beside a flood"


PARALLEL = """
import threading, urllib.request
threads = [threading.Thread(target=lambda: urllib.request.urlopen("http://127.0.0.1:{port}/", timeout=30).read())
           for _ in range(10)]
[t.start() for t in threads]
[t.join() for t in threads]
print("done")
"""


class SlowServer:
    """A stand-in replica on a UNIX socket: 0.2 s per request, keep-alive unless asked to close (as
    uvicorn does); counts requests and concurrency."""

    def __init__(self, directory):
        os.chmod(directory, 0o755)
        self.path = str(directory / "slow.sock")
        self.heads: list[bytes] = []
        self.open_now = self.most = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_now += 1
        self.most = max(self.most, self.open_now)
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                self.heads.append(head)
                await asyncio.sleep(0.2)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                await writer.drain()
                if b"connection: close" in head.lower():
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()
            self.open_now -= 1

    async def __aenter__(self) -> ReplicaRoute:
        self.server = await asyncio.start_unix_server(self.handle, path=self.path)
        os.chmod(self.path, 0o666)
        return ReplicaRoute(port=free_port(), socket_path=self.path)

    async def __aexit__(self, *exc_info) -> None:
        self.server.close()


async def test_a_run_holds_at_most_four_connections_at_once(tmp_path):
    """Ten parallel requests from one sandbox reach the server at most four at a time."""
    slow = SlowServer(tmp_path)
    async with slow as route:
        outcome = await PythonTool([route]).invoke({"code": PARALLEL.format(port=route.port)})
    assert outcome.result["stdout"] == "done\n", outcome.result
    assert slow.most == 4 and len(slow.heads) == 10


PIPELINED = """
import socket
with socket.create_connection(("127.0.0.1", {port}), timeout=10) as connection:
    connection.sendall(b"GET /a HTTP/1.1\\r\\nHost: x\\r\\n\\r\\n" * 20)
    replies = b""
    while chunk := connection.recv(65536):
        replies += chunk
print(replies.count(b"HTTP/1.1 200"))
"""

KEEP_ALIVE = """
import http.client
connection = http.client.HTTPConnection("127.0.0.1", {port}, timeout=10)
for _ in range(3):  # one connection, reused: the relay closes it after each reply, the client reopens
    connection.request("GET", "/b")
    print(connection.getresponse().read().decode())
"""


async def test_pipelined_requests_are_not_a_free_ride(tmp_path):
    """Twenty requests in one write: one reaches the server (and is charged); the connection closes."""
    slow = SlowServer(tmp_path)
    tool = PythonTool()
    async with slow as route:
        tool = PythonTool([route])
        outcome = await tool.invoke({"code": PIPELINED.format(port=route.port)})
    assert outcome.result["stdout"] == "1\n", outcome.result
    assert len(slow.heads) == 1 and b"Connection: close" in slow.heads[0]
    assert tool.share.balance < tool.share.burst_s - 0.15  # the 0.2 s it took was charged


async def test_keep_alive_clients_still_work(tmp_path):
    slow = SlowServer(tmp_path)
    async with slow as route:
        outcome = await PythonTool([route]).invoke({"code": KEEP_ALIVE.format(port=route.port)})
    assert outcome.result["stdout"] == "ok\nok\nok\n", outcome.result
    assert len(slow.heads) == 3


async def test_waits_are_paid_once_however_many_overlap_and_earned_back():
    share = ReplicaShare(time_share=0.5, burst_s=0.1)
    share.sent()
    share.sent()  # two requests wait together for 0.3 s: the run pays 0.3 s, not 0.6 s
    await asyncio.sleep(0.3)
    share.answered()
    share.answered()
    # 0.1 saved + 0.15 earned - 0.3 paid = -0.05, give or take the clock (paid twice: -0.35)
    assert -0.15 <= share.balance <= 0.0
    started = asyncio.get_running_loop().time()
    await share.admit()  # out of debt at half a second per second
    waited = asyncio.get_running_loop().time() - started
    assert waited <= 0.45 and share.balance >= 0
