"""Where a run set's episodes run: in this process, or on Ray actors (ray_executor.py).

The runner's workers take jobs from one queue and hand each to their site, which plays the episode
and gives back what the driver needs to grade and record it (`Played`). Grading, the record, the
stop rules and the progress stay with the runner whatever the site, so every executor writes the
same records. A Ray actor plays its episodes with the same `InProcess` site the local executor
uses, over an environment opened the same way (`open_environment`).
"""
from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import Protocol

from armbench.arms.environment import ArmEnvironment, resources_prompt
from armbench.arms.frozen_tool import load_frozen_tools
from armbench.arms.tool_source import open_typed_tools
from armbench.engine.agent import Episode, run_episode
from armbench.engine.plan import Job, run_limits, tool_key
from armbench.models.model import RunCallers
from armbench.tools.base import ArmTools
from armbench.types import RunConfig


@dataclass
class Played:
    """A finished episode, as a site hands it back to the driver."""

    episode: Episode
    divergence: str | None = None  # a replay: where the run first left its recording
    recording: bytes | None = None  # --record away from the run set folder (a Ray actor's): the driver writes it


class EpisodeSite(Protocol):
    async def play(self, job: Job) -> Played: ...


SiteScope = Callable[[int], AbstractAsyncContextManager[EpisodeSite]]
"""Opens worker `i`'s site for all its runs."""


class ArmSource(Protocol):
    def open_arm(self, name: str, domain: str, run_id: str | None = None) -> AbstractAsyncContextManager[ArmTools]: ...


WorkerScope = Callable[[int], AbstractAsyncContextManager[ArmSource]]
"""Opens what worker `i` needs for all its runs and yields where its runs get their arms from.

The seam for per-worker resources; by default every worker shares the run set's environment
(one browser, a fresh context per run).
"""


class ExecutorLost(Exception):
    """The executor can run no more episodes (a Ray actor that died could not be replaced)."""


@asynccontextmanager
async def open_environment(domains: list[str], config: RunConfig, own_replicas: bool = True,
                           plays_runs: bool = True) -> AsyncIterator[ArmEnvironment]:
    """The replicas, browser and tools a run set's episodes need, as its config asks for them;
    `own_replicas=False` uses the replicas another process of the run set owns, and
    `plays_runs=False` leaves out the browser, for a driver whose actors play the runs (see ArmEnvironment)."""
    synthesized = load_frozen_tools(config.tool_from)
    async with (open_typed_tools(config.tools) as typed_tools,
                ArmEnvironment(domains, typed_tools, synthesized, config.tool_timeout, own_replicas,
                               web=config.web, plays_runs=plays_runs) as env):
        yield env


def arm_templates(env: ArmEnvironment, arms: Iterable[str], domains: Iterable[str]) -> dict[tuple[str, str], ArmTools]:
    """Each arm's tools for each domain, without a live browser: for schemas and manifest hashes."""
    return {(arm, domain): env.template(arm, domain) for domain in domains for arm in arms}


def tool_manifest_hashes(env: ArmEnvironment, templates: dict[tuple[str, str], ArmTools]) -> dict[str, str]:
    """"<arm>/<domain>" -> that arm's tool manifest hash, free of replica addresses."""
    return {tool_key(arm, domain): env.manifest_hash(template, domain) for (arm, domain), template in templates.items()}


def prompt_resources(env: ArmEnvironment) -> dict[str, str]:
    """One prompt per question: it names only its own domain's replica, whatever else the set holds."""
    return {domain: resources_prompt({domain: target.base_url}) for domain, target in env.endpoints.items()}


@dataclass
class InProcess:
    """Plays episodes in this process, on arms from `arms` (the run set's environment, or a worker's own)."""

    arms: ArmSource
    callers: RunCallers
    config: RunConfig
    resources: dict[str, str]  # prompt_resources of the environment the arms come from

    async def play(self, job: Job) -> Played:
        caller = self.callers.for_run(job.run_id)
        async with self.arms.open_arm(job.arm, job.question.domain, job.run_id) as arm:
            episode = await run_episode(job.question, arm, caller, budget=self.config.budget,
                                        resources=self.resources[job.question.domain], limits=run_limits(self.config))
        divergence = self.callers.divergence(caller)
        return Played(episode, None if divergence is None else str(divergence))


def in_process(worker_scope: WorkerScope, callers: RunCallers, config: RunConfig,
               resources: dict[str, str]) -> SiteScope:
    """The local executor: worker `i` plays its episodes here, on the arms its scope opens."""

    @asynccontextmanager
    async def scope(worker: int) -> AsyncIterator[EpisodeSite]:
        async with worker_scope(worker) as arms:
            yield InProcess(arms, callers, config, resources)

    return scope
