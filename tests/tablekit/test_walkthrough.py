"""docs/own-table.md, "Benchmark a tool on your own table", followed literally with the tests' 40-city CSV,
in a temporary domains and questions folder: scaffold, build, check, add the page's question,
verify, freeze, the oracle at 100% in both arms, and `bench mcp serve cities` offering cities_query.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys

import pytest
import yaml
from mcp import Client, StdioServerParameters

from armbench.paths import ROOT
from tests.support import forked_bench
from tests.support.doc_commands import page_commands

BENCH = [sys.executable, "-m", "armbench.cli"]
PAGE = ROOT / "docs" / "own-table.md"
CSV = ROOT / "tests" / "fixtures" / "cities.csv"


def walkthrough() -> str:
    return PAGE.read_text(encoding="utf-8")


def bench_commands() -> list[list[str]]:
    """The arguments of every `.venv/bin/bench ...` command the page shows, in order."""
    return [command.words[1:] for command in page_commands(PAGE) if command.words[0] == ".venv/bin/bench"]


def page_question(section: str) -> dict:
    (block,) = re.findall(r"```yaml\n(.*?)```", section, re.S)
    return yaml.safe_load(block)


@pytest.mark.slow
def test_the_docs_walkthrough(tmp_path, replica_env):
    env = forked_bench.keyless_env(ARMBENCH_DOMAINS_DIR=str(tmp_path / "domains"),
                                   ARMBENCH_QUESTIONS_DIR=str(tmp_path / "questions"))
    (tmp_path / "domains").mkdir()

    def bench(*args: str) -> subprocess.CompletedProcess:
        result = forked_bench.run(args, env=env, timeout=300, cwd=ROOT)
        assert result.returncode == 0, f"bench {' '.join(args)}:\n{result.stdout}{result.stderr}"
        return result

    section = walkthrough()
    commands = bench_commands()
    assert [command[:2] for command in commands] == [
        ["domain", "new"], ["data", "build"], ["domain", "check"], ["questions", "verify"],
        ["questions", "freeze"], ["run", "--domain"], ["mcp", "serve"]]
    new, build, check, verify, freeze, run, serve = commands

    bench(*new)
    bench(*build)
    assert bench(*check).stdout.startswith("ok: cities: 7 fields, 40 rows")

    design = tmp_path / "questions" / "cities" / "design.yaml"
    document = yaml.safe_load(design.read_text())
    assert document["questions"] == []
    question = yaml.safe_dump(page_question(section), sort_keys=False)
    design.write_text(design.read_text().replace("\nquestions: []\n", f"\n{question}", 1))
    bench(*verify)
    bench(*freeze)
    assert "cities/design" in json.loads((tmp_path / "questions" / "questions.lock").read_text())

    bench(*run, "--out", str(tmp_path / "run"), "--quiet")
    records = [json.loads(line) for line in (tmp_path / "run" / "runs.jsonl").read_text().splitlines()]
    assert {record["arm"] for record in records} == {"browsing", "tooled"}
    assert all(record["correct"] for record in records), [(r["run_id"], r["error"]) for r in records]
    assert all(r["actions_by_tool"].get("cities_query") for r in records if r["arm"] == "tooled")
    assert asyncio.run(tools_offered(serve, env)) == ["cities_query"]


async def tools_offered(serve: list[str], env: dict[str, str]) -> list[str]:
    """What `bench mcp serve ...` offers an MCP client over stdio."""
    async with Client(StdioServerParameters(command=BENCH[0], args=[*BENCH[1:], *serve], env=env, cwd=ROOT)) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


async def test_bench_mcp_serve_offers_the_table_tool(tmp_path):
    from armbench.domains import DOMAINS
    from armbench.tablekit.check import Taken
    from armbench.tablekit.scaffold import new_domain

    new_domain("cities", CSV, key=None, title=None, taken=Taken.of(DOMAINS.values()),
               domains_dir=tmp_path / "domains", questions_dir=tmp_path / "questions")
    env = {**os.environ, "ARMBENCH_DOMAINS_DIR": str(tmp_path / "domains"),
           "ARMBENCH_QUESTIONS_DIR": str(tmp_path / "questions")}
    server = StdioServerParameters(command=sys.executable, args=["-m", "armbench.cli", "mcp", "serve", "cities"],
                                   env=env)
    async with Client(server) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
    assert listed == ["cities_query"]


def test_a_broken_csv_is_one_line_and_writes_nothing(tmp_path):
    ragged = tmp_path / "ragged.csv"
    ragged.write_text("name,population\nLyon,522250\nParis\n")
    env = {**os.environ, "ARMBENCH_DOMAINS_DIR": str(tmp_path / "domains"),
           "ARMBENCH_QUESTIONS_DIR": str(tmp_path / "questions")}
    (tmp_path / "domains").mkdir()
    result = forked_bench.run(["domain", "new", "broken", "--csv", str(ragged)], env=env, timeout=120)
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "ragged.csv:3 has 1 values" in result.stderr
    assert list((tmp_path / "domains").iterdir()) == [] and not (tmp_path / "questions").exists()


def test_a_broken_domain_folder_leaves_the_others_working(tmp_path):
    """A typo in one table domain's domain.yaml: bench warns and runs the rest; naming it says why."""
    from armbench.domains import DOMAINS
    from armbench.tablekit.check import Taken
    from armbench.tablekit.scaffold import new_domain

    made = new_domain("cities", CSV, taken=Taken.of(DOMAINS.values()), domains_dir=tmp_path / "domains",
                      questions_dir=tmp_path / "questions")
    (made.folder / "domain.yaml").write_text("name: [")
    env = {**os.environ, "ARMBENCH_DOMAINS_DIR": str(tmp_path / "domains")}
    listed = forked_bench.run(["questions", "list"], env=env, timeout=120)
    assert listed.returncode == 0 and "gpus" in listed.stdout, listed.stderr
    assert listed.stderr.startswith("warning: a domain is left out:") and "domain.yaml is not valid YAML" in listed.stderr
    named = forked_bench.run(["run", "--domain", "cities", "--model", "scripted/oracle"], env=env, timeout=120)
    assert named.returncode == 2 and "Traceback" not in named.stderr
    assert named.stderr.splitlines()[-1].startswith("error: ") and "is not valid YAML" in named.stderr.splitlines()[-1]


def test_a_domain_folder_named_like_a_python_module_is_left_out(tmp_path):
    """A package `html` in ARMBENCH_DOMAINS_DIR would shadow the standard library's for every command."""
    (tmp_path / "html").mkdir()
    (tmp_path / "html" / "__init__.py").write_text("DOMAIN = 3\n")
    env = {**os.environ, "ARMBENCH_DOMAINS_DIR": str(tmp_path)}
    listed = forked_bench.run(["questions", "list"], env=env, timeout=120)
    assert listed.returncode == 0 and "Traceback" not in listed.stderr, listed.stderr
    assert "the package 'html' has the name of a Python module" in listed.stderr
