"""A fork server's child (armbench/forkserver.py) stands in for a fresh `python -m MODULE` only if
the program cannot tell the difference: same output, exit status, environment, working folder,
descriptors and signals; and the server leaves with the process that started it."""
import os
import signal
import subprocess
import sys
import textwrap

from armbench import forkserver
from armbench.forkserver import ForkServer
from tests.support import forked_bench
from tests.support.processes import gone_within

FRESH = [sys.executable, "-m", "armbench.cli"]


def test_a_forked_command_says_and_exits_as_a_fresh_one(tmp_path):
    env = {**os.environ, "ARMBENCH_QUESTIONS_DIR": str(tmp_path / "nowhere")}
    for args in (["questions", "list"], ["run", "--bogus"], ["doctor", "--help"]):
        fresh = subprocess.run([*FRESH, *args], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
        forked = forked_bench.run(args, env=env, cwd=tmp_path, timeout=120)
        assert (forked.returncode, forked.stdout, forked.stderr) == (fresh.returncode, fresh.stdout, fresh.stderr)


def test_a_forked_command_has_its_own_pid_session_and_signals(tmp_path):
    process = forked_bench.start(["replicas", "serve", "--domain", "gpus"], cwd=tmp_path, start_new_session=True,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        assert process.poll() is None and os.getsid(process.pid) == process.pid
    finally:
        process.send_signal(signal.SIGKILL)
    assert process.wait(timeout=30) == -signal.SIGKILL


PROBE = """
import os, sys
print("args", sys.argv[1:], "cwd", os.getcwd(), "setting", os.environ.get("PROBE_SETTING"))
print("descriptors", sorted(int(fd) for fd in os.listdir("/proc/self/fd")))
print("passed", os.read(int(sys.argv[1]), 100).decode(), file=sys.stderr)
sys.exit(3)
"""


def test_the_child_gets_its_passed_descriptors_at_their_numbers_and_no_others(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    server = ForkServer("probe", preload=["json"])
    readable, writable = os.pipe()
    os.write(writable, b"hello")
    os.close(writable)
    folder = tmp_path / "work"
    folder.mkdir()
    try:
        with (tmp_path / "log").open("wb") as log:
            child = server.start([str(readable)], env={**os.environ, "PYTHONPATH": str(tmp_path),
                                                       "PROBE_SETTING": "on"},
                                 cwd=folder, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                 pass_fds=[readable])
        assert child.wait(timeout=30) == 3
    finally:
        os.close(readable)
    # os.listdir's own descriptor is the one more.
    out = (tmp_path / "log").read_text().splitlines()
    assert out[0] == f"args ['{readable}'] cwd {folder} setting on"
    listed = eval(out[1].removeprefix("descriptors "))
    assert listed[:3] == [0, 1, 2] and readable in listed and len(listed) == 5
    assert out[2] == "passed hello"


def test_the_fork_server_leaves_with_the_process_that_started_it(tmp_path):
    (tmp_path / "probe.py").write_text(PROBE)
    owner = subprocess.run([sys.executable, "-c", textwrap.dedent("""
        import os, signal, subprocess
        from armbench.forkserver import ForkServer
        server = ForkServer("probe", preload=[])
        child = server.start(["0"], env={**os.environ, "PYTHONPATH": os.getcwd()}, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        child.wait()
        print(server.process.pid, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert owner.returncode == -signal.SIGKILL, owner.stderr
    assert gone_within([int(owner.stdout)], 10), "the fork server outlived its owner"


def test_a_descriptor_goes_to_its_number_even_where_the_child_held_another():
    """The child's own descriptor (here the one it tells the server with) may sit at a number the
    request asks for: it moves away first."""
    pid = os.fork()
    if pid == 0:
        data, _ = os.pipe()
        _, own = os.pipe()
        data_inode, own_inode = os.fstat(data).st_ino, os.fstat(own).st_ino
        moved = forkserver._place([data], [own], keep=own)
        left = {int(fd) for fd in os.listdir("/proc/self/fd")} - {moved, own}
        correct = os.fstat(own).st_ino == data_inode and os.fstat(moved).st_ino == own_inode and len(left) == 1
        os._exit(0 if correct else 1)
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
