"""The run engine on Ray against the local executor: 200 scripted runs with 1 s of model latency.

Local at concurrency 16, and Ray (a cluster started on this machine beforehand, as `ray start`
would be) with 2 actors x 8 episodes each, against the ideal, model calls x latency / 16 slots
(target <= 1.2x for Ray): the run set's wall time, start-up included (locally the replicas and
browser; on Ray the driver's replicas, then the actors' start), and the episodes' span, from the
first episode's start to the last record, which is what a long run set's throughput tends to.
Ray twice: cold (the actors started for the run set), then warm (the actors the cold run set kept,
ARMBENCH_KEEP_WARM=1, as a process running several run sets keeps them).
"""
from __future__ import annotations

import asyncio
import os

import ray
from figures import record
from run_engine import LATENCY, episodes_span, timed_set

from armbench.arms.environment import KEEP_WARM_ENV
from armbench.models import get_model
from armbench.questions import load_sets
from armbench.types import RunConfig

RUNS = 200
SLOTS = 16
ACTORS = 2


def main() -> None:
    question_sets = load_sets(["gpus"])
    planned = sum(len(qs.questions) for qs in question_sets)
    local = RunConfig(model=f"scripted/oracle+latency={LATENCY:g}", arms=["tooled"], runs=RUNS // planned,
                      concurrency=SLOTS)
    on_ray = local.model_copy(update={"executor": "ray", "ray_actors": ACTORS})
    ray.init(include_dashboard=False, log_to_driver=False)
    get_model(local.model)  # LiteLLM imported before the timed run sets, as `bench run` resolves its model first
    try:
        for config, how in [(local, f"local, concurrency {SLOTS}"),
                            (on_ray, f"Ray, {ACTORS} actors x {SLOTS // ACTORS}, cold"),
                            (on_ray, f"Ray, {ACTORS} actors x {SLOTS // ACTORS}, warm")]:
            if config.executor == "ray":  # the cold run set starts all it needs, and keeps it for the warm one
                os.environ[KEEP_WARM_ENV] = "1"
            elapsed, records = asyncio.run(timed_set(question_sets, config))
            ideal = sum(len(r.call_providers) for r in records) * LATENCY / SLOTS
            span = episodes_span(records)
            target = " (target <= 1.2x)" if config.executor == "ray" else ""
            print(f"run engine on {how}: {len(records)} runs with {LATENCY:g} s model latency: ideal {ideal:.2f} s; "
                  f"wall {elapsed:.2f} s, ratio {elapsed / ideal:.3f}x{target} with start-up; episodes alone "
                  f"{span:.2f} s, ratio {span / ideal:.3f}x; start-up and ending {elapsed - span:.2f} s; "
                  f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            if config.executor == "ray":
                warmth = how.rsplit(", ", 1)[1]
                record(f"Ray, {ACTORS} actors, {warmth}, with start-up / ideal", elapsed / ideal, "x", 1.2)
                record(f"Ray, {ACTORS} actors, {warmth}, episodes alone / ideal", span / ideal, "x")
                record(f"Ray, {ACTORS} actors, {warmth}, start-up and ending", elapsed - span, "s")
    finally:
        ray.shutdown()


if __name__ == "__main__":
    main()
