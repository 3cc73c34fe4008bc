"""Damaged or mistaken files and paths given to `bench`: one line on stderr and exit 2, never a traceback."""
import shutil

import pytest

from armbench.paths import QUESTIONS_DIR
from tests.test_cli import bench

NOT_UTF8 = b"\xff\xfe garbage\n"
ONE_RUN = ["--model", "scripted/oracle", "--arm", "tooled", "--domain", "gpus", "--question", "gpus-design-01",
           "--quiet"]


@pytest.fixture
def bank(tmp_path):
    """A scratch copy of the question bank, safe to damage."""
    target = tmp_path / "questions"
    shutil.copytree(QUESTIONS_DIR, target)
    return target


def one_line(code: int, err: str, *needles: str) -> None:
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    for needle in needles:
        assert needle in err, (needle, err)


@pytest.fixture
def copy_of(two_arm_run_set, tmp_path):
    """A copy of the two-arm run set to damage: `copy_of(name)` gives its folder."""
    def make(name: str):
        target = tmp_path / name
        shutil.copytree(two_arm_run_set.directory, target)
        return target
    return make


def report_commands(good: str, bad: str) -> list[list[str]]:
    return [["report", bad], ["report", "--json", bad], ["report", good, bad], ["report", bad, good],
            ["regress", bad, "--baseline", good]]


def test_a_runs_file_that_is_not_utf8_is_named_with_its_line(cli, two_arm_run_set, copy_of):
    bad = copy_of("bad")
    with (bad / "runs.jsonl").open("ab") as runs:
        runs.write(NOT_UTF8)
    line = len((bad / "runs.jsonl").read_bytes().splitlines())
    for command in [*report_commands(str(two_arm_run_set.directory), str(bad)),
                    ["show", "gpus-design-01.tooled.r0", "--run-set", str(bad)]]:
        code, _, err = cli(*command)
        one_line(code, err, f"{bad / 'runs.jsonl'}:{line} is not a run record (not UTF-8 text at byte 0)",
                 f"--resume {bad}) sets such lines aside")


def test_a_runs_file_that_is_a_folder_is_one_line(cli, two_arm_run_set, copy_of):
    bad = copy_of("folder")
    (bad / "runs.jsonl").unlink()
    (bad / "runs.jsonl").mkdir()
    for command in report_commands(str(two_arm_run_set.directory), str(bad)):
        code, _, err = cli(*command)
        one_line(code, err, f"cannot read the run set's records {bad / 'runs.jsonl'}")


def test_a_run_set_without_runs_is_refused_and_so_is_an_empty_baseline(cli, two_arm_run_set, copy_of):
    empty = copy_of("empty")
    (empty / "runs.jsonl").write_bytes(b"")
    for command in report_commands(str(two_arm_run_set.directory), str(empty)):
        code, out, err = cli(*command)
        one_line(code, err, f"no runs in {empty}")
    code, out, err = cli("regress", str(two_arm_run_set.directory), "--baseline", str(empty))
    one_line(code, err, f"no runs in {empty}")
    assert "OK" not in out


@pytest.mark.parametrize("content, problem", [
    (b"{not json", "is not valid JSON"),
    (NOT_UTF8, "is not UTF-8 text at byte 0"),
    (b"[]", "holds [], not a JSON object"),
    (b"null", "holds null, not a JSON object"),
    (b"3", "holds 3, not a JSON object"),
    (b'{"question_sets": ["gpus/design"]}', "question_sets: Input should be a valid dictionary"),
])
def test_a_damaged_manifest_is_named_by_report_compare_regress_and_resume(cli, two_arm_run_set, copy_of,
                                                                          content, problem):
    bad = copy_of("bad")
    (bad / "manifest.json").write_bytes(content)
    for command in [["report", str(bad)], *report_commands(str(two_arm_run_set.directory), str(bad))[2:],
                    ["run", *ONE_RUN, "--resume", str(bad)]]:
        code, _, err = cli(*command)
        one_line(code, err, f"{bad / 'manifest.json'}", problem)


def test_resume_names_the_keys_a_manifest_lacks(cli, copy_of):
    bad = copy_of("bad")
    (bad / "manifest.json").write_text('{"model": "scripted/oracle"}')
    code, _, err = cli("run", *ONE_RUN, "--resume", str(bad))
    one_line(code, err, f"cannot resume {bad}: its manifest {bad / 'manifest.json'}", "config: Field required")


@pytest.mark.parametrize("out, problem", [
    ("{tmp}/a-file", "{tmp}/a-file is a file, not a folder"),
    ("{tmp}/a-file/below", "{tmp}/a-file is a file, not a folder"),
    ("/proc/armbench-x", "/proc takes no files"),
    ("/proc", "/proc takes no files"),
])
def test_an_out_that_is_a_file_or_unwritable_is_refused_before_anything_starts(cli, tmp_path, out, problem):
    (tmp_path / "a-file").write_text("keep me")
    code, _, err = cli("run", *ONE_RUN, "--out", out.format(tmp=tmp_path))
    one_line(code, err, f"cannot make a run set at {out.format(tmp=tmp_path)}", problem.format(tmp=tmp_path))
    assert (tmp_path / "a-file").read_text() == "keep me"


@pytest.mark.parametrize("content, problem", [
    (NOT_UTF8, "question file {path} is not UTF-8 text at byte 0"),
    (b"domain: gpus\nset: design\nquestions: null\n", "{path}: `questions` must be a list of questions"),
    (b"domain: gpus\nset: design\nquestions:\n", "{path}: `questions` must be a list of questions"),
    (b"domain: gpus\nset: design\nquestions: {id: x}\n", "{path}: `questions` must be a list of questions"),
])
def test_a_question_file_that_is_not_utf8_or_has_no_question_list_is_named(bank, content, problem):
    path = bank / "gpus" / "design.yaml"
    path.write_bytes(content)
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    for command in (["questions", "list"], ["run", *ONE_RUN, "--out", str(bank.parent / "x")]):
        result = bench(*command, env=env)
        one_line(result.returncode, result.stderr, problem.format(path=path))
        assert "Traceback" not in result.stdout + result.stderr


@pytest.mark.parametrize("content, problem", [(b"[]", "holds [], not a JSON object"), (NOT_UTF8, "not UTF-8")])
def test_a_damaged_question_lock_is_named(bank, content, problem):
    (bank / "questions.lock").write_bytes(content)
    result = bench("questions", "list", env={"ARMBENCH_QUESTIONS_DIR": str(bank)})
    one_line(result.returncode, result.stderr, f"the question lock {bank / 'questions.lock'}", problem)



@pytest.mark.slow
def test_bench_run_resume_sets_a_corrupt_line_aside_and_redoes_its_run(cli, tmp_path):
    from armbench.engine.store import open_run_set

    out, flags = tmp_path / "set", [*ONE_RUN[:-2], "gpus-design-01,gpus-design-02", "--quiet"]
    assert cli("run", *flags, "--out", str(out))[0] == 0
    runs = out / "runs.jsonl"
    _, second = runs.read_bytes().splitlines()
    runs.write_bytes(NOT_UTF8 + second + b"\n")
    one_line(*cli("report", str(out))[::2], f"{runs}:1 is not a run record")
    code, _, err = cli("run", *flags, "--resume", str(out))
    assert code == 0 and f"resume: set aside 1 corrupt line(s) of {runs} in {runs}.bad" in " ".join(err.split())
    assert (out / "runs.jsonl.bad").read_bytes() == NOT_UTF8
    assert sorted(r.run_id for r in open_run_set(out).records()) == [
        "gpus-design-01.tooled.r0", "gpus-design-02.tooled.r0"]
