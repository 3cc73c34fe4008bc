"""Replicas a process owns (armbench/replicas/supervisor.py): real servers on loopback, taken by
one process at a time, restarted when they die; and the tools that talk to them (`Supervised`)."""
from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from armbench.arms.environment import KEEP_WARM_ENV, ArmEnvironment
from armbench.domains import find_domain
from armbench.domains.gpus import DOMAIN as GPU_DOMAIN
from armbench.errors import UserError
from armbench.replicas import serve, supervisor
from armbench.replicas.serve import PortTaken, Replica, endpoint
from armbench.replicas.supervisor import (
    START_TIMEOUT_ENV,
    ReplicaServer,
    ServerWatch,
    health,
    is_alive,
    pid_path,
    replicas_running,
    start_timeout,
)
from armbench.tools.base import ToolInfraError
from tests.support.processes import first_to_end

RTX_2080_TI = "geforce-rtx-2080-ti.c3305"


def test_replicas_running_serves_tcp_and_unix_socket_then_frees_both(replica_env):
    with replicas_running([GPU_DOMAIN.replica]) as endpoints:
        gpus = endpoints["gpus"]
        assert gpus == endpoint(GPU_DOMAIN.replica) and gpus.base_url == f"http://127.0.0.1:{gpus.port}"
        assert httpx.get(f"{gpus.base_url}/gpus/{RTX_2080_TI}", trust_env=False).status_code == 200
        with httpx.Client(transport=httpx.HTTPTransport(uds=str(gpus.socket_path))) as over_socket:
            assert "2,824 GPUs match" in over_socket.get("http://gpus/gpus").text
        assert is_alive(int(pid_path().read_text()))
    assert not health(GPU_DOMAIN.replica)
    assert not gpus.socket_path.exists() and not pid_path().exists()
    assert serve.port_is_free(gpus.port)


def test_a_port_base_another_process_holds_is_refused_never_shared(replica_env):
    """No silent reuse: a second owner on the same port base is refused, though the first serves
    the very same data."""
    with replicas_running([GPU_DOMAIN.replica]):
        with pytest.raises(PortTaken, match=r"port \d+ for the gpus replica is taken .*ARMBENCH_REPLICA_PORT_BASE"):
            ReplicaServer([GPU_DOMAIN.replica]).start(move_if_taken=True)  # a port base set by the user stays
        assert health(GPU_DOMAIN.replica)  # the refused start took nothing from the first


def test_a_taken_default_port_base_moves_to_a_free_one(replica_env, monkeypatch):
    held_base = serve.free_port_base()
    monkeypatch.setattr(serve, "DEFAULT_PORT_BASE", held_base)
    monkeypatch.delenv(serve.PORT_BASE_ENV)
    monkeypatch.delenv(serve.SOCKET_DIR_ENV)  # the default socket dir follows the port base
    squatter = socket.create_server(("127.0.0.1", held_base + GPU_DOMAIN.replica.offset))
    server = ReplicaServer([GPU_DOMAIN.replica])
    try:
        endpoints = server.start(move_if_taken=True)
        moved = int(os.environ[serve.PORT_BASE_ENV])
        assert moved != held_base and endpoints["gpus"].port == moved + GPU_DOMAIN.replica.offset
        assert health(GPU_DOMAIN.replica)
    finally:
        server.stop()
        squatter.close()


def test_a_port_held_by_something_else_is_one_line(replica_env):
    squatter = socket.create_server(("127.0.0.1", endpoint(GPU_DOMAIN.replica).port))
    try:
        with pytest.raises(PortTaken, match="is taken"):
            ReplicaServer([GPU_DOMAIN.replica]).start()
    finally:
        squatter.close()


@pytest.mark.slow
def test_two_processes_starting_on_one_port_base_at_once_one_serves_one_is_refused(replica_env):
    command = [sys.executable, "-m", "armbench.cli", "replicas", "serve", "--domain", "gpus"]
    starts = [subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        loser, winner = first_to_end(starts, 60)
        deadline = time.monotonic() + 60
        message = loser.stderr.read()
        assert loser.returncode == 2 and "is taken" in message and message.count("\n") == 1, message
        while not health(GPU_DOMAIN.replica):
            assert winner.poll() is None and time.monotonic() < deadline, winner.stderr.read()
            time.sleep(0.1)
    finally:
        for process in starts:
            process.send_signal(signal.SIGINT)
            process.wait(timeout=30)


@pytest.mark.slow
def test_replicas_serve_says_ready_once_they_answer_and_stops_at_ctrl_c(replica_env):
    server = subprocess.Popen([sys.executable, "-m", "armbench.cli", "replicas", "serve", "--domain", "gpus"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        listed = server.stdout.readline()
        assert listed.startswith(f"gpus: {endpoint(GPU_DOMAIN.replica).base_url}/"), listed + server.stderr.read()
        assert server.stdout.readline().startswith("ready: ")
        assert health(GPU_DOMAIN.replica)  # when it says so
    finally:
        server.send_signal(signal.SIGINT)
    assert server.wait(timeout=30) == 0 and "Traceback" not in server.stderr.read()


@pytest.mark.parametrize("place", ["a-file", "/proc/armbench"])
def test_a_socket_dir_that_cannot_hold_sockets_is_one_line(replica_env, monkeypatch, tmp_path, cli, place):
    if place == "a-file":
        place = str(tmp_path / "a-file")
        Path(place).write_text("not a folder")
    monkeypatch.setenv(serve.SOCKET_DIR_ENV, place)
    code, _out, err = cli("replicas", "serve", "--domain", "gpus")
    assert code == 2 and f"ARMBENCH_REPLICA_SOCKET_DIR={place} cannot hold the replicas' sockets" in err
    assert err.strip().count("\n") == 0


@pytest.mark.slow
def test_a_server_that_cannot_start_names_its_log(replica_env):
    broken = Replica("gpus", GPU_DOMAIN.replica.offset, "armbench.no_such_module:create_app", data_hash="x")
    with pytest.raises(UserError, match=r"exited with code 1; see .*gpus-\d+\.log") as failure:
        ReplicaServer([broken]).start()
    assert "No module named 'armbench.no_such_module'" in str(failure.value)
    assert serve.port_is_free(endpoint(broken).port)  # the failed start gave its port back


def test_the_start_wait_grows_with_the_replicas_and_can_be_set(monkeypatch):
    assert start_timeout(10) > start_timeout(1) >= 20
    monkeypatch.setenv(START_TIMEOUT_ENV, "7.5")
    assert start_timeout(10) == 7.5
    for bad in ("soon", "0", "inf", "nan"):
        monkeypatch.setenv(START_TIMEOUT_ENV, bad)
        with pytest.raises(UserError, match=START_TIMEOUT_ENV):
            start_timeout(1)


def test_the_default_socket_dir_and_socket_names_are_keyed_on_the_port(monkeypatch):
    """Two port bases never share a socket path, even in one socket dir."""
    monkeypatch.delenv(serve.SOCKET_DIR_ENV, raising=False)
    paths = set()
    for base in ("9300", "9400"):
        monkeypatch.setenv(serve.PORT_BASE_ENV, base)
        paths.add(endpoint(GPU_DOMAIN.replica).socket_path)
    port = GPU_DOMAIN.replica.offset
    assert paths == {Path(f"/tmp/armbench-replicas-9300/gpus-{9300 + port}.sock"),
                     Path(f"/tmp/armbench-replicas-9400/gpus-{9400 + port}.sock")}


# ---- a server that dies mid-run -------------------------------------------------------------------

SLOW_FETCH = """\
import time, urllib.request
time.sleep(2)
print(urllib.request.urlopen("{base}/gpus", timeout=30).status)
"""


async def wait_until(condition, seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline
        await asyncio.sleep(0.05)


@pytest.mark.slow
async def test_a_server_killed_mid_call_is_restarted_and_the_call_is_an_infra_error(replica_env):
    async with ArmEnvironment(["gpus"]) as env, env.open_arm("browsing", "gpus") as arm:
        base = env.endpoints["gpus"].base_url
        fetched = await arm.tool("http_get").invoke({"url": f"{base}/gpus/{RTX_2080_TI}"})
        assert not fetched.is_error and fetched.result["status"] == 200
        first = int(pid_path().read_text())

        call = asyncio.create_task(arm.tool("python").invoke({"code": SLOW_FETCH.format(base=base)}))
        await asyncio.sleep(0.5)  # the sandbox is up and sleeping: the server dies under it
        os.kill(first, signal.SIGKILL)
        with pytest.raises(ToolInfraError, match=f"pid {first}.* died during this python call"):
            await call

        watch = ServerWatch(pid_path(), patience=60)
        await wait_until(lambda: watch.current() not in (None, first))
        again = await arm.tool("http_get").invoke({"url": f"{base}/gpus/{RTX_2080_TI}"})
        assert not again.is_error and again.result["status"] == 200
        assert env.server is not None and env.server.restarts == 1


@pytest.mark.slow
async def test_a_call_made_while_the_server_restarts_waits_for_it(replica_env):
    async with ArmEnvironment(["gpus"]) as env, env.open_arm("browsing", "gpus") as arm:
        first = int(pid_path().read_text())
        os.kill(first, signal.SIGKILL)
        await wait_until(lambda: not is_alive(first))
        page = await arm.tool("browser_navigate").invoke({"url": f"{env.endpoints['gpus'].base_url}/gpus"})
        assert not page.is_error and page.result["title"].startswith("GPU specs")
        assert int(pid_path().read_text()) != first


@pytest.mark.slow
async def test_a_server_that_keeps_dying_is_left_down_and_calls_fail_at_once(replica_env, monkeypatch):
    monkeypatch.setattr(supervisor, "MAX_RESTARTS", 0)
    async with ArmEnvironment(["gpus"]) as env, env.open_arm("browsing", "gpus") as arm:
        os.kill(int(pid_path().read_text()), signal.SIGKILL)
        await wait_until(lambda: pid_path().read_text().strip() == supervisor.DOWN)
        started = time.monotonic()
        with pytest.raises(ToolInfraError, match="the replica server is down for good"):
            await arm.tool("http_get").invoke({"url": f"{env.endpoints['gpus'].base_url}/gpus"})
        assert time.monotonic() - started < 5  # not the whole patience (start_timeout x 2)


def test_a_kept_warm_server_serves_the_next_run_set_and_stops_at_exit(replica_env):
    first, _ = supervisor.server_for([GPU_DOMAIN.replica], warm=True)
    supervisor.done_with(first, keep=True)
    assert health(GPU_DOMAIN.replica)  # kept: still serving between run sets
    second, endpoints = supervisor.server_for([GPU_DOMAIN.replica], warm=True)
    assert second is first and endpoints == {"gpus": endpoint(GPU_DOMAIN.replica)}
    supervisor.done_with(second, keep=True)
    supervisor.WARM.keep(None)  # what the process's exit does
    assert not health(GPU_DOMAIN.replica) and not pid_path().exists()


def test_a_kept_server_that_died_or_lacks_a_replica_is_replaced(replica_env):
    moon = find_domain("moon").replica
    first, _ = supervisor.server_for([GPU_DOMAIN.replica], warm=True)
    supervisor.done_with(first, keep=True)
    os.kill(first.process.pid, signal.SIGKILL)
    second, _ = supervisor.server_for([GPU_DOMAIN.replica], warm=True)
    assert second is not first and health(GPU_DOMAIN.replica)
    supervisor.done_with(second, keep=True)
    both, _ = supervisor.server_for([GPU_DOMAIN.replica, moon], warm=True)  # the kept one serves gpus alone
    assert both is not second and second.exit_code() is not None
    assert health(GPU_DOMAIN.replica) and health(moon)
    supervisor.done_with(both, keep=True)
    again, _ = supervisor.server_for([moon], warm=True)  # a server of more replicas than asked serves too
    assert again is both
    supervisor.done_with(again)
    assert again.exit_code() is not None and not health(moon)  # not kept: stopped with its run set


def test_a_run_set_that_does_not_keep_warm_first_stops_the_server_kept_warm(replica_env):
    kept, _ = supervisor.server_for([GPU_DOMAIN.replica], warm=True)
    supervisor.done_with(kept, keep=True)
    cold, _ = supervisor.server_for([GPU_DOMAIN.replica])  # the same ports: not taken by the kept one
    assert kept.exit_code() is not None and health(GPU_DOMAIN.replica)
    supervisor.done_with(cold)
    assert not health(GPU_DOMAIN.replica)


def test_keep_warm_is_one_or_zero(monkeypatch):
    monkeypatch.setenv(KEEP_WARM_ENV, "yes")
    with pytest.raises(UserError, match="ARMBENCH_KEEP_WARM='yes': say 1 .* or 0"):
        ArmEnvironment(["gpus"])


async def test_a_browser_that_cannot_start_stops_the_replicas_started_beside_it(replica_env, monkeypatch):
    """The replicas and Chromium start side by side: when Chromium fails, its one-line error is the
    environment's, and the replica server started with it is stopped (its ports free again)."""
    monkeypatch.setenv("ARMBENCH_CHROMIUM", "/nonexistent")
    monkeypatch.setenv(KEEP_WARM_ENV, "0")
    env = ArmEnvironment(["gpus"])
    with pytest.raises(UserError, match="ARMBENCH_CHROMIUM='/nonexistent' is not an executable"):
        await env.__aenter__()
    assert env.server is not None and env.server.exit_code() is not None
    assert not health(GPU_DOMAIN.replica) and not pid_path().exists()
