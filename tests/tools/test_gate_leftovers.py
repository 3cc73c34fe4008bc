"""A relay folder (/tmp/armbench-gate-<pid>-*) outlives no process: one left by a `kill -9` is removed
by the next process that gates a call, and a live process's folder is never touched."""
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from armbench.tools.replica_gate import GATE_PREFIX, sweep_leftover_gates

# Gates one call and, inside it, prints its folder (the one named after its pid) and sleeps until killed.
HOLD_A_GATE = """
import asyncio, glob, os, tempfile
from armbench.tools.replica_gate import GATE_PREFIX, ReplicaShare, gated

async def hold():
    async with gated([], ReplicaShare()):
        print(*glob.glob(os.path.join(tempfile.gettempdir(), f"{GATE_PREFIX}{os.getpid()}-*")), flush=True)
        await asyncio.sleep(600)

asyncio.run(hold())
"""


def holder() -> tuple[subprocess.Popen, Path]:
    process = subprocess.Popen([sys.executable, "-c", HOLD_A_GATE], stdout=subprocess.PIPE, text=True)
    return process, Path(process.stdout.readline().strip())


def sweep() -> None:
    sweep_leftover_gates.cache_clear()  # it runs once per process; here, once per call
    sweep_leftover_gates()


def dead_pid() -> int:
    finished = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    return int(finished.stdout)


def test_the_folder_of_a_killed_process_is_swept_and_a_live_ones_kept():
    killed, left = holder()
    alive, kept = holder()
    try:
        assert left.name.startswith(f"{GATE_PREFIX}{killed.pid}-") and left.is_dir()
        killed.send_signal(signal.SIGKILL)
        killed.wait()
        assert left.is_dir()  # a kill -9 leaves it
        sweep()
        assert not left.exists()
        assert kept.is_dir()
    finally:
        alive.kill()
        alive.wait()
    sweep()
    assert not kept.exists()


def test_a_folder_locked_by_a_live_process_is_kept_whatever_its_name_says():
    """Another pid namespace sharing /tmp: the pid in the name is not ours to see, but its lock is held."""
    folder = Path(tempfile.mkdtemp(prefix=f"{GATE_PREFIX}{dead_pid()}-"))
    locker = subprocess.Popen([sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDONLY);"
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('locked', flush=True); time.sleep(600)", str(folder)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout.readline().strip() == "locked"
        sweep()
        assert folder.is_dir()
    finally:
        locker.kill()
        locker.wait()
    sweep()
    assert not folder.exists()


def test_folders_not_named_like_a_gate_are_left_alone():
    root = Path(tempfile.gettempdir())
    others = [root / f"{GATE_PREFIX}nopid-x", root / f"armbench-other-{dead_pid()}-x"]
    for folder in others:
        folder.mkdir()
    try:
        sweep()
        assert all(folder.is_dir() for folder in others)
    finally:
        for folder in others:
            folder.rmdir()
