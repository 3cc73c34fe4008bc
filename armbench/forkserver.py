"""Start `python -m MODULE ARGS` without paying for its imports again: a fork server.

A process that starts the same kind of program many times (replica servers, restarted after a
crash or started again for each run set; the test suite's `bench` commands) spends most of each start
importing the same third-party packages. `ForkServer(module, preload)` starts one server process,
on first use, that imports `preload` once and forks a child for each `start(...)`. The child is a
process of its own, with its own pid, environment, working folder, standard streams, passed
descriptors and session, that runs `python -m MODULE ARGS` to its end: its exit status, signals,
atexit handlers and child processes are those of a freshly started one. What it imports from
`module`'s own package it imports itself, after its environment is set, so settings read at import
are the request's.

`start` answers like `subprocess.Popen` (`ForkedProcess`: pid, poll, wait, send_signal, terminate,
kill, communicate, returncode). Two things differ: the child's parent is the fork server, and its
command line (`ps`, `/proc/PID/cmdline`) is the fork server's, which names `module`.

The server talks to the process that started it over a socket pair alone (no address another user
could reach), and exits when that process is gone. Each start sends the request with its own socket
pair's one end, on which the child's pid and then its exit status come back.
"""
from __future__ import annotations

import contextlib
import fcntl
import gc
import json
import os
import runpy
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import IO

PACKAGE_PARENT = Path(__file__).resolve().parents[1]
MESSAGE_BYTES = 1 << 20  # a request: arguments, environment, folder
MAX_DESCRIPTORS = 253  # one request's: the kernel passes at most this many in a message (SCM_MAX_FD)
Stream = int | IO | None  # None: this process's; DEVNULL, PIPE or STDOUT as for Popen; a descriptor or file


class ForkServer:
    """A fork server for `python -m module` that preloads the packages `preload` names (a package
    that fails to import is left to the child, which then fails as a fresh process would)."""

    def __init__(self, module: str, preload: Sequence[str], server_env: dict[str, str] | None = None) -> None:
        self.module, self.preload = module, list(preload)
        self.server_env = server_env or {}  # settings a preloaded package reads at import
        self.process: subprocess.Popen[bytes] | None = None
        self.control: socket.socket | None = None
        self.owner = 0  # the pid that started it: a forked copy of this process starts its own
        self.lock = threading.Lock()

    def start(self, args: Sequence[str], *, env: dict[str, str] | None = None, cwd: str | Path | None = None,
              stdin: Stream = None, stdout: Stream = None, stderr: Stream = None, pass_fds: Sequence[int] = (),
              start_new_session: bool = False) -> ForkedProcess:
        """`subprocess.Popen([python, -m, module, *args], ...)` with the same meaning of each
        argument (`stdout=PIPE` and `stderr=PIPE` are read once the child has ended)."""
        captured: dict[str, _Captured] = {}
        opened: list[int] = []
        streams = []
        for name, choice, inherited in (("stdin", stdin, 0), ("stdout", stdout, 1), ("stderr", stderr, 2)):
            if choice == subprocess.PIPE and name != "stdin":
                captured[name] = _Captured()
                streams.append(captured[name].file.fileno())
            elif choice == subprocess.DEVNULL:
                opened.append(os.open(os.devnull, os.O_RDONLY if name == "stdin" else os.O_WRONLY))
                streams.append(opened[-1])
            elif choice == subprocess.STDOUT and name == "stderr":
                streams.append(streams[1])
            elif choice is None:
                streams.append(inherited)
            elif isinstance(choice, int) and choice >= 0:
                streams.append(choice)
            elif hasattr(choice, "fileno"):
                streams.append(choice.fileno())
            else:
                raise ValueError(f"{name}={choice!r}: give None, DEVNULL, PIPE (not stdin), STDOUT (stderr), "
                                 "a descriptor or a file")
        request = {"args": list(map(str, args)),
                   "env": dict(os.environ if env is None else env), "cwd": str(cwd or os.getcwd()),
                   "new_session": start_new_session, "targets": [0, 1, 2, *pass_fds]}
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            with self.lock:
                socket.send_fds(self._control(), [json.dumps(request).encode()],
                                [theirs.fileno(), *streams, *pass_fds])
        except BaseException:
            mine.close()
            raise
        finally:
            theirs.close()  # the server holds its copy: a server that dies ends `mine` at once
            for fd in opened:
                os.close(fd)
        reply = mine.recv(64)
        if not reply:
            mine.close()
            raise RuntimeError(f"the fork server for {self.module} could not start it")
        return ForkedProcess(["python", "-m", self.module, *request["args"]], int(reply), mine, captured)

    def _control(self) -> socket.socket:
        """The socket to the running server, started on first use (and again if it died)."""
        if self.control is not None and self.owner == os.getpid() and self.process.poll() is None:
            return self.control
        if self.control is not None:
            self.control.close()  # a dead server's, or the one of the process this one was forked from
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        # Its own session: a signal to this process's group (a Ctrl-C) never reaches it. It runs
        # where armbench is installed, so no module in this process's folder is preloaded instead.
        command = [sys.executable, "-m", __name__, self.module, str(theirs.fileno()), *self.preload]
        self.process = subprocess.Popen(command, cwd=PACKAGE_PARENT, env={**os.environ, **self.server_env},
                                        stdin=subprocess.DEVNULL, pass_fds=[theirs.fileno()], start_new_session=True)
        theirs.close()
        if mine.recv(64) != b"ready":
            mine.close()
            raise RuntimeError(f"the fork server for {self.module} did not start (exit {self.process.wait()})")
        self.control, self.owner = mine, os.getpid()
        return mine


class ForkedProcess:
    """A child of a fork server, used as a `subprocess.Popen`; captured streams are readable
    (`stdout.read()`) once it has ended."""

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
        reply = self._status.recv(64)
        # No status: the fork server itself died (killed); the child's own end is unknown.
        self.returncode = int(reply) if reply else -signal.SIGKILL
        self._status.close()

    def send_signal(self, how: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, how)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

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


# The server side.

def serve(control: socket.socket, preload: list[str]) -> dict:
    """Preload, then fork a child per request and report its exit status when it ends. Returns
    only in a forked child, with the request it is to carry out."""
    gc.disable()  # imports make no garbage: collections meanwhile would only walk what they made
    for module in preload:
        with contextlib.suppress(ImportError):
            __import__(module)
    gc.enable()
    gc.freeze()  # the preloaded objects: never collected, so a child's collections do not touch (and copy) them
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    children: dict[int, socket.socket] = {}
    control.send(b"ready")
    while True:
        ready = select.select([control, wake_read], [], [])[0]
        if wake_read in ready:
            os.read(wake_read, 4096)
            _report_ended(children)
        if control not in ready:
            continue
        message, fds, _flags, _address = socket.recv_fds(control, MESSAGE_BYTES, MAX_DESCRIPTORS)
        if not message:
            os._exit(0)  # the process that started this server is gone
        request = json.loads(message)
        status, fds = socket.socket(fileno=fds[0]), fds[1:]
        set_up_read, set_up_write = os.pipe()
        pid = os.fork()
        if pid == 0:
            for fd in (control.fileno(), wake_read, wake_write, set_up_read, *(c.fileno() for c in children.values())):
                os.close(fd)
            status.close()
            signal.set_wakeup_fd(-1)
            return {**request, "fds": fds, "set_up": set_up_write}
        for fd in (*fds, set_up_write):
            os.close(fd)
        os.read(set_up_read, 1)  # as Popen returns: once the child has its session and descriptors
        os.close(set_up_read)
        with contextlib.suppress(OSError):  # the process that asked is gone: the child runs on regardless
            status.send(str(pid).encode())
        children[pid] = status
        _report_ended(children)  # a SIGCHLD may have come before the pid was known


def _report_ended(children: dict[int, socket.socket]) -> None:
    for pid in list(children):
        ended, status = os.waitpid(pid, os.WNOHANG)
        if ended:
            connection = children.pop(pid)
            with contextlib.suppress(OSError):  # the process that started it is gone
                connection.send(str(os.waitstatus_to_exitcode(status)).encode())
            connection.close()


def become(module: str, request: dict) -> None:
    """In the forked child: take the request's descriptors, session, folder and environment, then
    run `python -m MODULE ARGS` as the interpreter would."""
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    if request["new_session"]:
        os.setsid()
    set_up = _place(request["fds"], request["targets"], keep=request["set_up"])
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    os.close(set_up)
    # `python -m` puts the working folder first on the path, then PYTHONPATH's folders.
    extra = [entry for entry in request["env"].get("PYTHONPATH", "").split(os.pathsep) if entry]
    sys.path[0:1] = [os.getcwd(), *extra]
    sys.argv = [module, *request["args"]]
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def _place(received: list[int], targets: list[int], keep: int) -> int:
    """Put each received descriptor at its target number (as inheritable, like Popen's `pass_fds`)
    and close every other one but `keep`, as `close_fds` does; returns `keep`'s new number (its own
    may be one of the targets)."""
    above = max([*targets, *received, keep]) + 1
    moved = [fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, above) for fd in (keep, *received)]
    for fd in (keep, *received):
        os.close(fd)
    for fd, target in zip(moved[1:], targets):
        os.dup2(fd, target)
    wanted = {*targets, moved[0]}
    for entry in os.listdir("/proc/self/fd"):
        if int(entry) not in wanted:
            with contextlib.suppress(OSError):  # the listing's own descriptor, closed by now
                os.close(int(entry))
    return moved[0]


if __name__ == "__main__":  # python -m armbench.forkserver MODULE CONTROL_FD [PRELOAD...]
    become(sys.argv[1], serve(socket.socket(fileno=int(sys.argv[2])), sys.argv[3:]))
