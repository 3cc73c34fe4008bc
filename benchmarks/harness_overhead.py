"""Harness time per action with the zero-latency scripted model.

Plays `scripted/oracle` over every GPU question (the tooled arm) several times and splits each
episode's wall time into the model call (LiteLLM plumbing around a script that answers at once),
the tool call, and the rest (the loop, grading inputs, bookkeeping). Figures are from this run
only: compare ratios, not absolute numbers, across machines.
"""
from __future__ import annotations

import asyncio
import statistics
import time

from figures import record

from armbench.arms.environment import ArmEnvironment
from armbench.engine.agent import run_episode
from armbench.models import get_model
from armbench.questions import load_sets

REPEATS = 10


async def measure(repeats: int = REPEATS) -> dict[str, float]:
    questions = [q for qs in load_sets(["gpus"]) for q in qs.questions]
    async with ArmEnvironment(["gpus"]) as env, env.open_arm("tooled", "gpus") as arm:
        oracle = get_model("scripted/oracle").client()
        await run_episode(questions[0], arm, oracle)  # warm-up: imports, caches
        episodes = []
        started = time.perf_counter()
        for _ in range(repeats):
            for question in questions:
                episodes.append(await run_episode(question, arm, oracle))
        elapsed = time.perf_counter() - started
    actions = sum(e.actions for e in episodes)
    model_calls = sum(e.actions for e in episodes) + len(episodes)  # one more turn to answer
    wall = sum(e.wall_seconds for e in episodes)
    tool = sum(e.tool_seconds for e in episodes)
    model = sum(e.model_seconds for e in episodes)
    return {
        "episodes": len(episodes),
        "actions": actions,
        "episodes_per_s": len(episodes) / elapsed,
        "ms_per_action": 1000 * wall / actions,
        "tool_ms_per_action": 1000 * tool / actions,
        "model_ms_per_call": 1000 * model / model_calls,
        "loop_ms_per_action": 1000 * (wall - tool - model) / actions,
        "median_episode_ms": 1000 * statistics.median(e.wall_seconds for e in episodes),
    }


def main() -> None:
    figures = asyncio.run(measure())
    print(
        f"harness: {figures['episodes']} oracle episodes, {figures['actions']} actions, "
        f"{figures['episodes_per_s']:.1f} episodes/s, median episode "
        f"{figures['median_episode_ms']:.1f} ms; per action {figures['ms_per_action']:.2f} ms "
        f"of which tool {figures['tool_ms_per_action']:.2f} ms, harness loop "
        f"{figures['loop_ms_per_action']:.2f} ms, the rest model turns "
        f"({figures['model_ms_per_call']:.2f} ms per LiteLLM round trip to the scripted model)"
    )
    record("harness loop per action", figures["loop_ms_per_action"], "ms")
    record("LiteLLM round trip (scripted model)", figures["model_ms_per_call"], "ms")


if __name__ == "__main__":
    main()
