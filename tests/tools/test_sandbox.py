"""Security tests of the python sandbox: every attack ends in a result, and the harness runs on.

A throwaway HTTP server stands in for a replica: on a UNIX socket (answering "via unix") and on a
host TCP port (answering "via tcp"). The route uses that same port number, so a sandbox that
answers "via unix" proves it went through the forwarder, not the host's loopback.
"""
from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import socketserver
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from armbench.tools import cgroups, sandbox
from armbench.tools.sandbox import (
    BWRAP,
    FALLBACK,
    WORK_DIR,
    ReplicaRoute,
    ReplicaSocketBlocked,
    SandboxConfig,
    SandboxUnavailable,
    run_python,
)
from armbench.tools.web_tools import PythonTool, web_tools

PROJECT_FILE = Path(__file__).resolve().parents[2] / "pyproject.toml"
BWRAP_PROBLEM = sandbox.bwrap_problem(SandboxConfig().interpreter)
needs_bwrap = pytest.mark.skipif(BWRAP_PROBLEM is not None, reason=f"no bwrap: {BWRAP_PROBLEM}")
CGROUP_PROBLEM = cgroups.cgroup_problem()
needs_cgroups = pytest.mark.skipif(CGROUP_PROBLEM is not None, reason=f"no cgroups: {CGROUP_PROBLEM}")


class Hello(BaseHTTPRequestHandler):
    def do_GET(self):
        body = f"hello via {self.server.label} {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class UnixHTTPServer(socketserver.ThreadingUnixStreamServer):
    daemon_threads = True
    label = "unix"


def serve(server):
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.fixture(scope="module")
def replica():
    """A route whose port is also served on the host's TCP loopback (by a different label)."""
    socket_dir = tempfile.mkdtemp(prefix="armbench-test-replica-")
    os.chmod(socket_dir, 0o755)  # the sandbox's uid must reach the socket
    path = os.path.join(socket_dir, "test.sock")
    unix = serve(UnixHTTPServer(path, Hello))
    os.chmod(path, 0o666)
    tcp = serve(ThreadingHTTPServer(("127.0.0.1", 0), Hello))
    tcp.label = "tcp"
    yield ReplicaRoute(port=tcp.server_address[1], socket_path=path)
    for server in (unix, tcp):
        server.shutdown()
        server.server_close()
    shutil.rmtree(socket_dir, ignore_errors=True)


@pytest.fixture(scope="module")
def host_service():
    """A host loopback service that is not a route: the sandbox must not reach it."""
    server = serve(ThreadingHTTPServer(("127.0.0.1", 0), Hello))
    server.label = "host"
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def config(**overrides) -> SandboxConfig:
    return SandboxConfig(**{"wall_timeout_s": 10.0, **overrides})


def host_ip() -> str | None:
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect(("192.0.2.123", 9))  # picks the outgoing interface; sends nothing
        address = probe.getsockname()[0]
    except OSError:
        return None
    finally:
        probe.close()
    return None if address.startswith("127.") else address


CONNECT = """
import socket
for host, port in {targets!r}:
    try:
        socket.create_connection((host, port), timeout=2)
        print("CONNECTED", host, port)
    except OSError as error:
        print("blocked", host, port, type(error).__name__)
"""


@needs_bwrap
async def test_runs_code_and_reports_exit_status():
    result = await run_python(
        "import sys\nprint('out')\nprint('err', file=sys.stderr)\nsys.exit(3)", config()
    )
    assert (result.stdout, result.stderr, result.exit_code) == ("out\n", "err\n", 3)
    assert result.isolation == BWRAP
    assert not result.timed_out and result.killed_reason is None


@needs_bwrap
async def test_traceback_points_at_the_agents_code():
    result = await run_python("x = 1\nraise ValueError('boom')", config())
    assert result.exit_code == 1
    assert 'File "main.py", line 2' in result.stderr
    assert "raise ValueError('boom')" in result.stderr
    assert "bootstrap" not in result.stderr.lower() and "exec(" not in result.stderr


@needs_bwrap
async def test_multiprocessing_can_use_the_agents_functions():
    code = """
import multiprocessing

def square(n):
    return n * n

if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print(pool.map(square, range(4)))
"""
    result = await run_python(code, config())
    assert result.stdout == "[0, 1, 4, 9]\n", result.stderr


@needs_bwrap
async def test_egress_beyond_the_sandbox_is_impossible(host_service):
    targets = [("1.1.1.1", 80), ("127.0.0.1", host_service)]
    if address := host_ip():
        targets.append((address, host_service))
    code = CONNECT.format(targets=targets) + """
try:
    socket.getaddrinfo("example.com", 80)
    print("RESOLVED")
except OSError as error:
    print("no dns", type(error).__name__)
"""
    result = await run_python(code, config())
    assert "CONNECTED" not in result.stdout and "RESOLVED" not in result.stdout
    assert result.stdout.count("blocked") == len(targets), result.stdout


@needs_bwrap
async def test_reaches_the_replica_through_the_unix_socket_only(replica):
    code = f"""
import urllib.request
with urllib.request.urlopen("http://127.0.0.1:{replica.port}/gpus?x=1", timeout=5) as response:
    print(response.status, response.read().decode())
"""
    result = await run_python(code, config(replicas=[replica]))
    assert result.stdout == "200 hello via unix /gpus?x=1\n", result.stderr


@needs_bwrap
async def test_a_replica_that_is_down_answers_502(tmp_path):
    missing = ReplicaRoute(port=8399, socket_path=str(tmp_path / "absent.sock"))
    code = """
import urllib.error, urllib.request
try:
    urllib.request.urlopen("http://127.0.0.1:8399/", timeout=5)
except urllib.error.HTTPError as error:
    print(error.code, error.read().decode())
"""
    result = await run_python(code, config(replicas=[missing]))
    assert result.stdout.startswith("502 sandbox: replica socket"), result.stderr


@needs_bwrap
async def test_a_socket_the_sandbox_cannot_open_is_a_clear_error(tmp_path):
    server = UnixHTTPServer(str(tmp_path / "private.sock"), Hello)  # pytest's tmp dirs are 0700
    try:
        route = ReplicaRoute(port=8399, socket_path=server.server_address)
        with pytest.raises(ReplicaSocketBlocked, match="needs o\\+w.*needs o\\+x"):
            await run_python("print(1)", config(replicas=[route]))
    finally:
        server.server_close()


@needs_bwrap
async def test_secrets_and_project_files_are_invisible():
    code = f"""
import os
for path in ["/etc/shadow", "/etc/passwd", {str(PROJECT_FILE)!r}, "/root", "/root/.pyenv", "/home"]:
    try:
        os.listdir(path) if os.path.isdir(path) else open(path).read()
        print("READ", path)
    except OSError as error:
        print("denied", path, type(error).__name__)
"""
    result = await run_python(code, config())
    assert "READ" not in result.stdout, result.stdout
    assert result.stdout.count("denied") == 6


@needs_bwrap
async def test_environment_holds_no_api_keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    code = """
import os
print(sorted(os.environ))
print("sk-test" in open("/proc/self/environ").read(), "sk-test" in open("/proc/1/environ").read())
"""
    result = await run_python(code, config())
    assert result.stdout == "['HOME', 'LANG', 'MALLOC_ARENA_MAX', 'PATH', 'PWD']\nFalse False\n"


@needs_bwrap
async def test_only_the_sandbox_dirs_are_writable():
    writable = [f"{WORK_DIR}/x", "/tmp/x", "/dev/shm/x"]  # the sandbox's own mounts
    code = f"""
import os
for path in ["/x", "/usr/x", "/dev/x", "/run/x", *{writable!r}]:
    try:
        open(path, "w").write("1")
        print("wrote", path)
    except OSError as error:
        print("refused", path, type(error).__name__)
"""
    result = await run_python(code, config())
    assert result.stdout.count("refused") == 4, result.stdout
    assert "\n".join(f"wrote {path}" for path in writable) in result.stdout


@needs_bwrap
async def test_fork_bomb_stops_at_the_process_limit():
    code = """
import os, time
forks = 0
try:
    while True:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        forks += 1
except OSError as error:
    print("stopped", forks, type(error).__name__)
"""
    result = await run_python(code, config(processes=16))
    assert result.stdout.startswith("stopped") and "BlockingIOError" in result.stdout
    assert int(result.stdout.split()[1]) < 16
    assert not result.timed_out  # the sleeping children died with the sandbox's pid namespace


@pytest.mark.slow
@needs_bwrap
async def test_spinning_fork_bomb_is_killed_by_the_wall_timeout():
    code = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
    result = await run_python(code, config(processes=32, wall_timeout_s=2.0))
    # Its 32 processes wait for each other, and on a busy machine for the others too: then the
    # backstop may end it as starved. Either way it is killed and the harness runs on.
    assert result.killed_reason in ("wall_timeout", "starved"), result
    after = await run_python("print('still fine')", config())
    assert after.stdout == "still fine\n"


@needs_bwrap
async def test_memory_bomb_fails_with_memory_error():
    code = "blocks = []\nwhile True:\n    blocks.append(bytearray(50 * 1024 * 1024))"
    result = await run_python(code, config(memory_bytes=256 << 20))
    assert result.exit_code == 1 and "MemoryError" in result.stderr


FORKED_MEMORY_BOMB = """
import os, signal, time
held_r, held_w = os.pipe()
children = []
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        try:
            block = b"x" * (700 << 20)  # written, so resident, unlike a bare bytearray
            print("holding 700 MiB", flush=True)
            os.write(held_w, b"%8d" % os.getpid())
            signal.pause()  # hold it until killed
        except MemoryError:
            print("MemoryError", flush=True)
        os._exit(0)
    children.append(pid)
os.set_blocking(held_r, False)
holding, statuses = set(), {}
while set(children) - holding - set(statuses):  # each child holds its memory or is gone, however slow
    try:
        data = os.read(held_r, 64)
        holding |= {int(data[i:i + 8]) for i in range(0, len(data), 8)}
    except BlockingIOError:
        pass
    for pid in children:
        if pid not in statuses:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                statuses[pid] = os.waitstatus_to_exitcode(status)
    time.sleep(0.05)
for pid in children:
    if pid not in statuses:
        os.kill(pid, signal.SIGTERM)
        statuses[pid] = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
print(sorted(statuses.values()))
"""


@pytest.mark.slow
@needs_bwrap
@needs_cgroups
async def test_forked_memory_bomb_stops_at_the_calls_memory_cap():
    cap = 1 << 30
    result = await run_python(FORKED_MEMORY_BOMB, config(memory_bytes=cap))
    # What the call's processes held at once, as the kernel counted them (the host's MemAvailable
    # moves with everything else on the machine).
    took = result.peak_memory_bytes
    assert took <= cap * 1.1, f"the call held {took >> 20} MiB under a cap of {cap >> 20} MiB"
    assert result.killed_reason == "memory_limit", result
    # Two 700 MiB children do not fit, so at most one lives to be stopped at the end (-15); the kernel
    # killed the others (-9). Which one it kills is its choice: a child already holding its memory can
    # go for a newcomer, so "holding" may be printed more than once, never by two at the same time.
    statuses = result.stdout.splitlines()[-1]
    assert statuses.count("-15") <= 1 and "-9" in statuses, result.stdout
    assert result.call_caps.startswith("cgroup per call")
    ours = f"armbench-{os.getpid()}-"
    assert not any(path.name.startswith(ours) for h in cgroups.find_hierarchies() for path in h.own.iterdir())


@needs_bwrap
@needs_cgroups
async def test_python_tool_says_the_memory_cap_killed_a_process(replica):
    tool = PythonTool([replica], config(memory_bytes=512 << 20))
    outcome = await tool.invoke({"code": FORKED_MEMORY_BOMB.replace("700", "300")})
    assert "killed at the 512 MiB memory limit" in outcome.result["notice"], outcome.result


@needs_bwrap
async def test_without_cgroups_rlimits_shrink_to_keep_the_call_under_its_cap(monkeypatch):
    monkeypatch.setattr(sandbox, "cgroup_problem", lambda: "no cgroups here")
    result = await run_python(FORKED_MEMORY_BOMB, config(memory_bytes=1 << 30))
    assert result.call_caps == "rlimits only (8 processes x 128 MiB; CPU limit per process, wall limit on wall time)"
    # 700 MiB exceeds each process's share, so the four together stay under the cap.
    assert result.stdout.count("MemoryError") == 4, result
    assert result.peak_memory_bytes is None


@needs_bwrap
async def test_cpu_loop_is_killed_by_the_cpu_limit():
    result = await run_python("while True:\n    pass", config(cpu_s=1))
    assert result.killed_reason == "cpu_limit" and not result.timed_out
    # SIGKILL from the harness at the call's CPU total (its cgroup's, sampled), or SIGXCPU from RLIMIT_CPU
    assert result.exit_code in (128 + 9, 128 + 24)


@needs_bwrap
async def test_wall_timeout_kills_and_keeps_earlier_output():
    code = "import time\nprint('started')\ntime.sleep(60)"
    result = await run_python(code, config(wall_timeout_s=1.0))
    assert result.timed_out and result.killed_reason == "wall_timeout"
    assert result.stdout == "started\n"


@needs_bwrap
async def test_disk_fill_is_stopped_and_nothing_is_kept():
    code = """
import os
chunk = b"x" * (1 << 20)
try:
    with open("big", "wb") as f:
        for _ in range(64):
            f.write(chunk)
except OSError as error:
    print("one file:", error.strerror)
os.remove("big")
try:
    for i in range(64):
        with open(f"part{i}", "wb") as f:
            for _ in range(4):
                f.write(chunk)
except OSError as error:
    print("many files:", error.strerror)
"""
    result = await run_python(code, config(file_size_bytes=8 << 20, disk_bytes=32 << 20))
    assert result.stdout == "one file: File too large\nmany files: No space left on device\n"
    again = await run_python("import os\nprint(os.listdir('.'))", config())
    assert again.stdout == "[]\n"


@needs_bwrap
async def test_killing_its_parents_does_not_touch_the_harness():
    code = "import os\nos.kill(1, 9)\nprint('init survived')\nos.kill(os.getppid(), 9)"
    result = await run_python(code, config())
    assert result.stdout.startswith("init survived")
    assert (await run_python("print(2)", config())).stdout == "2\n"


@needs_bwrap
async def test_cancelling_a_run_kills_its_sandbox(monkeypatch):
    started = []
    real_exec = asyncio.create_subprocess_exec

    async def spy(*args, **kwargs):
        started.append(await real_exec(*args, **kwargs))
        return started[-1]

    monkeypatch.setattr(asyncio, "create_subprocess_exec", spy)
    task = asyncio.create_task(run_python("import time\ntime.sleep(60)", config(wall_timeout_s=60)))
    while not started:
        assert not task.done(), task.result()
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert started[0].returncode == -signal.SIGKILL  # bwrap, and with it the pid namespace


@pytest.mark.slow
@needs_bwrap
async def test_output_is_bounded_with_a_notice():
    code = "print('x' * 5000)\nprint('é' * 3000, end='')"
    result = await run_python(code, config(output_chars=1000))
    assert result.stdout_truncated and not result.stderr_truncated
    assert result.stdout == "x" * 1000 + "\n[output truncated: 7,001 more characters]"


@pytest.mark.slow
@needs_bwrap
async def test_python_tool_result_and_notice(replica):
    tool = PythonTool([replica], config(wall_timeout_s=1.0))
    ok = await tool.invoke({"code": "print(6 * 7)"})
    assert ok.result == {"stdout": "42\n", "stderr": "", "exit_code": 0, "timed_out": False}
    slow = await tool.invoke({"code": "import time; time.sleep(30)"})
    assert slow.result["timed_out"] and "1 s wall-clock limit" in slow.result["notice"]
    assert "1 s wall clock" in tool.description and "urllib" in tool.description


@needs_bwrap
async def test_the_descriptions_worked_example_runs(replica):
    tool = PythonTool([replica.model_copy(update={"port": 8301})], config())
    example = tool.description.split("print its title.\n")[1]
    example = example.replace("<title>(.*?)</title>", "(via .*)")
    outcome = await tool.invoke({"code": example})
    assert outcome.result["stdout"] == "200 16\nvia unix /\n", outcome.result


def test_web_tools_factory(replica):
    python, http_get = web_tools([replica])
    assert (python.name, http_get.name) == ("python", "http_get")
    assert f"http://127.0.0.1:{replica.port}" in http_get.description


def test_without_bwrap_the_sandbox_refuses_unless_fallback_is_allowed(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda interpreter: "no user namespaces")
    with pytest.raises(SandboxUnavailable, match="no user namespaces"):
        PythonTool()
    assert PythonTool(config=config(allow_fallback=True)).isolation == FALLBACK


@pytest.mark.slow
@needs_cgroups
async def test_fallback_kills_processes_that_left_the_process_group(monkeypatch):
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda interpreter: "no user namespaces")
    code = "import os, time\nif os.fork() == 0:\n    os.setsid()\n    time.sleep(60)\nprint(os.getuid())"
    result = await run_python(code, config(allow_fallback=True, wall_timeout_s=2.0))
    uid = result.stdout.strip()  # the child holds the output pipes: the call ends at its timeout
    assert uid.isdigit()
    assert [p for p in Path("/proc").iterdir() if p.name.isdigit() and is_live(p, uid)] == []


def is_live(process: Path, uid: str) -> bool:
    """A process of `uid` that is not a zombie (a dead one, waiting for pid 1 to reap it)."""
    try:
        status = dict(line.split(":", 1) for line in (process / "status").read_text().splitlines())
    except OSError:
        return False
    return status["Uid"].split()[0] == uid and not status["State"].strip().startswith("Z")


async def test_fallback_keeps_rlimits_clean_env_and_removes_its_dir(monkeypatch, replica):
    monkeypatch.setattr(sandbox, "bwrap_problem", lambda interpreter: "no user namespaces")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    before = set(Path(tempfile.gettempdir()).glob("armbench-sandbox-*"))
    code = f"""
import os, urllib.request
print(os.getuid() != 0, "OPENAI_API_KEY" in os.environ, os.path.basename(os.getcwd())[:16])
open("scratch", "w").write("x")
print(urllib.request.urlopen("http://127.0.0.1:{replica.port}/", timeout=5).read().decode())
bytearray(512 * 1024 * 1024)
"""
    result = await run_python(code, config(allow_fallback=True, memory_bytes=256 << 20))
    assert result.isolation == FALLBACK
    assert result.stdout == "True False armbench-sandbox\nhello via tcp /\n"
    assert "MemoryError" in result.stderr
    assert set(Path(tempfile.gettempdir()).glob("armbench-sandbox-*")) == before

