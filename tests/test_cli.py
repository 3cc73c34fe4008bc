"""The `bench` command as a user runs it: exit codes and messages, never a traceback.

Most tests call it in this process (the `cli` fixture: no interpreter start and LiteLLM import per
call); `bench(...)` starts a process where the process is what is tested: what loads before the
flags are checked, the entry point, a port held by another process, the help's width."""
import json
import re
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from armbench import provenance
from armbench.paths import QUESTIONS_DIR
from armbench.questions import load_sets
from tests.conftest import free_port
from tests.support import forked_bench


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return forked_bench.run(args, env=forked_bench.keyless_env(**(env or {})), timeout=300)


def assert_user_error(result: subprocess.CompletedProcess | tuple[int, str, str], *needles: str) -> None:
    """One message and exit 2, from `bench(...)` or the `cli` fixture."""
    code, out, err = (result.returncode, result.stdout, result.stderr) if isinstance(
        result, subprocess.CompletedProcess) else result
    assert code == 2, err
    assert "Traceback" not in err + out
    for needle in needles:
        assert needle in err


@pytest.fixture
def bank(tmp_path):
    target = tmp_path / "questions"
    shutil.copytree(QUESTIONS_DIR, target)
    return target


@pytest.mark.slow
def test_run_all_gpu_sets_three_times_is_every_run_correct(cli, tmp_path):
    out = tmp_path / "x"
    code, stdout, err = cli("run", "--arm", "tooled", "--set", "all", "--domain", "gpus",
                            "--model", "scripted/oracle", "--runs", "3", "--out", str(out), "--quiet")
    assert code == 0, err
    runs = 3 * sum(len(question_set.questions) for question_set in load_sets(["gpus"]))
    assert f"tooled {runs}/{runs}" in stdout  # the summary's headline: the sets pooled
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(records) == runs and all(r["correct"] for r in records)
    assert (out / "report.md").exists() and (out / "runs.parquet").exists()

    rows = json.loads(cli("report", str(out), "--json")[1])["rows"]
    assert [(r["set"], r["correct"], r["graded"]) for r in rows] == [
        (question_set.set, 3 * len(question_set.questions), 3 * len(question_set.questions))
        for question_set in load_sets(["gpus"])]


@pytest.mark.slow
def test_unknown_set_arm_domain_and_model(cli):
    assert_user_error(cli("run", "--model", "scripted/oracle", "--set", "nosuch"), "unknown set 'nosuch'")
    assert_user_error(cli("run", "--model", "scripted/oracle", "--arm", "nosuch"), "unknown arm")
    assert_user_error(cli("run", "--model", "scripted/oracle", "--domain", "nosuch"), "unknown domain")
    assert_user_error(cli("run", "--model", "scripted/nosuch"), "no script 'nosuch'")


HEAVY = ("litellm", "playwright", "polars", "fastapi", "matplotlib")
REJECT_BAD_FLAG = f"""
import sys
from armbench.cli import main
try:
    main(sys.argv[1:])
except SystemExit as stop:
    code = stop.code
print(code, [m for m in {HEAVY!r} if m in sys.modules])
"""


@pytest.mark.parametrize(("flags", "lines"), [
    (("--set", "nosuch"), 1), (("--arm", "typo"), 1), (("--domain", "nosuch"), 1), (("--price", "x"), 1),
    (("--request-timeout", "-1"), 1), (("--request-timeout", "nan"), 1), (("--max-cost", "nan"), 1),
    (("--max-cost", "inf"), 1), (("--domain", ""), 1), (("--set", " "), 1), (("--arm", ","), 1),
    (("--runs", "0"), 4),  # click's own range check: usage, hint, a blank line and the message
])
def test_a_bad_run_flag_is_refused_before_anything_heavy_loads(flags, lines):
    result = subprocess.run([sys.executable, "-c", REJECT_BAD_FLAG, "run", "--model", "scripted/oracle", *flags],
                            capture_output=True, text=True, timeout=60)
    code, loaded = result.stdout.split(" ", 1)
    assert code == "2" and len(result.stderr.strip().splitlines()) == lines, result.stderr
    assert loaded.strip() == "[]", f"loaded before the flags were checked: {loaded}"  # its time: benchmarks/cli_latency.py


@pytest.mark.slow
def test_missing_api_key_for_a_real_provider(cli):
    assert_user_error(cli("run", "--model", "openai/gpt-4o-mini"), "OPENAI_API_KEY")


def test_bad_flag_value_is_a_usage_error(cli):
    assert cli("run", "--model", "scripted/oracle", "--runs", "zero")[0] == 2


def test_malformed_yaml(cli, bank):
    (bank / "gpus" / "design.yaml").write_text("questions: [\n  - id: x\n")
    result = cli("run", "--model", "scripted/oracle", env={"ARMBENCH_QUESTIONS_DIR": str(bank)})
    assert_user_error(result, "not valid YAML")


def test_unknown_question_field(cli, bank):
    path = bank / "gpus" / "heldout.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][0]["hint"] = "try gpu_query"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    result = cli("questions", "verify", env={"ARMBENCH_QUESTIONS_DIR": str(bank)})
    assert_user_error(result, "gpus-heldout-01: hint: unknown field")


@pytest.mark.slow
def test_verify_passes_then_names_a_changed_reference(cli, bank):
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    code, out, _ = cli("questions", "verify", env=env)
    assert code == 0 and "match" in out
    path = bank / "gpus" / "design.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][1]["answer"] = ["H200 NVL"]
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, _, err = cli("questions", "verify", env=env)
    assert code == 1
    assert "gpus-design-02" in err and "gpus-design-01" not in err


@pytest.mark.slow
def test_run_refuses_an_unlocked_set_unless_allowed(cli, bank, tmp_path):
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    path = bank / "gpus" / "design.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][0]["text"] += " Answer carefully."
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    refused = cli("run", "--model", "scripted/oracle", "--set", "design", "--out", str(tmp_path / "a"), env=env)
    assert_user_error(refused, "gpus/design", "questions.lock")
    code, _, err = cli("run", "--model", "scripted/oracle", "--set", "design", "--question", "gpus-design-01",
                       "--allow-unlocked", "--out", str(tmp_path / "b"), "--quiet", env=env)
    assert code == 0, err
    assert cli("questions", "freeze", env=env)[0] == 0
    assert "gpus/design" in json.loads((bank / "questions.lock").read_text())


@pytest.mark.slow
def test_the_oracle_fails_the_run_set_naming_a_stored_solution_that_broke(cli, bank, tmp_path):
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    path = bank / "gpus" / "design.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][0]["solutions"]["tooled"]["calls"][0]["args"]["sort_by"] = "weight_in_lbs"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    code, _, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--set", "design", "--arm", "tooled",
                       "--question", "gpus-design-01,gpus-design-02", "--allow-unlocked",
                       "--out", str(tmp_path / "run"), "--quiet", env=env)
    assert code == 1, err
    said = " ".join(err.split())
    assert "oracle: 1 of 2 runs not correct" in said and "gpus-design-01.tooled.r0: " in said
    assert "stored solution failed at call 1 (gpu_query)" in said and "weight_in_lbs" in said


def test_report_on_a_folder_that_is_not_a_run_set(cli, tmp_path):
    assert_user_error(cli("report", str(tmp_path)), "not a run set")


def test_a_run_set_written_before_the_re_house_still_reports(tmp_path, cli):
    older = tmp_path / "older"
    shutil.copytree(Path(__file__).parent / "fixtures" / "run_set_2026_11_30", older)
    code, out, err = cli("report", str(older))
    assert code in (0, None) and "gpus" in out and "Traceback" not in err, err
    code, out, _ = cli("report", str(older), "--json")
    assert code in (0, None) and json.loads(out)["rows"]


def test_report_of_two_arms_prints_the_paired_comparison_and_writes_html(two_arm_run_set, cli):
    directory = two_arm_run_set.directory
    code, out, _ = cli("report", str(directory), "--full")
    assert code == 0
    for needle in ("Paired comparison: tooled vs browsing", "0.0156", "Questions that differ",
                   "gpus-heldout-01", "pass@3", "wrong separator", "gpu_query"):
        assert needle in out, needle
    assert (directory / "report.html").exists() and (directory / "plots" / "cost_accuracy.png").exists()
    assert (directory / "transcripts" / "gpus-design-01.browsing.r0.html").exists()
    assert "## Paired comparison: tooled vs browsing" in (directory / "report.md").read_text()

    code, out, _ = cli("report", str(directory), "--json")
    data = json.loads(out)
    [arms] = data["arm_comparisons"]
    assert (arms["a"], arms["b"]) == ("browsing", "tooled")
    assert arms["paired"][-1]["p_value"] == pytest.approx(2 / 2**7)


def test_report_compares_two_run_sets(two_arm_run_set, tmp_path, cli):
    before = two_arm_run_set.directory
    after = tmp_path / "after"
    shutil.copytree(before, after)
    lines = [json.loads(line) for line in (after / "runs.jsonl").read_text().splitlines()]
    for line in lines:
        if line["question_id"] == "gpus-design-01" and line["arm"] == "browsing":
            line.update(correct=True, outcome="fully_correct", miss_reason=None)
    (after / "runs.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    manifest = json.loads((after / "manifest.json").read_text())
    (after / "manifest.json").write_text(json.dumps({**manifest, "model": "scripted/other"}))

    code, out, _ = cli("report", str(before), str(after))
    assert code == 0
    assert "Accuracy per set: after vs two-arms" in out and "+20 pp" in out
    assert "Flips: after vs two-arms" in out and "gpus-design-01" in out and "better" in out
    assert "model scripted/other" in out

    code, out, _ = cli("report", str(before), str(after), "--json")
    [flip] = json.loads(out)["flips"]
    assert flip["unit"] == ["gpus", "design", "browsing", "gpus-design-01"] and flip["delta"] == 1.0


def test_show_prints_one_transcript(two_arm_run_set, cli):
    code, out, _ = cli("show", "gpus-design-02.browsing.r0", "--run-set", str(two_arm_run_set.directory))
    assert code == 0 and "wrong_separator" in out and "→ browser" in out


@pytest.mark.parametrize("args,needle", [
    (["show", "nosuch", "--run-set", "{run_set}"], "no run 'nosuch'"),
    (["show", "x", "--run-set", "{empty}"], "is not a run set"),
    (["report", "{run_set}", "{empty}"], "is not a run set"),
    (["report", "{run_set}", "{run_set}", "--format", "csv"], "one run set's study table or a leaderboard"),
    (["report", "{run_set}", "--out", "x"], "--out goes with three or more run sets"),
    (["report", "{run_set}", "{run_set}", "{run_set}", "--format", "html"], "--format is one of"),
])
def test_bad_report_and_show_input_is_one_message(two_arm_run_set, tmp_path, cli, args, needle):
    paths = {"run_set": str(two_arm_run_set.directory), "empty": str(tmp_path)}
    code, out, err = cli(*(a.format(**paths) for a in args))
    assert code == 2 and needle in err and "Traceback" not in out + err


def test_show_an_unknown_run_as_a_user_runs_it(two_arm_run_set):
    assert_user_error(bench("show", "nosuch", "--run-set", str(two_arm_run_set.directory)), "no run 'nosuch'")


def test_doctor_passes_the_oracle_and_names_dropped_arguments(cli):
    code, out, _ = cli("doctor", "--model", "scripted/oracle")
    assert code == 0 and out.count("ok ") == 3
    code, out, _ = cli("doctor", "--model", "scripted/drop-args")
    assert code == 1 and "FAIL tool call" in out and "arrived empty" in out


def test_a_cost_cap_needs_a_priced_model(cli):
    code, _, err = cli("run", "--model", "openrouter/nobody/unpriced-model", "--max-cost", "5",
                       env={"OPENROUTER_API_KEY": "not-used"})
    assert code == 2 and "no price" in err


@pytest.mark.parametrize(
    "flags, message",
    [
        (["--provider-order", "A"], "not an openrouter/ model"),
        (["--run-timeout", "0"], "--run-timeout must be a number more than 0"),
        (["--model", "scripted/oracle+faults=1.5"], "bad scripted-model option 'faults=1.5'"),
    ],
)
def test_bad_engine_flags(cli, flags, message):
    code, _, err = cli("run", "--model", "scripted/oracle", *flags)
    assert code == 2 and message in err


@pytest.mark.slow
def test_resume_with_another_model_is_refused(cli, tmp_path):
    out, plan = str(tmp_path / "set"), ("--domain", "gpus", "--arm", "tooled", "--set", "design")
    assert cli("run", "--model", "scripted/oracle", *plan, "--out", out, "--quiet")[0] == 0
    code, _, err = cli("run", "--model", "scripted/drop-args", *plan, "--resume", out)
    assert code == 2 and "model: the run set used 'scripted/oracle', this command 'scripted/drop-args'" in err
    code, _, err = cli("run", "--model", "scripted/oracle", *plan, "--out", out)
    assert code == 2 and f"--resume {out}" in err


@pytest.mark.slow
def test_a_resume_is_refused_before_anything_starts_naming_the_changed_domain(cli, tmp_path, monkeypatch):
    out = str(tmp_path / "set")
    assert cli("run", "--model", "scripted/oracle", "--arm", "tooled", "--domain", "gpus", "--question",
               "gpus-design-01", "--out", out, "--quiet")[0] == 0
    code, _, err = cli("run", "--model", "scripted/oracle", "--arm", "tooled", "--domain", "gpus,worldbank",
                       "--question", "gpus-design-01", "--resume", out)
    assert code == 2 and "--domain: the run set ran gpus, this command gpus, worldbank" in err
    assert "system prompt" not in err
    # A real model's preflight comes after the resume check: a refused resume costs no round trip.
    monkeypatch.setenv("OLLAMA_API_BASE", f"http://127.0.0.1:{free_port()}")
    code, _, err = cli("run", "--model", "ollama/llama3", "--arm", "tooled", "--domain", "gpus", "--question",
                       "gpus-design-01", "--resume", out)
    assert code == 2 and "model: the run set used 'scripted/oracle', this command 'ollama/llama3'" in err
    assert "preflight" not in err


@pytest.mark.slow
def test_a_provider_that_is_down_fails_the_preflight_or_with_skip_preflight_the_set(cli, tmp_path):
    env = {"OLLAMA_API_BASE": f"http://127.0.0.1:{free_port()}"}  # no server, as with no ollama running
    # how fast (3 attempts refused at once, not 3 request timeouts) is measured by make bench (cli_latency.py)
    refused = cli("run", "--model", "ollama/llama3", "--request-timeout", "5", "--out", str(tmp_path / "x"), env=env)
    assert_user_error(refused, "error: preflight: FAIL provider: cannot connect: ", "--skip-preflight")
    assert len(refused[2].strip().splitlines()) == 1 and not (tmp_path / "x").exists()

    out = tmp_path / "y"
    code, _, err = cli("run", "--model", "ollama/llama3", "--request-timeout", "5", "--skip-preflight", "--arm",
                       "tooled", "--domain", "gpus", "--question", "gpus-design-01,gpus-design-02", "--max-retries",
                       "0", "--quiet", "--out", str(out), env=env)
    assert code == 1
    assert err.strip().splitlines()[-1].startswith(
        "failed: 2 of 2 planned runs are infra errors, more than half. First error: cannot connect: litellm.APIConnectionError")
    assert json.loads((out / "manifest.json").read_text())["config"]["skip_preflight"] is True


@pytest.mark.slow
def test_too_many_infra_errors_exit_1_with_the_report(cli, tmp_path):
    out = tmp_path / "down"
    code, stdout, err = cli("run", "--model", "scripted/server-error", "--set", "design", "--max-retries", "0",
                            "--max-infra-errors", "1", "--concurrency", "1", "--out", str(out), "--quiet")
    assert code == 1 and "more than --max-infra-errors 1" in err
    assert "2 infra errors" in stdout and len((out / "runs.jsonl").read_text().splitlines()) == 2


@pytest.mark.slow
def test_an_mcp_server_that_cannot_start_stops_the_run_before_it_starts(cli, tmp_path, serve_gpus):
    broken = shlex.join([*serve_gpus[:-1], "nosuch"])
    result = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--tools", f"mcp:{broken}",
                   "--out", str(tmp_path / "x"))
    assert_user_error(result, "could not start or reach the MCP server", "no domain 'nosuch'")
    assert not (tmp_path / "x").exists()


def test_mcp_serve_on_a_busy_port_is_one_message():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = bench("mcp", "serve", "gpus", "--http", str(busy.getsockname()[1]))
    assert_user_error(result, "cannot listen on 127.0.0.1:")


def test_replicas_serve_names_an_unknown_domain(cli):
    code, _, err_text = cli("replicas", "serve", "--domain", "nosuch")
    assert code == 2 and "nosuch" in err_text and "Traceback" not in err_text


@pytest.mark.slow
def test_question_narrows_the_plan_and_an_unknown_id_is_refused(cli, tmp_path):
    code, _, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--question", "nope",
                       "--out", str(tmp_path / "x"))
    assert code == 2 and "no question 'nope' in the chosen --domain/--set" in err
    code, _, err = cli("run", "--model", "scripted/oracle", "--arm", "tooled", "--domain", "gpus",
                       "--question", "gpus-design-02,gpus-heldout-03", "--quiet", "--out", str(tmp_path / "y"))
    assert code == 0, err
    from armbench.engine.store import open_run_set

    assert sorted(r.run_id for r in open_run_set(tmp_path / "y").records()) == [
        "gpus-design-02.tooled.r0", "gpus-heldout-03.tooled.r0"]


def test_recording_a_replay_is_refused(cli, tmp_path):
    (tmp_path / "recording").mkdir()
    code, _, err = cli("run", "--model", f"replay/{tmp_path}", "--record", "--out", str(tmp_path / "x"))
    assert code == 2 and "a replay has none of its own to record" in err


@pytest.mark.slow
def test_price_sets_the_cost_of_an_unpriced_model_and_bad_prices_are_refused(cli, tmp_path):
    code, _, err = cli("run", "--model", "scripted/oracle", "--price", "abc", "--out", str(tmp_path / "x"))
    assert code == 2 and "--price takes IN,OUT" in err
    # A variant of its own, so the price registered here does not leak into other tests' oracle.
    code, _, err = cli("run", "--model", "scripted/oracle+seed=7", "--arm", "tooled", "--domain", "gpus",
                       "--question", "gpus-design-01", "--price", "1000,2000", "--quiet", "--out", str(tmp_path / "y"))
    assert code == 0, err
    from armbench.engine.store import open_run_set

    store = open_run_set(tmp_path / "y")
    (record,) = store.records()
    expected = (record.prompt_tokens * 1000 + record.completion_tokens * 2000) / 1e6
    assert record.cost_usd == pytest.approx(expected) and record.cost_usd > 0
    assert store.manifest()["config"]["price_per_million"] == [1000.0, 2000.0]


def test_help_shows_every_default_and_the_generation_settings():
    result = bench("run", "--help", env={"COLUMNS": "100"})
    text = " ".join(result.stdout.split())
    assert result.returncode == 0
    for shown in ("[default: 120; 60 for doctor; 1800 for a local model]", "[default: the provider's]",
                  "--temperature", "--max-tokens", "--seed", "--reasoning-effort", "--api-base", "-M, --model-arg",
                  "--env-file", "[default: ./.env if present]"):
        assert shown in text, shown


@pytest.mark.slow
def test_any_set_name_in_the_bank_and_questions_dir_point_at_it(cli, bank, tmp_path):
    """A third set (a harder held-out round) is a file, found by name; --questions-dir picks the bank."""
    raw = yaml.safe_load((bank / "gpus" / "heldout.yaml").read_text())
    raw["set"] = "round-2"
    raw["questions"] = raw["questions"][:2]
    for question in raw["questions"]:
        question["id"] = question["id"].replace("heldout", "round-2")
    (bank / "gpus" / "round-2.yaml").write_text(yaml.safe_dump(raw, sort_keys=False))
    assert cli("--questions-dir", str(bank), "questions", "freeze")[0] == 0
    out = tmp_path / "r2"
    code, _, err = cli("--questions-dir", str(bank), "run", "--model", "scripted/oracle", "--arm", "tooled",
                       "--domain", "gpus", "--set", "round-2", "--out", str(out), "--quiet")
    assert code == 0, err
    assert {json.loads(line)["set"] for line in (out / "runs.jsonl").read_text().splitlines()} == {"round-2"}
    unknown = cli("--questions-dir", str(bank), "run", "--model", "scripted/oracle", "--set", "round-3")
    assert_user_error(unknown, "unknown set 'round-3'; choose from: design, heldout, heldout-2, round-2, all")
    assert_user_error(cli("run", "--model", "scripted/oracle", "--set", "round-2"), "unknown set 'round-2'")


def test_version_names_the_release_and_the_checkouts_commit(cli):
    code, out, _ = cli("--version")
    assert code == 0 and re.fullmatch(r"armbench \d+\.\d+\.\d+ \(commit [0-9a-f]{12}\)\n", out), out


def test_an_install_outside_a_checkout_has_no_commit_even_inside_another_repository(tmp_path, monkeypatch):
    """A wheel installed in a venv inside someone's git project must not report their commit."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q", "--allow-empty", "-m", "theirs"],
                   cwd=tmp_path, check=True)
    (tmp_path / "venv" / "site-packages").mkdir(parents=True)
    monkeypatch.setattr(provenance, "ROOT", tmp_path / "venv" / "site-packages")
    assert provenance.git_commit() is None
