"""`bench synthesize` and the synthesized arm, as a user runs them, offline: the scripted synthesis
models build real tools, which then run in the sandbox for every call of a run."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import armbench
from armbench.arms.frozen_tool import freeze, load_frozen_tool
from armbench.players.script_registry import Reply, ScriptedToolCall, register_script
from armbench.tools.synthesized import ToolSpec
from armbench.tools.web_tools import PythonTool
from armbench.tools.workshop import Workshop


def transcript(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "transcript.jsonl").read_text().splitlines()]


def runs(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "runs.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def broken_tool(tmp_path_factory) -> Path:
    """scripted/synth-broken's tool, built once: each try of it fails in another way (2 s call timeout)."""
    folder = tmp_path_factory.mktemp("synthesis") / "broken"
    synthesis = armbench.synthesize("scripted/synth-broken", "gpus", out=folder, tool_timeout=2)
    assert synthesis.tool is not None, synthesis.record.failure
    return folder


def test_each_way_a_tool_fails_reaches_the_model_as_a_tool_error(broken_tool, gpu_design):
    record = json.loads((broken_tool / "synthesis.json").read_text())
    assert record["stop_reason"] == "submitted" and record["failure"] is None
    assert record["actions_by_tool"] == {"write_tool": 1, "try_tool": 3, "submit_tool": 1}
    errors = [json.loads(m["content"]).get("error", {}).get("type") for m in transcript(broken_tool) if m["role"] == "tool"]
    assert errors == [None, "tool_failure", "timeout", "result_too_large", None]
    frozen = load_frozen_tool(broken_tool)
    assert (frozen.domain, frozen.spec.name, frozen.spec.sha256) == ("gpus", "broken_query", record["tool_sha256"])
    assert record["question_set_hash"] == gpu_design.content_hash()  # the questions it saw, named


def test_the_synthesis_prompt_holds_the_design_answers_and_no_held_out_question(broken_tool, gpu_design, gpu_heldout):
    prompt = transcript(broken_tool)[1]["content"]
    for question in gpu_design.questions:
        assert question.text in prompt and question.join_answer(question.answer) in prompt
    assert not any(question.text in prompt for question in gpu_heldout.questions)
    assert "127.0.0.1" not in prompt  # the task names no port: the system prompt's resources do


@pytest.mark.slow
def test_the_synthesized_arm_survives_a_broken_tool_and_records_its_hash(broken_tool, tmp_path, script_registry):
    @register_script("call-broken")
    def call_broken(turn):
        made = len(turn.tool_results())
        if made < 3:
            return Reply(tool_calls=[ScriptedToolCall("broken_query", {"mode": ["raise", "hang", "huge"][made]})])
        return Reply(text="ANSWER: nothing")

    out = tmp_path / "set"
    result = armbench.run("scripted/call-broken", domains=["gpus"], sets=["design"], arms=["synthesized"],
                          questions=["gpus-design-01"], tool_from=[broken_tool], tool_timeout=2, out=out)
    record = runs(out)[0]
    sha = load_frozen_tool(broken_tool).spec.sha256
    assert result.graded == 1 and record["correct"] is False and record["error_kind"] is None
    assert record["tool_errors"] == 3 and record["synthesized_tool_hash"] == sha
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["synthesized_tools"]["gpus"]["sha256"] == sha
    assert manifest["config"]["tool_timeout"] == 2


@pytest.mark.slow
def test_resume_refuses_another_tool(broken_tool, tmp_path, cli):
    out = tmp_path / "set"
    plan = ["run", "--model", "scripted/oracle", "--arm", "synthesized", "--domain", "gpus", "--question",
            "gpus-design-01", "--quiet"]
    assert cli(*plan, "--tool-from", str(broken_tool), "--out", str(out))[0] == 0
    other = tmp_path / "other"
    original = load_frozen_tool(broken_tool).spec
    freeze(ToolSpec(original.name, original.description + " Reworded.", original.parameters, original.source),
           "gpus", other)
    code, _, err = cli(*plan, "--tool-from", str(other), "--resume", str(out))
    assert code == 2 and "synthesized tool for gpus (--tool-from): sha256" in err
    code, _, err = cli(*plan, "--resume", str(out))
    assert code == 2 and "needs a tool for gpus" in err


def test_bad_tool_folders_and_flag_combinations_are_one_message_each(broken_tool, tmp_path, cli):
    tampered = tmp_path / "tampered"
    shutil.copytree(broken_tool, tampered)
    (tampered / "tool" / "tool.py").write_text("def broken_query(mode='raise'):\n    return {}\n")
    cases = [
        (["--tool-from", str(tmp_path / "nowhere")], "no frozen tool there"),
        (["--tool-from", str(tampered)], "was changed after it was frozen"),
        (["--arm", "tooled", "--tool-from", str(broken_tool)], "add --arm synthesized"),
        (["--arm", "synthesized"], "needs a tool for gpus"),
        (["--domain", "gpus,funds", "--tool-from", str(broken_tool)], "needs a tool for funds"),
        (["--domain", "funds", "--tool-from", str(broken_tool)], "which this run set does not ask about"),
        (["--tool-from", str(broken_tool), "--tool-timeout", "0"], "--tool-timeout must be a number more than 0"),
    ]
    for flags, message in cases:
        arguments = ["run", "--model", "scripted/oracle", "--out", str(tmp_path / "unused"), *flags]
        if "--domain" not in flags:
            arguments += ["--domain", "gpus"]
        code, _, err = cli(*arguments)
        assert code == 2 and message in err, (flags, err)
    assert not (tmp_path / "unused").exists()


@pytest.mark.slow
def test_a_synthesis_that_submits_nothing_exits_1_and_says_why(tmp_path, cli):
    code, _, err = cli("synthesize", "--domain", "gpus", "--model", "scripted/oracle", "--out", str(tmp_path / "a"))
    assert code == 1 and "the model stopped without calling submit_tool" in err
    assert json.loads((tmp_path / "a" / "synthesis.json").read_text())["tool_sha256"] is None
    assert not (tmp_path / "a" / "tool").exists()
    code, _, err = cli("synthesize", "--domain", "gpus", "--model", "scripted/synth-broken", "--budget", "2",
                       "--out", str(tmp_path / "b"), "--tool-timeout", "2")
    assert code == 1 and "the budget of 2 tool calls ran out before submit_tool" in err


def test_synthesize_refuses_bad_input_before_anything_starts(broken_tool, tmp_path, cli):
    cases = [
        (["--domain", "nosuch"], "no domain 'nosuch'"),
        (["--domain", "gpus", "--out", str(broken_tool)], "holds a synthesis or a tool already"),
        (["--domain", "gpus", "--model", "scripted/nosuch"], "no script 'nosuch'"),
        (["--domain", "gpus", "--max-cost", "-1"], "--max-cost must be a number more than 0"),
    ]
    for flags, message in cases:
        arguments = ["synthesize", "--model", "scripted/synth-broken", "--out", str(tmp_path / "unused"), *flags]
        code, _, err = cli(*arguments)
        assert code == 2 and message in err, (flags, err)


@pytest.mark.slow
def test_record_writes_the_synthesis_recording(tmp_path, cli):
    folder = tmp_path / "recorded"
    code, out, _ = cli("synthesize", "--domain", "gpus", "--model", "scripted/synth-broken", "--record",
                       "--tool-timeout", "2", "--out", str(folder))
    assert code == 0 and "tool broken_query frozen in" in out
    lines = (folder / "recording" / "synthesis.jsonl").read_text().splitlines()
    assert len(lines) == 5  # one model call per tool call; the episode ends with submit_tool


@pytest.mark.slow
def test_synth_oracles_gpu_tool_answers_every_held_out_question_and_the_report_has_three_arms(tmp_path, cli):
    """The issue's acceptance: the known-good tool, built by scripted/synth-oracle, answers the GPU
    held-out set through the sandbox (5/5 with scripted/oracle), beside browsing and tooled."""
    folder = tmp_path / "synth-gpus"
    code, out, _ = cli("synthesize", "--domain", "gpus", "--model", "scripted/synth-oracle", "--out", str(folder))
    assert code == 0 and "tool gpu_query frozen in" in out
    tries = [json.loads(m["content"]) for m in transcript(folder) if m.get("name") == "try_tool"]
    assert tries and "rows" in tries[0]  # tried on a design question's arguments first
    held_out = tmp_path / "held-out"
    code, _, _ = cli("run", "--arm", "synthesized", "--tool-from", str(folder), "--model", "scripted/oracle",
                     "--set", "heldout", "--domain", "gpus", "--out", str(held_out), "--quiet")
    assert code == 0
    assert [r["correct"] for r in runs(held_out)] == [True] * 5
    assert all(r["actions_by_tool"] == {"gpu_query": 1} for r in runs(held_out))  # the synthesized tool answered
    # The three arms side by side on a design and a held-out question (the browsing arm's crawls and the
    # tool's, all at once on 2 cores, are kept to two questions).
    run_set = tmp_path / "three-arms"
    code, _, _ = cli("run", "--tool-from", str(folder), "--model", "scripted/oracle", "--domain", "gpus",
                     "--question", "gpus-design-01,gpus-heldout-02", "--out", str(run_set), "--quiet")
    assert code == 0
    assert sorted((r["arm"], r["set"], r["correct"]) for r in runs(run_set)) == [
        (arm, name, True) for arm in ("browsing", "synthesized", "tooled") for name in ("design", "heldout")]
    report = (run_set / "report.md").read_text()
    assert "Transfer: design questions" in report and "Synthesized tools, and what building each cost" in report
    assert load_frozen_tool(folder).spec.sha256[:12] in report and str(folder / "tool" / "tool.py") in report


async def test_try_tool_shows_what_the_arm_would_and_a_tools_own_error_details(arm_env):
    python = next(tool for tool in arm_env.web("gpus") if isinstance(tool, PythonTool))
    workshop = Workshop(python, arm_env.target("gpus").base_url, ["python"], timeout_s=20)
    write, try_tool, _submit = workshop.tools()
    schema = json.dumps({"type": "object", "properties": {"n": {"type": "integer"}}})
    source = ("def t(n=0):\n    if n < 0:\n        return {'error': {'type': 'bad_n', 'message': 'n < 0', 'kind': 'x'}}\n"
              "    return {'rows': 'x' * n}\n")
    written = await write.invoke({"name": "t", "description": "d", "parameters": schema, "source": source})
    assert not written.is_error, written.result
    just_under = 63_980  # the arm takes a result of this size; try_tool must as well
    assert not (await try_tool.invoke({"arguments": json.dumps({"n": just_under})})).is_error
    own = await try_tool.invoke({"arguments": '{"n": -1}'})
    assert own.result == {"error": {"type": "bad_n", "message": "n < 0", "kind": "x"}}
    clash = await write.invoke({"name": "python", "description": "d", "parameters": schema, "source": source})
    assert "already have" in json.dumps(clash.result)
    address = arm_env.target("gpus").base_url.removeprefix("http://")
    pinned = await write.invoke({"name": "t", "description": "d", "parameters": schema,
                                 "source": source + f"URL = 'http://{address}/gpus'\n"})
    assert "read REPLICA_URL instead" in json.dumps(pinned.result)


@pytest.mark.slow
def test_hand_made_tools_that_cannot_be_loaded_are_one_message(broken_tool, tmp_path, cli):
    def variant(name: str, **changes) -> Path:
        folder = tmp_path / name
        shutil.copytree(broken_tool, folder)
        spec_path = folder / "tool" / "tool.json"
        spec = {**json.loads(spec_path.read_text()), **changes}
        spec_path.write_text(json.dumps(spec))
        return folder

    deep = tmp_path / "deep"
    shutil.copytree(broken_tool, deep)
    (deep / "tool" / "tool.py").write_text("x = " + "+".join(["1"] * 25_000) + "\n")  # nested too deep for ast
    renamed = load_frozen_tool(broken_tool).spec
    python = tmp_path / "python"
    freeze(ToolSpec("python", renamed.description, renamed.parameters,
                    renamed.source.replace("def broken_query", "def python")), "gpus", python)
    cases = [
        (deep, "source does not compile"),
        (variant("null", description=None), "needs name, description, domain, sha256 as text"),
        (variant("listed", parameters="{}"), "parameters as an object"),
        (python, "two tools named python"),
    ]
    for folder, message in cases:
        code, _, err = cli("run", "--model", "scripted/oracle", "--domain", "gpus", "--question", "gpus-design-01",
                           "--tool-from", str(folder), "--out", str(tmp_path / "unused"), "--quiet")
        assert code == 2 and message in err, (folder.name, err)


@pytest.mark.slow
def test_resume_refuses_another_tool_timeout(broken_tool, tmp_path, cli):
    out = tmp_path / "set"
    plan = ["run", "--model", "scripted/oracle", "--arm", "synthesized", "--domain", "gpus", "--question",
            "gpus-design-01", "--tool-from", str(broken_tool), "--quiet"]
    assert cli(*plan, "--out", str(out))[0] == 0
    code, _, err = cli(*plan, "--tool-timeout", "30", "--resume", str(out))
    assert code == 2 and "--tool-timeout: the run set allowed 60.0 s per call, this command 30" in err
