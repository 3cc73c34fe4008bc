"""How the analysis scales with a sweep's size: the per-group summary (`summarize`, what the report,
`--json`, run-set comparison and the regression gate read) and the whole set of report tables, over
15,000 synthetic run records (10 models' worth of a 3-arm, 10-domain sweep is of this order).

Run `python benchmarks/report_scale.py`; best of 5 runs each.
"""
from __future__ import annotations

import random
import time
from collections.abc import Callable

from figures import record

from armbench.analysis.report import report_tables
from armbench.analysis.summary import summarize
from armbench.types import MissReason, Outcome, RunRecord, StopReason

RECORDS = 15_000
RUNS = 5


def synthetic_records(count: int, seed: int = 0) -> list[RunRecord]:
    draw = random.Random(seed)
    records = []
    for index in range(count):
        correct = draw.choice([True, True, False, None])
        domain, set_name, arm = draw.choice(["gpus", "funds", "worldbank"]), draw.choice(["design", "heldout"]), draw.choice(["browsing", "tooled"])
        question = f"{domain}-{set_name}-{index % 10:02d}"
        actions = draw.randint(0, 24)
        records.append(RunRecord(
            run_id=f"{question}.{arm}.r{index}", question_id=question, domain=domain, set=set_name, arm=arm,
            repeat=index, model="m", provider="p", answer=None if correct is None else "x", correct=correct,
            outcome=None if correct is None else (Outcome.fully_correct if correct else Outcome.fully_incorrect),
            miss_reason=MissReason.wrong if correct is False else None,
            stop_reason=StopReason.infra_error if correct is None else StopReason.answered,
            error=None, error_kind=None, cost_usd=draw.random() / 100, prompt_tokens=draw.randint(500, 30_000),
            completion_tokens=draw.randint(50, 1_000), actions=actions,
            actions_by_tool={"gpu_query": actions} if actions else {}, tool_errors=0, wall_seconds=draw.random() * 60, model_seconds=1.0,
            tool_seconds=1.0, question_set_hash="a", tool_manifest_hash="b", data_hash="c", prompt_hash="d",
            transcript_path="t",
        ))
    return records


def best_ms(work: Callable[[], object]) -> float:
    timings = []
    for _ in range(RUNS):
        start = time.perf_counter()
        work()
        timings.append(time.perf_counter() - start)
    return min(timings) * 1000


def main() -> None:
    records = synthetic_records(RECORDS)
    summary_ms, tables_ms = best_ms(lambda: summarize(records)), best_ms(lambda: report_tables(records))
    print(f"analysis over {RECORDS:,} run records (best of {RUNS}): "
          f"per-group summary {summary_ms:.1f} ms, every report table {tables_ms:.0f} ms")
    record(f"every report table, {RECORDS:,} records", tables_ms, "ms")


if __name__ == "__main__":
    main()
