"""Run-engine throughput, measured in one run (compare ratios, not absolute numbers, across machines).

1. runs/s with the zero-latency scripted oracle at concurrency 1, 4 and 16;
2. 100 runs at concurrency 20 with 1 s of simulated model latency (an asyncio sleep per call):
   wall time against the ideal, sum(model calls x latency) / concurrency (target <= 1.10x);
3. the same small task in inspect_ai — its mock model plays the oracle's policy (the stored tool
   call, then the answer from the tool's result) with gpu_query as an inspect tool, every sample
   scored and logged to disk — and the ratio of armbench's throughput to inspect_ai's at
   concurrency 4 (target >= 2x).
"""
from __future__ import annotations

import asyncio
import datetime as dt
import os
import tempfile
import time
from pathlib import Path

from figures import record

from armbench.engine.runner import run_set
from armbench.engine.store import RunSetStore
from armbench.models import get_model
from armbench.players.script_registry import Turn
from armbench.questions import QuestionSet, load_sets
from armbench.types import RunConfig

LATENCY = 1.0
TARGET_RATIO = 1.10
TARGET_OVER_INSPECT = 2.0


async def timed_set(question_sets: list[QuestionSet], config: RunConfig) -> tuple[float, list]:
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = await run_set(question_sets, config, RunSetStore(Path(folder) / "set"), show_progress=False,
                               model=get_model(config.model))
        return time.perf_counter() - started, result.records


def runs_per_second(question_sets: list[QuestionSet], model: str, runs: int, concurrency: int) -> float:
    config = RunConfig(model=model, arms=["tooled"], runs=runs, concurrency=concurrency)
    elapsed, records = asyncio.run(timed_set(question_sets, config))
    return len(records) / elapsed


def episodes_span(records: list) -> float:
    """Seconds from the first episode's start to the last record (records carry their end and length):
    a run set's wall time less its start-up (replicas, Chromium) and its ending."""
    ends = [dt.datetime.fromisoformat(record.finished_at).timestamp() for record in records]
    return max(ends) - min(end - record.wall_seconds for end, record in zip(ends, records))


def latency_run(question_sets: list[QuestionSet]) -> tuple[int, float, float, float, float]:
    """Runs, wall seconds, the episodes' span, the ideal wall seconds, and this process's CPU seconds."""
    planned = sum(len(qs.questions) for qs in question_sets)
    config = RunConfig(model=f"scripted/oracle+latency={LATENCY:g}", arms=["tooled"],
                       runs=100 // planned, concurrency=20)
    cpu = time.process_time()
    elapsed, records = asyncio.run(timed_set(question_sets, config))
    model_calls = sum(len(r.call_providers) for r in records)
    ideal = model_calls * LATENCY / config.concurrency
    return len(records), elapsed, episodes_span(records), ideal, time.process_time() - cpu


def inspect_runs_per_second(question_sets: list[QuestionSet], epochs: int, concurrency: int) -> float:
    """The same task in inspect_ai: its mock model plays the oracle's policy (one tool call from
    the stored solution, then the answer read off the tool's result), gpu_query runs for real
    behind inspect's tool API, and every sample is scored and logged to disk."""
    from inspect_ai import Task
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput
    from inspect_ai.model import get_model as inspect_model
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate, use_tools
    from inspect_ai.tool import tool

    from armbench.domains.gpus.tools import GpuQuery
    from armbench.players.scripts import play_solution  # after run_set's get_model has configured LiteLLM

    @tool
    def gpu_query():
        async def execute(
            filters: list[dict] | None = None,
            sort_by: str | None = None,
            order: str = "desc",
            fields: list[str] | None = None,
            limit: int = 50,
            aggregate: dict | None = None,
        ) -> str:
            """Query the GPU table (armbench's gpu_query behind inspect's tool API).

            Args:
                filters: Conditions that must all hold.
                sort_by: Field to sort rows by.
                order: asc or desc.
                fields: Fields to return per row.
                limit: Rows to return.
                aggregate: One aggregate over all matched rows.
            """
            arguments = {"filters": filters or [], "sort_by": sort_by, "order": order,
                         "fields": fields, "limit": limit, "aggregate": aggregate}
            outcome = await GpuQuery().invoke(arguments)
            return outcome.to_message_content()

        return execute

    def oracle(messages, tools, tool_choice, config) -> ModelOutput:
        turn = Turn(
            messages=[{"role": m.role, "content": m.text} for m in messages],
            tool_names=[t.name for t in tools],
        )
        reply = play_solution(turn)
        if reply.tool_calls:
            call = reply.tool_calls[0]
            return ModelOutput.for_tool_call("mockllm/model", call.name, call.arguments)
        return ModelOutput.from_content("mockllm/model", reply.text or "")

    samples = [Sample(input=q.prompt(), target=q.join_answer(q.answer))
               for qs in question_sets for q in qs.questions]
    task = Task(dataset=samples, solver=[use_tools(gpu_query()), generate()], scorer=includes(),
                epochs=epochs)
    model = inspect_model("mockllm/model", custom_outputs=oracle)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        [log] = inspect_eval(task, model=model, log_dir=folder, display="none", max_samples=concurrency)
        elapsed = time.perf_counter() - started
        assert log.status == "success", log.error
        return len(log.samples) / elapsed


def main() -> None:
    question_sets = load_sets(["gpus"])
    planned = sum(len(qs.questions) for qs in question_sets)
    runs_per_question = 100 // planned
    runs_per_second(question_sets, "scripted/oracle", 1, 4)  # warm-up: imports, caches
    rates = {c: runs_per_second(question_sets, "scripted/oracle", runs_per_question, c) for c in (1, 4, 16)}
    print(f"run engine: zero-latency oracle, {planned * runs_per_question} runs: "
          + ", ".join(f"concurrency {c}: {rate:.1f} runs/s" for c, rate in rates.items()))

    runs, elapsed, span, ideal, cpu = latency_run(question_sets)
    print(f"run engine: {runs} runs at concurrency 20 with {LATENCY:g} s model latency: wall "
          f"{elapsed:.2f} s, ideal {ideal:.2f} s, ratio {elapsed / ideal:.3f}x (target <= {TARGET_RATIO}x); "
          f"episodes alone {span:.2f} s, ratio {span / ideal:.3f}x; harness CPU {cpu:.2f} s; "
          f"machine load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    record("engine, 1 s latency, concurrency 20 / ideal", elapsed / ideal, "x", TARGET_RATIO)
    record("engine, 1 s latency, episodes alone / ideal", span / ideal, "x")
    record("engine, zero latency, concurrency 4", rates[4], "runs/s")

    inspect_runs_per_second(question_sets, 1, concurrency=4)  # warm-up, as for armbench above
    theirs = inspect_runs_per_second(question_sets, runs_per_question, concurrency=4)
    print(f"same task in inspect_ai (mockllm playing the oracle, gpu_query as an inspect tool), "
          f"{planned * runs_per_question} samples at concurrency 4: {theirs:.1f} samples/s; "
          f"armbench/inspect_ai throughput ratio {rates[4] / theirs:.2f} (target >= {TARGET_OVER_INSPECT}x)")
    record("armbench / inspect_ai throughput, conc. 4", rates[4] / theirs, "x", TARGET_OVER_INSPECT, at_least=True)


if __name__ == "__main__":
    main()
