"""The relay between a run's sandbox and a shared replica: one run cannot crowd out another."""
from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys

import pytest

from armbench.domains import find_domain
from armbench.replicas.supervisor import replicas_running
from armbench.tools.replica_gate import ReplicaShare
from armbench.tools.sandbox import ReplicaRoute, SandboxConfig
from armbench.tools.web_tools import PythonTool
from benchmarks.replica_gate import BIG, SMALL, quiet_and_flooded
from tests.conftest import free_port, own_replica_settings


@pytest.fixture(scope="module")
def worldbank():
    with own_replica_settings() as directory, replicas_running([find_domain("worldbank").replica]) as endpoints:
        target = endpoints["worldbank"]
        yield target.base_url.rstrip("/"), ReplicaRoute(port=target.port, socket_path=str(target.socket_path))
    shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.slow
async def test_a_flooding_run_leaves_another_runs_replica_calls_answered(worldbank):
    """Every call of the other run succeeds beside the flood; how much slower they get (within 2x of
    quiet, against ~130x without the gate) is measured by benchmarks/replica_gate.py, over more calls."""
    quiet, crowded = await quiet_and_flooded(*worldbank, count=10)
    assert quiet > 0 and crowded > 0


PARALLEL = """
import threading, urllib.request
threads = [threading.Thread(target=lambda: urllib.request.urlopen("http://127.0.0.1:{port}/", timeout=30).read())
           for _ in range(10)]
[t.start() for t in threads]
[t.join() for t in threads]
print("done")
"""


class SlowServer:
    """A stand-in replica on a UNIX socket: `delay_s` per request (and `body_after_s` between a
    reply's head and its body), keep-alive unless asked to close (as uvicorn does), no measured
    cost; counts requests and concurrency."""

    def __init__(self, directory, delay_s: float = 0.2, body_after_s: float = 0.0):
        os.chmod(directory, 0o755)
        self.delay_s = delay_s
        self.body_after_s = body_after_s
        self.path = str(directory / "slow.sock")
        self.heads: list[bytes] = []
        self.open_now = self.most = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.open_now += 1
        self.most = max(self.most, self.open_now)
        try:
            while head := await reader.readuntil(b"\r\n\r\n"):
                self.heads.append(head)
                await asyncio.sleep(self.delay_s)
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n")
                if self.body_after_s:
                    await writer.drain()
                    await asyncio.sleep(self.body_after_s)
                writer.write(b"ok")
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


@pytest.mark.slow
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


async def test_a_request_pays_the_cost_the_server_measured_not_its_wait():
    share = ReplicaShare(time_share=0.5, burst_s=0.1)
    first, second = share.sent(), share.sent()  # two requests wait together for 0.3 s or more
    await asyncio.sleep(0.3)
    share.answered(first, 0.01)
    share.answered(second, 0.02)
    waited = share.updated - first  # what the sleep took on this machine, however busy
    assert share.balance == pytest.approx(0.07, abs=0.005)  # 0.1 saved (earning stops there) - 0.03 their cost
    assert waited >= 0.3 and share.waited_s() == pytest.approx(waited)  # counted once for the two


async def test_a_request_without_a_measured_cost_pays_its_wait_and_earns_it_back():
    share = ReplicaShare(time_share=0.5, burst_s=0.1)
    sent_at = share.sent()
    await asyncio.sleep(0.3)
    share.answered(sent_at, None)
    waited = share.updated - sent_at  # 0.3 s or more, however busy the machine is
    assert waited >= 0.3 and share.balance == pytest.approx(0.1 - waited, abs=0.005)  # 0.1 saved - the wait
    debt, answered_at = -share.balance, share.updated
    await share.admit()  # out of debt at half a second per second
    assert share.updated - answered_at >= debt / 0.5 and share.balance >= 0


@pytest.mark.slow
async def test_a_slow_replica_reply_does_not_count_against_the_calls_wall_limit(tmp_path):
    """A reply that takes 1.5 s (a busy replica) inside a call with a 1 s wall limit: the call ends
    normally, the wait is the harness's, and the run paid the wait (no measured cost came back)."""
    slow = SlowServer(tmp_path, delay_s=1.5)
    async with slow as route:
        tool = PythonTool([route], SandboxConfig(wall_timeout_s=1.0))
        code = f"import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:{route.port}/').read())"
        outcome = await tool.invoke({"code": code})
    assert outcome.result["stdout"] == "b'ok'\n" and not outcome.result["timed_out"], outcome.result
    assert tool.share.waited_s() >= 1.5 and tool.share.balance < 0


@pytest.mark.slow
async def test_a_reply_whose_body_comes_late_does_not_count_against_the_calls_wall_limit(tmp_path):
    """A busy replica writes a reply's head at once and its body 1.5 s later, inside a call with a
    1 s wall limit: the call ends normally, and the wait for the body is the harness's too."""
    slow = SlowServer(tmp_path, delay_s=0.0, body_after_s=1.5)
    async with slow as route:
        tool = PythonTool([route], SandboxConfig(wall_timeout_s=1.0))
        code = f"import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.1:{route.port}/').read())"
        outcome = await tool.invoke({"code": code})
    assert outcome.result["stdout"] == "b'ok'\n" and not outcome.result["timed_out"], outcome.result
    # the body's 1.5 s, less what passing the head took: well over the call's 1 s wall limit
    assert tool.share.waited_s() >= 1.4


COST_OF = """
import json, threading, urllib.request
costs = []
def fetch():
    request = urllib.request.Request("{base}{path}", headers={{"X-Armbench-Want-Cost": "1"}})
    with urllib.request.urlopen(request, timeout=60) as reply:
        reply.read()
        costs.append(float(reply.headers["X-Armbench-Cost"]))
threads = [threading.Thread(target=fetch) for _ in range({parallel})]
[t.start() for t in threads]
[t.join() for t in threads]
print(json.dumps(sorted(costs)))
"""


def costs_of(base: str, parallel: int) -> list[float]:
    """The costs the replica server reports for `parallel` BIG requests sent at once (straight to
    its TCP port, as the gate's own requests go to its socket)."""
    ran = subprocess.run([sys.executable, "-c", COST_OF.format(base=base, path=BIG, parallel=parallel)],
                         capture_output=True, text=True, timeout=120, check=True)
    return json.loads(ran.stdout)


def test_a_requests_measured_cost_does_not_grow_with_the_servers_load(worldbank):
    """Four at once wait about four times as long as one alone, yet each costs about what one alone
    costs: the server time a run pays does not depend on what else the server serves."""
    base, _ = worldbank
    alone = statistics.median(costs_of(base, 1)[0] for _ in range(3))
    together = costs_of(base, 4)
    print(f"alone {alone * 1000:.0f} ms, four at once {[round(cost * 1000) for cost in together]} ms")
    assert alone > 0.01  # a 4 MB reply: real interpreter work
    assert statistics.median(together) <= 2 * alone, (alone, together)
    assert sum(together) >= 2 * alone  # and the work of four is still paid for


CHECK_HEADERS = """
import urllib.request
request = urllib.request.Request("http://127.0.0.1:{port}{path}", headers={{"X-Armbench-Want-Cost": "1"}})
with urllib.request.urlopen(request) as reply:
    print(sorted(name.lower() for name in reply.headers))
"""


async def test_the_sandbox_never_sees_the_harness_cost_header(worldbank):
    _, route = worldbank
    outcome = await PythonTool([route]).invoke({"code": CHECK_HEADERS.format(port=route.port, path=SMALL)})
    assert outcome.result["exit_code"] == 0, outcome.result
    assert "x-armbench-cost" not in outcome.result["stdout"] and "content-type" in outcome.result["stdout"]
