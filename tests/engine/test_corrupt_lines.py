"""A runs.jsonl with corrupt lines in the middle: reports refuse it naming the line; a resume sets the
lines aside in runs.jsonl.bad, says so, and redoes their runs."""
import json

import pytest

from armbench.engine.plan import plan
from armbench.engine.store import Reopened, RunSetStore
from armbench.errors import UserError
from armbench.types import RunConfig
from tests.support.models import run_set


@pytest.mark.slow
async def test_resume_sets_corrupt_lines_aside_in_a_bad_file_and_redoes_their_runs(tmp_path, gpu_design, capsys):
    config = RunConfig(model="scripted/oracle", arms=["tooled"], runs=2)
    store = RunSetStore(tmp_path / "corrupt")
    await run_set([gpu_design], config, store, show_progress=False)
    lines = store.runs_path.read_bytes().split(b"\n")[:-1]
    garbled, not_utf8 = lines[2][:-7] + b"garbled", b"\xff\xfe garbage"
    lost = {json.loads(lines[2])["run_id"], json.loads(lines[5])["run_id"]}
    lines[2], lines[5] = garbled, not_utf8
    store.runs_path.write_bytes(b"\n".join(lines) + b'\n{"run_id": "torn')
    with pytest.raises(UserError, match=r"runs.jsonl:3 is not a run record .*--resume .*sets such lines aside"):
        store.records()  # a report still refuses them

    capsys.readouterr()
    result = await run_set([gpu_design], config, store, resume=True, show_progress=False)
    warning = " ".join(capsys.readouterr().err.split())
    assert (f"resume: set aside 2 corrupt line(s) of {store.runs_path} in {store.bad_path}; "
            "their runs will be redone") in warning
    assert store.bad_path.read_bytes() == garbled + b"\n" + not_utf8 + b"\n"
    assert {record.run_id for record in result.records} == lost and result.already_done == 8
    run_ids = [record.run_id for record in store.records()]
    assert sorted(run_ids) == sorted(job.run_id for job in plan([gpu_design], config))
    assert not store.runs_path.with_suffix(".jsonl.tmp").exists()

    again = await run_set([gpu_design], config, store, resume=True, show_progress=False)
    assert again.records == [] and store.bad_path.read_bytes() == garbled + b"\n" + not_utf8 + b"\n"


def test_reopen_without_corrupt_lines_keeps_the_file_and_makes_no_bad_file(tmp_path, two_arm_run_set):
    before = two_arm_run_set.runs_path.read_bytes()
    assert two_arm_run_set.reopen() == Reopened(corrupt=0, retried=0, duplicates=0)
    assert two_arm_run_set.runs_path.read_bytes() == before and not two_arm_run_set.bad_path.exists()
