"""The suite's `bench` fork server (tests/support/forked_bench.py) stands in for a fresh
`python -m armbench.cli` only if a command cannot tell the difference: same output, exit status,
environment, working folder and signals."""
import os
import signal
import subprocess
import sys

from tests.support import forked_bench

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
