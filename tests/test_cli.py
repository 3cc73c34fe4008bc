"""The `bench` command as a user runs it: exit codes and messages, never a traceback."""
import json
import os
import shlex
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from harness.paths import QUESTIONS_DIR

BENCH = [sys.executable, "-m", "harness.cli"]


def bench(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    environment = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environment.update(env or {})
    return subprocess.run([*BENCH, *args], capture_output=True, text=True, env=environment, timeout=300)


def assert_user_error(result: subprocess.CompletedProcess, *needles: str) -> None:
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    for needle in needles:
        assert needle in result.stderr


@pytest.fixture
def bank(tmp_path):
    target = tmp_path / "questions"
    shutil.copytree(QUESTIONS_DIR, target)
    return target


def test_run_all_gpu_sets_three_times_is_30_of_30(tmp_path):
    out = tmp_path / "x"
    result = bench("run", "--arm", "tooled", "--set", "all", "--domain", "gpus",
                   "--model", "scripted/oracle", "--runs", "3", "--out", str(out), "--quiet")
    assert result.returncode == 0, result.stderr
    assert "15/15" in result.stdout
    records = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert len(records) == 30 and all(r["correct"] for r in records)
    assert (out / "report.md").exists() and (out / "runs.parquet").exists()

    as_json = bench("report", str(out), "--json")
    rows = json.loads(as_json.stdout)
    assert [(r["set"], r["correct"], r["graded"]) for r in rows] == [("design", 15, 15), ("heldout", 15, 15)]


def test_unknown_set_arm_domain_and_model(tmp_path):
    assert_user_error(bench("run", "--model", "scripted/oracle", "--set", "nosuch"), "unknown set 'nosuch'")
    assert_user_error(bench("run", "--model", "scripted/oracle", "--arm", "nosuch"), "unknown arm")
    assert_user_error(bench("run", "--model", "scripted/oracle", "--domain", "nosuch"), "unknown domain")
    assert_user_error(bench("run", "--model", "scripted/nosuch"), "no script 'nosuch'")


def test_missing_api_key_for_a_real_provider():
    assert_user_error(bench("run", "--model", "openai/gpt-4o-mini"), "OPENAI_API_KEY")


def test_bad_flag_value_is_a_usage_error():
    result = bench("run", "--model", "scripted/oracle", "--runs", "zero")
    assert result.returncode == 2 and "Traceback" not in result.stderr


def test_malformed_yaml(bank):
    (bank / "gpus" / "design.yaml").write_text("questions: [\n  - id: x\n")
    result = bench("run", "--model", "scripted/oracle", env={"ARMBENCH_QUESTIONS_DIR": str(bank)})
    assert_user_error(result, "not valid YAML")


def test_unknown_question_field(bank):
    path = bank / "gpus" / "heldout.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][0]["hint"] = "try gpu_query"
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    result = bench("questions", "verify", env={"ARMBENCH_QUESTIONS_DIR": str(bank)})
    assert_user_error(result, "gpus-heldout-01: hint: unknown field")


def test_verify_passes_then_names_a_changed_reference(bank):
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    ok = bench("questions", "verify", env=env)
    assert ok.returncode == 0 and "match" in ok.stdout
    path = bank / "gpus" / "design.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][1]["answer"] = ["H200 NVL"]
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    failed = bench("questions", "verify", env=env)
    assert failed.returncode == 1
    assert "gpus-design-02" in failed.stderr and "gpus-design-01" not in failed.stderr


def test_run_refuses_an_unlocked_set_unless_allowed(bank, tmp_path):
    env = {"ARMBENCH_QUESTIONS_DIR": str(bank)}
    path = bank / "gpus" / "design.yaml"
    raw = yaml.safe_load(path.read_text())
    raw["questions"][0]["text"] += " Answer carefully."
    path.write_text(yaml.safe_dump(raw, sort_keys=False))
    refused = bench("run", "--model", "scripted/oracle", "--set", "design", "--out", str(tmp_path / "a"), env=env)
    assert_user_error(refused, "gpus/design", "questions.lock")
    allowed = bench("run", "--model", "scripted/oracle", "--set", "design", "--allow-unlocked",
                    "--out", str(tmp_path / "b"), "--quiet", env=env)
    assert allowed.returncode == 0, allowed.stderr
    frozen = bench("questions", "freeze", env=env)
    assert frozen.returncode == 0
    assert "gpus/design" in json.loads((bank / "questions.lock").read_text())


def test_report_on_a_folder_that_is_not_a_run_set(tmp_path):
    assert_user_error(bench("report", str(tmp_path)), "not a run set")


def test_an_mcp_server_that_cannot_start_stops_the_run_before_it_starts(tmp_path, serve_gpus):
    broken = shlex.join([*serve_gpus[:-1], "nosuch"])
    result = bench("run", "--model", "scripted/oracle", "--tools", f"mcp:{broken}", "--out", str(tmp_path / "x"))
    assert_user_error(result, "could not start or reach the MCP server", "no typed tools for domain 'nosuch'")
    assert not (tmp_path / "x").exists()


def test_mcp_serve_on_a_busy_port_is_one_message():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        result = bench("mcp", "serve", "gpus", "--http", str(busy.getsockname()[1]))
    assert_user_error(result, "cannot listen on 127.0.0.1:")
