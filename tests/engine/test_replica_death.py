"""A replica server killed mid-run set: the runs it broke are retryable infra errors, the set exits
non-zero, and one `--resume` finishes it with every planned run correct."""
import json
import subprocess
import time

import pytest

from armbench.replicas.supervisor import pid_path
from tests.support import forked_bench

# The browsing arm's stored solutions are mostly python calls that read the replica for a second or
# more, so with no model latency a call is almost always in flight when the server is killed.
BROWSING_SET = ["run", "--model", "scripted/oracle", "--arm", "browsing",
                "--set", "design", "--domain", "gpus", "--concurrency", "2", "--quiet"]


@pytest.mark.slow
def test_a_killed_replica_server_fails_the_set_and_one_resume_completes_it(tmp_path, replica_env):
    out = tmp_path / "set"
    process = forked_bench.start([*BROWSING_SET, "--out", str(out)], env=forked_bench.keyless_env(), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
    runs = out / "runs.jsonl"
    deadline = time.monotonic() + 240
    while not (runs.exists() and runs.read_text().count("\n") >= 2):
        assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
        time.sleep(0.05)
    server = int(pid_path().read_text())
    subprocess.run(["kill", "-9", str(server)], check=True)
    assert process.wait(timeout=300) == 1
    stderr = process.stderr.read()
    assert "restarting it" in stderr and f"--resume {out} runs again" in stderr and "Traceback" not in stderr
    first = [json.loads(line) for line in runs.read_text().splitlines()]
    broken = [record for record in first if record.get("retryable")]
    assert broken and all(r["correct"] is None and f"(pid {server}) died" in r["error"] for r in broken)

    resumed = forked_bench.run([*BROWSING_SET, "--resume", str(out)], env=forked_bench.keyless_env(), timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    assert f"{len(broken)} run(s) the harness broke or the provider refused will be run again" in resumed.stderr
    records = [json.loads(line) for line in runs.read_text().splitlines()]
    assert len(records) == len({r["run_id"] for r in records}) == 5
    assert all(r["correct"] is True for r in records)
    assert len((out / "runs.jsonl.retried").read_text().splitlines()) == len(broken)
