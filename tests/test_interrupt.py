"""Ctrl-C in a terminal signals bench's whole process group, its children too (the browser's driver,
replica servers): bench still ends with one line and exit 130 (143 for SIGTERM), with no asyncio
noise about the futures those children's deaths left unread."""
import os
import signal
import subprocess
import time

import pytest

from tests.support import forked_bench

SLOW_SET = ["run", "--model", "scripted/oracle+latency=0.5", "--arm", "all",
            "--domain", "gpus", "--set", "design", "--runs", "2", "--quiet"]


@pytest.mark.slow
@pytest.mark.parametrize(("how", "code", "said"), [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_a_signal_to_the_process_group_ends_the_run_set_in_one_line(tmp_path, how, code, said):
    out = tmp_path / "set"
    process = forked_bench.start([*SLOW_SET, "--out", str(out)], env=forked_bench.keyless_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, start_new_session=True)
    runs, deadline = out / "runs.jsonl", time.monotonic() + 240
    while not (runs.exists() and runs.read_text().count("\n") >= 2):  # browsing runs in flight by now
        assert process.poll() is None, process.stderr.read()
        assert time.monotonic() < deadline, "no runs finished"
        time.sleep(0.05)
    os.killpg(process.pid, how)  # what a terminal's Ctrl-C does
    _, err = process.communicate(timeout=120)
    assert process.returncode == code, err
    assert err.splitlines() == [f"{said}: finished runs are kept in {runs}; continue with the same command and "
                                f"--resume {out}"]
