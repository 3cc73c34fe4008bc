"""Run a plan on a pool of workers; grade each episode and append its record as it finishes.

`concurrency` workers pull jobs from one shared iterator, so memory holds that many episodes
however large the plan. Each worker hands its jobs to a site (executor.py) that plays the episode
here or on a Ray actor; grading, appending the record and the stop rules stay here either way.
A run set stops early in four ways, with every finished record on disk:
- Ctrl-C (a cancelled task): runs in flight are dropped unrecorded; `--resume` redoes them.
- the run-set cost cap: no new run starts; runs in flight finish and are recorded.
- more than `max_infra_errors` infra errors: runs in flight are cancelled, `RunSetFailed` is raised.
- a provider failure every run would meet (an authentication failure, models/provider_errors.py):
  the same, at the first such run; that run is recorded `retryable`, so `--resume` redoes it.
Without `max_infra_errors`, a set whose planned runs are more than half infra errors fails once it
ends (`RunSetFailed` too): it measured the provider, not the arms.
"""
from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console

from armbench.arms.environment import ArmEnvironment
from armbench.domains import combined_hash
from armbench.engine.agent import prompt_hash
from armbench.engine.executor import (
    ArmSource,
    EpisodeSite,
    ExecutorLost,
    Played,
    SiteScope,
    WorkerScope,
    arm_templates,
    in_process,
    open_environment,
    prompt_resources,
    tool_manifest_hashes,
)
from armbench.engine.manifest import build_manifest, check_environment, record_resume, resumable
from armbench.engine.plan import Job, plan, tool_key
from armbench.engine.progress import RunProgress, Totals
from armbench.engine.records import to_record
from armbench.engine.store import RunSetStore
from armbench.models.model import Model, RunCallers
from armbench.models.recording import recording_path
from armbench.questions import QuestionSet
from armbench.types import Manifest, RunConfig, RunRecord


def shared_environment(env: ArmEnvironment) -> WorkerScope:
    @asynccontextmanager
    async def scope(_worker: int) -> AsyncIterator[ArmSource]:
        yield env

    return scope


@dataclass
class RunSetResult:
    records: list[RunRecord]  # the runs this call finished (not those a resume found done)
    planned: int
    already_done: int
    halted: str | None = None  # why planned runs were left undone


class RunSetFailed(Exception):
    def __init__(self, message: str, result: RunSetResult):
        super().__init__(message)
        self.result = result


class _TooManyInfraErrors(Exception):
    pass


class _ProviderRefused(Exception):
    pass


async def run_set(
    question_sets: list[QuestionSet],
    config: RunConfig,
    store: RunSetStore,
    *,
    resume: bool = False,
    show_progress: bool = True,
    worker_scope: WorkerScope | None = None,
    model: Model,
) -> RunSetResult:
    """`model`: config.model as the plan resolved and checked it (armbench.api)."""
    jobs = plan(question_sets, config)
    with store.writing():  # one writer per run set, from before its records are read
        stored = resumable(store, question_sets, config) if resume else None  # refused before anything starts
        # Only the replicas the planned runs use: `--question gpus-design-01` starts one, not ten.
        domains = sorted({job.question.domain for job in jobs})
        # On Ray the actors play every run, each with a browser of its own: the driver needs none.
        async with open_environment(domains, config, plays_runs=config.executor != "ray") as env:
            return await _run_jobs(jobs, question_sets, config, model, store, env, stored, show_progress,
                                   worker_scope)


async def _run_jobs(
    jobs: list[Job],
    question_sets: list[QuestionSet],
    config: RunConfig,
    model: Model,
    store: RunSetStore,
    env: ArmEnvironment,
    stored: Manifest | None,
    show_progress: bool,
    worker_scope: WorkerScope | None,
) -> RunSetResult:
    templates = arm_templates(env, config.arms, [qs.domain for qs in question_sets])
    tool_manifests = tool_manifest_hashes(env, templates)
    prompt_digests = {domain: prompt_hash(config.budget, domain) for domain in {qs.domain for qs in question_sets}}
    offered = {tool_key(arm, domain): template.schemas() for (arm, domain), template in templates.items()}
    manifest = build_manifest(question_sets, config, tool_manifests, combined_hash(prompt_digests), env.endpoints,
                              env.sandbox_isolation(), model.decoding(offered),
                              env.synthesized_tools(config.arms))
    callers = _model_callers(model, config, jobs, store, manifest)
    recorded_runs = _recorded_runs(manifest)
    previous = _create(store, manifest) if stored is None else _reopen(store, stored, manifest, config)
    done = {record.run_id for record in previous}
    todo = [job for job in jobs if job.run_id not in done]
    pending = iter(todo)
    result = RunSetResult(records=[], planned=len(jobs), already_done=len(done))
    tally = Totals(previous, store.retried_cost())

    async def run_one(job: Job, site: EpisodeSite) -> tuple[RunRecord, bool]:
        """The run's record, and whether its provider failure stops the set."""
        played = await site.play(job)
        # The transcript is written in a thread, so the other workers' episodes go on meanwhile;
        # the record is appended on the loop, so a cancelled run is either recorded or not at all.
        transcript = await asyncio.to_thread(_write_files, store, job.run_id, played)
        record = to_record(
            job,
            config,
            played.episode,
            question_set_hash=manifest.question_sets[job.question_set.key],
            tool_manifest_hash=tool_manifests[job.tool_key],
            prompt_hash=prompt_digests[job.question.domain],
            transcript_path=transcript,
            replay_divergence=played.divergence,
            synthesized_tool_hash=env.synthesized_tool_hash(job.arm, job.question.domain),
            recorded=recorded_runs.get(job.run_id),
        )
        store.append(record)
        return record, played.episode.stops_the_set

    with RunProgress(config.model, len(jobs), tally, show=show_progress) as progress:

        async def worker(index: int, sites: SiteScope) -> None:
            async with sites(index) as site:
                for job in pending:
                    if result.halted:
                        return
                    record, stops_the_set = await run_one(job, site)
                    result.records.append(record)
                    progress.add(record)
                    if stops_the_set:
                        raise _ProviderRefused(record.error)
                    if _too_many_infra_errors(config, tally):
                        raise _TooManyInfraErrors
                    result.halted = _cost_cap(config, tally, store)

        # A resumed set may have spent its cost cap, or had its infra errors, already.
        result.halted = _cost_cap(config, tally, store)
        try:
            if _too_many_infra_errors(config, tally):
                raise _TooManyInfraErrors
            async with (_sites(config, env, callers, worker_scope, tool_manifests, jobs) as sites,
                        asyncio.TaskGroup() as group):
                for index in range(max(1, min(config.concurrency, len(todo)))):  # no idle workers
                    group.create_task(worker(index, sites))
        except* _TooManyInfraErrors:
            store.finish()
            raise RunSetFailed(
                f"{tally.infra_errors} runs ended as infra errors, more than --max-infra-errors "
                f"{config.max_infra_errors}: stopped. First error: {tally.first_infra_error}. Finished runs "
                f"are kept in {store.runs_path}; runs in flight were dropped and --resume redoes them.",
                result,
            ) from None
        except* _ProviderRefused as refused:
            store.finish()
            raise RunSetFailed(
                f"stopped at the first run the provider refused, as every run would be: {refused.exceptions[0]}. "
                f"Finished runs are kept in {store.runs_path}; once it is fixed, --resume {store.directory} runs the "
                "rest.", result) from None
        except* ExecutorLost as lost:
            store.finish()
            raise RunSetFailed(f"{lost.exceptions[0]}. Finished runs are kept in {store.runs_path}; runs in "
                               "flight were dropped and --resume redoes them.", result) from None
    store.finish()
    if result.already_done + len(result.records) == result.planned:
        result.halted = None  # the cap was reached by the last run: nothing was left undone
    broken = [record for record in result.records if record.retryable]
    if broken:
        raise RunSetFailed(f"{len(broken)} runs were broken by the harness, not the agent (first: {broken[0].run_id}: "
                           f"{broken[0].error}); they are infra errors that --resume {store.directory} runs again",
                           result)
    if config.max_infra_errors is None and tally.infra_errors * 2 > result.planned:
        raise RunSetFailed(f"{tally.infra_errors} of {result.planned} planned runs are infra errors, more than "
                           f"half. First error: {tally.first_infra_error}", result)
    return result


def _sites(config: RunConfig, env: ArmEnvironment, callers: RunCallers, worker_scope: WorkerScope | None,
           tool_manifests: dict[str, str], jobs: list[Job]) -> AbstractAsyncContextManager[SiteScope]:
    """Where the workers' episodes run: here, each worker on the arms its scope opens, or on Ray actors
    (imported only then), each with an environment of its own."""
    if config.executor == "ray":
        from armbench.engine.ray_executor import ray_sites

        started = [tool_key(arm, domain) for arm in config.arms for domain in env.domains]  # the actors' hashes
        return ray_sites(config, env.domains, [job.run_id for job in jobs], {key: tool_manifests[key] for key in started})
    return nullcontext(in_process(worker_scope or shared_environment(env), callers, config, prompt_resources(env)))


def _write_files(store: RunSetStore, run_id: str, played: Played) -> str:
    """What a run leaves besides its record: a recording its site made elsewhere, and the transcript
    (whose path the record gives)."""
    if played.recording is not None:
        path = recording_path(store.directory, run_id)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(played.recording)
    return store.write_transcript(run_id, played.episode.transcript)


def _model_callers(model: Model, config: RunConfig, jobs: list[Job], store: RunSetStore,
                   manifest: Manifest) -> RunCallers:
    """Where each run's model turns come from: the provider (recorded with --record), or a recording."""
    callers = model.callers(config, [job.run_id for job in jobs], store.directory)
    manifest.replay_of = callers.replay_of
    return callers


def _recorded_runs(manifest: Manifest) -> dict[str, RunRecord]:
    """A replay's recorded runs by id (their times are reported), else none."""
    if manifest.replay_of is None:
        return {}
    return {record.run_id: record for record in RunSetStore(Path(manifest.replay_of.directory)).records()}


def _create(store: RunSetStore, manifest: Manifest) -> list[RunRecord]:
    store.create(manifest)
    return []


def _reopen(store: RunSetStore, stored: Manifest, manifest: Manifest, config: RunConfig) -> list[RunRecord]:
    """The finished runs of a stopped run set, once its tools and prompt are known to be the same too."""
    check_environment(store, stored, manifest)
    reopened = store.reopen()
    notes = [f"set aside {reopened.corrupt} corrupt line(s) of {store.runs_path} in {store.bad_path}; their runs "
             "will be redone" if reopened.corrupt else "",
             f"{reopened.retried} run(s) the harness broke or the provider refused will be run again (their records: "
             f"{store.retried_path})" if reopened.retried else "",
             f"dropped {reopened.duplicates} earlier record(s) of runs recorded twice" if reopened.duplicates else ""]
    for note in filter(None, notes):
        Console(stderr=True, soft_wrap=True).print(f"[yellow]resume:[/yellow] {note}", highlight=False)
    store.write_manifest(record_resume(stored, config))
    return store.records()


def _too_many_infra_errors(config: RunConfig, tally: Totals) -> bool:
    return config.max_infra_errors is not None and tally.infra_errors > config.max_infra_errors


def _cost_cap(config: RunConfig, tally: Totals, store: RunSetStore) -> str | None:
    """The message that halts the run set once its cost cap is spent, else None."""
    if config.max_cost is None or tally.cost_usd < config.max_cost:
        return None
    return (
        f"run-set cost cap reached: ${tally.cost_usd:.4f} spent, cap ${config.max_cost:.4f}; no "
        "further runs were started. To finish the set, run the same command with a higher "
        f"--max-cost and --resume {store.directory}"
    )
