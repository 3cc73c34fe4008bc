"""Adding a domain is one folder, one registration and its question files: a toy domain from a
tiny CSV, written to a temporary directory and registered through ARMBENCH_DOMAINS, runs
`scripted/oracle` in both arms, 100% correct, without a change to any file of the project."""
import json
import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
import yaml

from armbench.paths import ROOT
from tests.support import forked_bench

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
ORACLE_RUNS = 4  # 2 questions x 2 arms


def browsing_code(port: int, keep: str) -> str:
    return textwrap.dedent(f"""\
        import re, urllib.request
        page = urllib.request.urlopen("http://127.0.0.1:{port}/planets", timeout=20).read().decode()
        for name, moons, rings in re.findall(r"<tr><th>(\\w+)</th><td>(\\d+)</td><td>(\\w+)</td></tr>", page):
            moons, rings = int(moons), rings == "True"
            if {keep}:
                print(name)
        """)


def question(number: int, set_name: str, text: str, answer: list[str], sql: str, args: dict, keep: str,
             port: int) -> dict:
    return {
        "id": f"planets-{set_name}-{number:02d}", "created": "2026-12-01", "text": text, "answer": answer,
        "answer_format": "planet names as the fact sheet writes them", "derivation": {"sql": sql},
        "solutions": {
            "tooled": {"calls": [{"tool": "planet_query", "args": args}], "answer": {"from": "rows", "field": "name"}},
            "browsing": {"calls": [{"tool": "python", "args": {"code": browsing_code(port, keep)}}],
                         "answer": {"from": "stdout"}},
        },
    }


def write_questions(root: Path, port: int) -> None:
    sets = {
        "design": question(1, "design", "Which planets have rings and more than 20 moons?",
                           ["Jupiter", "Saturn", "Uranus"],
                           "SELECT name FROM planets WHERE has_rings AND moons > 20",
                           {"min_moons": 21, "has_rings": True}, "rings and moons > 20", port),
        "heldout": question(1, "heldout", "Which planets have no moons?", ["Mercury", "Venus"],
                            "SELECT name FROM planets WHERE moons = 0",
                            {"max_moons": 0}, "moons == 0", port),
    }
    (root / "planets").mkdir(parents=True)
    for set_name, entry in sets.items():
        document = {"domain": "planets", "set": set_name, "questions": [entry]}
        (root / "planets" / f"{set_name}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))


def project_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                          capture_output=True, text=True, check=True).stdout


@pytest.mark.slow
def test_a_domain_from_one_folder_runs_the_oracle_in_both_arms(tmp_path, replica_env):
    before = project_status()
    shutil.copytree(FIXTURES / "planets_domain", tmp_path / "domains")
    env = forked_bench.keyless_env(PYTHONPATH=str(tmp_path / "domains"), ARMBENCH_DOMAINS="planets",
                                   ARMBENCH_QUESTIONS_DIR=str(tmp_path / "questions"))

    def bench(*args: str) -> subprocess.CompletedProcess:
        result = forked_bench.run(args, env=env, timeout=300)
        assert result.returncode == 0, result.stdout + result.stderr
        return result

    built = bench("data", "build", "--source", str(FIXTURES), "--domain", "planets")
    assert "planets.parquet" in built.stdout
    port = int(os.environ["ARMBENCH_REPLICA_PORT_BASE"]) + 90
    write_questions(tmp_path / "questions", port)
    bench("questions", "freeze")  # verifies each reference against the table first
    assert set(json.loads((tmp_path / "questions/questions.lock").read_text())) == {"planets/design", "planets/heldout"}

    bench("run", "--model", "scripted/oracle", "--arm", "all", "--set", "all", "--domain", "planets",
          "--out", str(tmp_path / "run"), "--quiet")

    records = [json.loads(line) for line in (tmp_path / "run/runs.jsonl").read_text().splitlines()]
    assert len(records) == ORACLE_RUNS
    assert {(r["arm"], r["correct"]) for r in records} == {("browsing", True), ("tooled", True)}
    assert {r["actions_by_tool"].get("planet_query") for r in records if r["arm"] == "tooled"} == {1}
    assert project_status() == before


BAD_DOMAIN_PACKAGES = {
    "raises": ('raise RuntimeError("boom")', "cannot load a DOMAIN from 'raises' (RuntimeError: boom)"),
    "syntax": ("DOMAIN = (", "cannot load a DOMAIN from 'syntax' (SyntaxError"),
    "not_a_domain": ("DOMAIN = 3", "not_a_domain.DOMAIN is a int, not a Domain"),
    "bad_offset": ("from armbench.domains.spec import Domain\n"
                   "DOMAIN = Domain.in_folder(__file__, name='bad', title='t', port_offset=500, app='m:f', "
                   "tools='m:t', build='m:b')", "port_offset 500 is outside 0-99"),
    "bad_reference": ("from armbench.domains.spec import Domain\n"
                      "DOMAIN = Domain.in_folder(__file__, name='bad', title='t', port_offset=91, app='m.f', "
                      "tools='m:t', build='m:b')", "app must be 'module:attribute', not 'm.f'"),
}


@pytest.mark.slow
def test_a_bad_domain_package_is_one_line_not_a_traceback(tmp_path):
    for name, (source, _) in BAD_DOMAIN_PACKAGES.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(source + "\n")
    for name, (_, message) in BAD_DOMAIN_PACKAGES.items():
        env = {**os.environ, "PYTHONPATH": str(tmp_path), "ARMBENCH_DOMAINS": name}
        result = forked_bench.run(["questions", "list"], env=env, timeout=60)
        assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
        assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_missing_question_bank_is_one_line(tmp_path):
    env = {**os.environ, "ARMBENCH_QUESTIONS_DIR": str(tmp_path / "nowhere")}
    result = forked_bench.run(["questions", "list"], env=env, timeout=60)
    assert result.returncode == 2 and "no question bank at" in result.stderr and "Traceback" not in result.stderr
