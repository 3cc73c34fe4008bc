"""Run sets built record by record, with misses no scripted policy makes."""
import json

from armbench.engine.store import RunSetStore
from armbench.types import Manifest, RunRecord

HOSTILE = "<script>alert('pwned')</script> & <b>bold</b>"


def make_record(**fields) -> RunRecord:
    defaults = dict(
        run_id="q.tooled.r0", question_id="q", domain="gpus", set="design", arm="tooled", repeat=0,
        model="m", provider="p", answer="x", correct=True, outcome="fully_correct", miss_reason=None,
        stop_reason="answered", error=None, error_kind=None, cost_usd=0.001, prompt_tokens=1000,
        completion_tokens=100, actions=1, actions_by_tool={"gpu_query": 1}, tool_errors=0,
        wall_seconds=2.0, model_seconds=1.5, tool_seconds=0.5, question_set_hash="a",
        tool_manifest_hash="b", data_hash="c", prompt_hash="d", transcript_path="transcripts/none.jsonl",
    )
    defaults.update(fields)
    if "run_id" not in fields:
        defaults["run_id"] = f"{defaults['question_id']}.{defaults['arm']}.r{defaults['repeat']}"
    return RunRecord(**defaults)


def make_manifest(**fields) -> Manifest:
    defaults = dict(
        created="2026-01-01T00:00:00+00:00", model="m", config={"arms": ["browsing", "tooled"], "runs": 1},
        git_commit=None, question_sets={"gpus/design": "a", "gpus/heldout": "a"}, tool_manifests={}, replicas={},
        data_hash="c", prompt_hash="d",
        versions={},
    )
    return Manifest(**{**defaults, **fields})


def browsing_run(index: int, repeat: int, question) -> dict:
    """Browsing misses questions 0 and 5 (out of budget) and question 1 once (wrong separator)."""
    if index % 5 == 0:
        return dict(answer=None, correct=False, outcome="no_answer", miss_reason="no_answer_budget",
                    stop_reason="budget", actions=24, actions_by_tool={"browser": 20, "python": 4},
                    cost_usd=0.03, prompt_tokens=30_000, completion_tokens=1_000)
    calls = 10 + index
    run = dict(answer=question.join_answer(question.answer), actions=calls,
               actions_by_tool={"browser": calls - 2, "python": 2}, cost_usd=0.014,
               prompt_tokens=12_000, completion_tokens=600)
    if index == 1 and repeat == 0:
        run.update(answer=", ".join(question.answer), correct=False, outcome="fully_incorrect",
                   miss_reason="wrong_separator")
    return run


def tooled_run(index: int, repeat: int, question) -> dict:
    """Tooled is right every time, but question 9's last repeat is an infra error."""
    if index == 9 and repeat == 2:
        return dict(answer=None, correct=None, outcome=None, stop_reason="infra_error",
                    error="RateLimitError: scripted 429", error_kind="infra", actions=0,
                    actions_by_tool={}, cost_usd=0.0, prompt_tokens=800, completion_tokens=0)
    return dict(answer=question.join_answer(question.answer), actions=1 + index % 2,
                actions_by_tool={"gpu_query": 1 + index % 2}, cost_usd=0.0011,
                prompt_tokens=1_500, completion_tokens=120)


def transcript(question, run: dict) -> list[dict]:
    messages = [{"role": "system", "content": "You are a careful research agent."},
                {"role": "user", "content": question.prompt()}]
    for number, (tool, count) in enumerate(sorted(run["actions_by_tool"].items())):
        for call in range(count):
            call_id = f"call_{number}_{call}"
            messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": call_id, "type": "function", "function": {"name": tool, "arguments": '{"q": "gpu"}'}}]})
            messages.append({"role": "tool", "tool_call_id": call_id, "name": tool,
                             "content": json.dumps({"rows": [{"name": HOSTILE}]})})
    if run.get("answer"):
        messages.append({"role": "assistant", "content": f"ANSWER: {run['answer']}"})
    return messages


def build_two_arm_run_set(directory, design, heldout, runs: int = 3) -> RunSetStore:
    store = RunSetStore(directory)
    store.create(make_manifest(model="scripted/fixture", question_sets={
        design.key: design.content_hash(), heldout.key: heldout.content_hash()}))
    questions = [(q, qs) for qs in (design, heldout) for q in qs.questions]
    for index, (question, question_set) in enumerate(questions):
        for arm, make in (("browsing", browsing_run), ("tooled", tooled_run)):
            for repeat in range(runs):
                run = make(index, repeat, question)
                run_id = f"{question.id}.{arm}.r{repeat}"
                path = store.write_transcript(run_id, transcript(question, run))
                store.append(make_record(
                    run_id=run_id, question_id=question.id, domain=question.domain, set=question.set,
                    arm=arm, repeat=repeat, model="scripted/fixture",
                    question_set_hash=question_set.content_hash(), transcript_path=path, **run,
                ))
    return store
