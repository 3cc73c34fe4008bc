"""Hand-edited run records are refused on read, naming the file and line; old run sets still open;
a run recorded twice counts once."""
import json
import shutil
from pathlib import Path

import pytest

from armbench.engine.store import RunSetStore
from armbench.types import RunRecord
from tests.support.run_sets import make_manifest, make_record

FIXTURE = Path(__file__).parent / "fixtures" / "run_set_2026_11_30"
RECORDINGS = sorted(path.parent for path in (Path(__file__).parents[1] / "results" / "recordings").glob("*/runs.jsonl"))


def edit_line(store: RunSetStore, number: int, **fields) -> None:
    """Line `number` of runs.jsonl with `fields` replaced, as a text editor would leave it."""
    lines = store.runs_path.read_text().splitlines()
    lines[number - 1] = json.dumps({**json.loads(lines[number - 1]), **fields})  # NaN and Infinity as JSON writes them
    store.runs_path.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize(("fields", "problem"), [
    ({"correct": "yes"}, "correct: Input should be a valid boolean"),
    ({"correct": 1}, "correct: Input should be a valid boolean"),
    ({"repeat": "1"}, "repeat: Input should be a valid integer"),
    ({"prompt_tokens": 1.5}, "prompt_tokens: Input should be a valid integer"),
    ({"prompt_tokens": -3}, "prompt_tokens: Input should be greater than or equal to 0"),
    ({"actions_by_tool": {"browser": -1}}, "actions_by_tool.browser: Input should be greater than or equal to 0"),
    ({"wall_seconds": -1.0}, "wall_seconds: Input should be greater than or equal to 0"),
    ({"wall_seconds": float("inf")}, "wall_seconds: Input should be a finite number"),
    ({"cost_usd": float("nan")}, "cost_usd: Input should be a finite number"),
    ({"cost_usd": float("inf")}, "cost_usd: Input should be a finite number"),
    ({"cost_usd": 1e300}, "cost_usd: Input should be less than or equal to 1000000000000"),
    ({"arm": "nosuch"}, "arm: 'nosuch' is not an arm of this run set (browsing, tooled)"),
    ({"domain": "nosuch"}, "domain/set: 'nosuch/design' is not a question set of this run set (gpus/design, gpus/heldout)"),
    ({"transcript_path": "../../etc/passwd"}, "transcript_path: Value error, must be a path inside the run set folder"),
    ({"transcript_path": "/etc/passwd"}, "transcript_path: Value error, must be a path inside the run set folder"),
])
def test_a_hand_edited_record_is_one_line_naming_the_file_and_line(cli, two_arm_run_set, fields, problem):
    edit_line(two_arm_run_set, 2, **fields)
    for command in (["report", str(two_arm_run_set.directory)], ["report", "--json", str(two_arm_run_set.directory)],
                    ["show", "gpus-design-01.browsing.r1", "--run-set", str(two_arm_run_set.directory)]):
        code, out, err = cli(*command)
        assert code == 2 and not out, err
        assert len(err.strip().splitlines()) == 1, err
        assert f"{two_arm_run_set.runs_path}:2 is not a run record ({problem}" in " ".join(err.split())
    assert not (two_arm_run_set.directory / "report.html").exists()  # no plot was drawn


def test_show_refuses_a_transcript_that_leads_out_of_the_run_set(cli, two_arm_run_set, tmp_path):
    secret = tmp_path / "secret.jsonl"
    secret.write_text('{"role": "user", "content": "not for the report"}\n')
    transcript = two_arm_run_set.transcripts_dir / "gpus-design-01.tooled.r0.jsonl"
    transcript.unlink()
    transcript.symlink_to(secret)
    code, out, err = cli("show", "gpus-design-01.tooled.r0", "--run-set", str(two_arm_run_set.directory))
    assert code == 2 and "not for the report" not in out + err
    assert len(err.strip().splitlines()) == 1
    assert f"({transcript}) leads out of the run set {two_arm_run_set.directory}; not opened" in " ".join(err.split())


@pytest.mark.parametrize("run_set", [FIXTURE, *RECORDINGS], ids=lambda path: path.name)
def test_old_run_sets_still_load(run_set):
    records = RunSetStore(run_set).records()
    assert records and len({record.run_id for record in records}) == len(records)


def test_a_run_set_of_a_users_own_domain_opens(tmp_path):
    store = RunSetStore(tmp_path / "cities")
    store.create(make_manifest(question_sets={"cities/design": "a"}, config={"arms": ["tooled"]}))
    store.append(make_record(domain="cities", question_id="cities-design-01"))
    assert [record.domain for record in store.records()] == ["cities"]


def test_what_the_writer_writes_the_reader_takes(tmp_path):
    """Nulls where a run has no grade, price or outcome; every optional field set, or left out."""
    written = [
        make_record(question_id="q1", answer=None, correct=None, outcome=None, miss_reason=None, cost_usd=None,
                    stop_reason="infra_error", error="RateLimitError", error_kind="infra", retryable=True,
                    provider=None, call_providers=[None], actions_by_tool={}, actions=0, wall_seconds=0.0),
        make_record(question_id="q2", injected_faults=["timeout"], replay_divergence="step 2",
                    synthesized_tool_hash="f" * 64, correct=False, outcome="no_answer", miss_reason="no_answer_limit",
                    stop_reason="token_cap", error_kind="agent", cost_usd=0, wall_seconds=1),
    ]
    store = RunSetStore(tmp_path / "set")
    store.create(make_manifest())
    for record in written:
        store.append(record)
    assert store.records() == [RunRecord.model_validate(record.model_dump()) for record in written]


def test_a_run_recorded_twice_keeps_its_last_record_and_says_so_once(cli, two_arm_run_set, capsys):
    store = two_arm_run_set
    lines = store.runs_path.read_text().splitlines()
    again = json.loads(lines[0]) | {"answer": "the second try"}
    store.runs_path.write_text("\n".join([*lines, json.dumps(again), lines[1]]) + "\n")
    records = store.records()
    assert len(records) == len(lines)
    assert [r.answer for r in records if r.run_id == again["run_id"]] == ["the second try"]
    assert records[-1].run_id == json.loads(lines[1])["run_id"]  # each where its last record is
    store.records()
    warned = capsys.readouterr().err.strip().splitlines()
    assert warned == [f"warning: {store.runs_path} records 2 run(s) more than once; the last record of each is used"]


def test_report_on_a_run_set_with_repeated_runs_warns_in_one_line(cli, two_arm_run_set, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(two_arm_run_set.directory, copy)
    runs = copy / "runs.jsonl"
    runs.write_text(runs.read_text() + runs.read_text().splitlines()[0] + "\n")
    code, _out, err = cli("report", str(copy))
    assert code == 0
    assert err.strip().splitlines() == [
        f"warning: {runs} records 1 run(s) more than once; the last record of each is used"]
