"""A fourth arm is one ArmKind subclass and one register_arm line: it is a choice of `--arm`, its runs
are planned, played, graded, hashed and reported like any arm's, and nothing else names it."""
from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel

import armbench
from armbench.arms import ARMS, ArmKind, default_arms, register_arm
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.tools.base import Tool

QUESTION = "gpus-design-01"


class SumArgs(BaseModel):
    numbers: list[float]


class Calculator(Tool):
    name = "calculator"
    description = "Adds numbers."
    Args = SumArgs

    async def run(self, args: SumArgs) -> dict[str, Any]:
        return {"sum": sum(args.numbers)}


class CalculatorArm(ArmKind):
    """Browsing plus a calculator: the toy fourth arm."""

    name = "calculator"
    added_tools_use_replica = False

    def added(self, env, domain, web):
        return [Calculator()]


@pytest.fixture
def calculator_arm():
    register_arm(CalculatorArm())
    yield
    del ARMS["calculator"]


@pytest.mark.slow
def test_a_registered_arm_runs_grades_and_reports_like_the_others(calculator_arm, tmp_path, cli):
    assert "calculator" in default_arms(with_synthesized_tool=False)
    out = tmp_path / "set"
    result = armbench.run("scripted/oracle", domains=["gpus"], sets=["design"], arms=["browsing", "calculator"],
                          questions=[QUESTION], out=out)
    assert (result.correct, result.graded) == (2, 2)  # the oracle plays the browsing solution in both
    by_arm = {record.arm: record for record in result.records}
    manifest = json.loads((out / "manifest.json").read_text())
    hashes = manifest["tool_manifests"]
    assert hashes["calculator/gpus"] != hashes["browsing/gpus"]  # a calculator more is another arm
    assert by_arm["calculator"].tool_manifest_hash == hashes["calculator/gpus"]
    assert [(row.arm, row.accuracy) for row in armbench.report(out).rows] == [("browsing", 1.0), ("calculator", 1.0)]
    code, printed, _ = cli("report", str(out))
    assert code == 0 and "calculator" in printed


@pytest.mark.slow
def test_the_arms_added_tool_is_offered_and_called(calculator_arm, tmp_path, script_registry):
    @register_script("add-up")
    def add_up(turn):
        if not turn.tool_results():
            return Reply(tool_calls=[ScriptedToolCall("calculator", {"numbers": [1, 2]})])
        return Reply(text="ANSWER: 3")

    out = tmp_path / "set"
    [record] = armbench.run("scripted/add-up", domains=["gpus"], sets=["design"], arms=["calculator"],
                            questions=[QUESTION], out=out).records
    messages = [json.loads(line) for line in (out / record.transcript_path).read_text().splitlines()]
    assert [json.loads(m["content"]) for m in messages if m["role"] == "tool"] == [{"sum": 3.0}]


def test_an_arm_name_is_registered_once():
    with pytest.raises(ValueError, match="an arm named 'tooled' is registered already"):
        register_arm(type("Twin", (ArmKind,), {"name": "tooled"})())
