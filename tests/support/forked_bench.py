"""`bench` as a real process that starts without paying for its imports again: a fork server.

Every `bench run` subprocess imports LiteLLM (about 3.8 s of CPU) before it does anything, and the
suite starts a few dozen of them. Here one server process per pytest worker imports the heavy
third-party packages once (no module of armbench: those read their settings when called) and forks
a child for each command. The child is a process of its own, with its own pid, environment,
working folder, standard streams and session, that runs `python -m armbench.cli ARGS` to its end:
its exit status, signals, atexit handlers and child processes are those of a freshly started one.

`start(args, ...)` is `subprocess.Popen([python, -m, armbench.cli, *args], ...)` and `run` is
`subprocess.run(..., capture_output=True, text=True)`. Tests of start-up itself (what an import
costs, what a missing package says) start a fresh interpreter instead.
"""
from __future__ import annotations

import atexit
import gc
import json
import os
import runpy
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# What a `bench run` imports from other packages, heaviest first; armbench itself is imported in
# the child, after its environment is set.
PRELOADED = ["litellm", "playwright.async_api", "polars", "matplotlib.figure", "numpy", "typer", "rich", "jinja2", "yaml",
             "jsonschema", "requests", "httpx", "pydantic"]
MESSAGE_BYTES = 1 << 20


class BenchProcess:
    """A forked `bench`, used as a `subprocess.Popen`: pid, poll, wait, send_signal, kill,
    communicate, returncode and, for captured streams, `stdout`/`stderr` readable once it ended."""

    def __init__(self, args: list[str], pid: int, status: socket.socket, captured: dict[str, _Captured]) -> None:
        self.args, self.pid, self.returncode = args, pid, None
        self._status = status
        self.stdout, self.stderr = captured.get("stdout"), captured.get("stderr")

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._status], [], [], 0)[0]:
            self._read_status()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._status], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(self.args, timeout)
            self._read_status()
        return self.returncode

    def _read_status(self) -> None:
        self.returncode = int(self._status.recv(64))
        self._status.close()

    def send_signal(self, how: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, how)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def communicate(self, timeout: float | None = None) -> tuple[str | None, str | None]:
        self.wait(timeout)
        return (self.stdout.read() if self.stdout else None), (self.stderr.read() if self.stderr else None)


class _Captured:
    """A stream the child writes to a file (no pipe to drain while waiting), read whole."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()

    def read(self) -> str:
        self.file.seek(0)
        return self.file.read().decode(errors="replace")


def keyless_env(**settings: str) -> dict[str, str]:
    """This process's environment without any provider's API key (a test's `bench` must never reach
    a provider), with `settings` on top."""
    return {**{key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}, **settings}


def start(args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
          stdout: int | None = None, stderr: int | None = None, start_new_session: bool = False) -> BenchProcess:
    """`bench ARGS` forked from the server: `stdout`/`stderr` None (this process's), DEVNULL or PIPE."""
    captured: dict[str, _Captured] = {}
    opened = [os.open(os.devnull, os.O_RDONLY)]  # the child's standard input
    streams = [opened[0]]
    for name, choice, inherited in (("stdout", stdout, 1), ("stderr", stderr, 2)):
        if choice == subprocess.PIPE:
            captured[name] = _Captured()
            streams.append(captured[name].file.fileno())
        elif choice == subprocess.DEVNULL:
            opened.append(os.open(os.devnull, os.O_WRONLY))
            streams.append(opened[-1])
        else:
            streams.append(inherited)
    request = {"args": list(map(str, args)), "env": dict(os.environ if env is None else env),
               "cwd": str(cwd or os.getcwd()), "new_session": start_new_session}
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    try:
        connection.connect(_server_address())
        socket.send_fds(connection, [json.dumps(request).encode()], streams)
        pid = int(connection.recv(64))
    finally:
        for fd in opened:
            os.close(fd)
    return BenchProcess(["bench", *request["args"]], pid, connection, captured)


def run(args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
        timeout: float | None = None) -> subprocess.CompletedProcess:
    """`subprocess.run([python, -m, armbench.cli, *args], capture_output=True, text=True, ...)`."""
    process = start(args, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out, err = process.communicate(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(process.args, process.returncode, out, err)


_server: tuple[subprocess.Popen, str] | None = None


def _server_address() -> str:
    """This process's fork server, started on first use and stopped when this process exits."""
    global _server
    if _server is None or _server[0].poll() is not None:
        address = os.path.join(tempfile.mkdtemp(prefix="armbench-fork-"), "server")
        # Its own session: a signal to a test's process group never reaches it. Its standard
        # input is a pipe from this process: at end of file (this process is gone) it exits.
        process = subprocess.Popen([sys.executable, __file__, address], cwd=ROOT, stdin=subprocess.PIPE,
                                   stdout=subprocess.PIPE, start_new_session=True)
        if process.stdout.readline() != b"ready\n":
            raise RuntimeError(f"the bench fork server did not start (exit {process.wait()})")
        atexit.register(shutil.rmtree, os.path.dirname(address), ignore_errors=True)
        atexit.register(process.kill)
        _server = process, address
    return _server[1]


# The server side.

def serve(address: str) -> dict:
    """Preload, then fork a child per request and report its exit status when it ends. Returns
    only in a forked child, with the request it is to carry out."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_MODE", "PRODUCTION")
    for module in PRELOADED:
        __import__(module)
    gc.freeze()  # the preloaded objects: never collected, so a child's collections do not touch (and copy) them
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        ready = select.select([listener, wake_read, sys.stdin], [], [])[0]
        if sys.stdin in ready and not os.read(0, 4096):
            os._exit(0)  # the process that started this server is gone
        if wake_read in ready:
            os.read(wake_read, 4096)
            _report_ended(children)
        if listener in ready:
            connection, _ = listener.accept()
            message, fds, _flags, _address = socket.recv_fds(connection, MESSAGE_BYTES, 3)
            request = json.loads(message)
            set_up_read, set_up_write = os.pipe()
            pid = os.fork()
            if pid == 0:
                for fd in (listener.fileno(), wake_read, wake_write, set_up_read,
                           *(c.fileno() for c in children.values())):
                    os.close(fd)
                connection.close()
                signal.set_wakeup_fd(-1)
                return {**request, "fds": fds, "set_up": set_up_write}
            for fd in (*fds, set_up_write):
                os.close(fd)
            os.read(set_up_read, 1)  # as Popen returns: once the child has its session and streams
            os.close(set_up_read)
            connection.send(str(pid).encode())
            children[pid] = connection
            _report_ended(children)  # a SIGCHLD may have come before the pid was known


def _report_ended(children: dict[int, socket.socket]) -> None:
    for pid in list(children):
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            connection = children.pop(pid)
            try:
                connection.send(str(os.waitstatus_to_exitcode(status)).encode())
            except OSError:
                pass  # the test that started it is gone
            connection.close()


def become(request: dict) -> None:
    """In the forked child: take the request's streams, session, folder and environment, then run
    `python -m armbench.cli ARGS` as the interpreter would."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request["new_session"]:
        os.setsid()
    for target, fd in enumerate(request["fds"]):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.close(request["set_up"])
    # `python -m` puts the working folder first on the path, then PYTHONPATH's folders.
    extra = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[0:1] = [os.getcwd(), *extra]
    sys.argv = ["armbench.cli", *request["args"]]
    runpy.run_module("armbench.cli", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    sys.path[0] = str(ROOT)
    become(serve(sys.argv[1]))
