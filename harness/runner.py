"""Plan (question x arm x repeat), run every episode, grade it and record it as it finishes."""
from __future__ import annotations

import asyncio
import datetime as dt
import platform
import subprocess
from dataclasses import dataclass
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arms import ARM_NAMES, ArmEnvironment
from arms.base import Arm
from arms.environment import resources_prompt
from graders.strict import grade
from harness.agent import DEFAULT_BUDGET, Episode, prompt_hash, run_episode
from harness.paths import ROOT
from harness.questions import Question, QuestionSet
from harness.store import RunRecord, RunSetStore
from replicas.data import data_hash


@dataclass(frozen=True)
class RunConfig:
    model: str
    arms: list[str]
    runs: int = 1
    budget: int = DEFAULT_BUDGET
    concurrency: int = 1
    completion_kwargs: dict[str, Any] | None = None


@dataclass(frozen=True)
class Job:
    question: Question
    question_set: QuestionSet
    arm: str
    repeat: int

    @property
    def run_id(self) -> str:
        return f"{self.question.id}.{self.arm}.r{self.repeat}"


def plan(question_sets: list[QuestionSet], config: RunConfig) -> list[Job]:
    return [
        Job(question, question_set, arm, repeat)
        for question_set in question_sets
        for question in question_set.questions
        for arm in config.arms
        for repeat in range(config.runs)
    ]


def manifest(question_sets: list[QuestionSet], config: RunConfig, env: ArmEnvironment) -> dict[str, Any]:
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(),
        "model": config.model,
        "config": {
            "arms": config.arms,
            "runs": config.runs,
            "budget": config.budget,
            "concurrency": config.concurrency,
        },
        "git_commit": git_commit(),
        "question_sets": {qs.key: qs.content_hash() for qs in question_sets},
        "tool_manifests": {
            f"{arm}/{qs.domain}": env.template(arm, qs.domain).manifest_hash()
            for qs in question_sets
            for arm in config.arms
        },
        "replicas": {domain: target.base_url for domain, target in env.endpoints.items()},
        "data_hash": data_hash(),
        "prompt_hash": prompt_hash(config.budget, resources_prompt(env.endpoints)),
        "versions": {"python": platform.python_version(), "litellm": litellm_version()},
    }


def git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return None
    return out.stdout.strip()


def litellm_version() -> str:
    from importlib.metadata import version

    return version("litellm")


def to_record(
    job: Job, config: RunConfig, episode: Episode, arm: Arm, transcript: str, prompt_digest: str
) -> RunRecord:
    infra = episode.stop_reason == "infra_error"
    graded = None if infra else grade(
        episode.answer, job.question.answer, job.question.separator, stop_reason=episode.stop_reason
    )
    return RunRecord(
        run_id=job.run_id,
        question_id=job.question.id,
        domain=job.question.domain,
        set=job.question.set,
        arm=job.arm,
        repeat=job.repeat,
        model=config.model,
        provider=episode.provider,
        answer=episode.answer,
        correct=None if graded is None else graded.correct,
        outcome=None if graded is None else graded.outcome.value,
        miss_reason=None if graded is None or graded.miss_reason is None else graded.miss_reason.value,
        stop_reason=episode.stop_reason,
        error=episode.error,
        error_kind="infra" if infra else None,
        cost_usd=episode.usage.cost_usd,
        prompt_tokens=episode.usage.prompt_tokens,
        completion_tokens=episode.usage.completion_tokens,
        actions=episode.actions,
        actions_by_tool=dict(episode.actions_by_tool),
        tool_errors=episode.tool_errors,
        wall_seconds=episode.wall_seconds,
        model_seconds=episode.model_seconds,
        tool_seconds=episode.tool_seconds,
        question_set_hash=job.question_set.content_hash(),
        tool_manifest_hash=arm.manifest_hash(),
        data_hash=data_hash(),
        prompt_hash=prompt_digest,
        transcript_path=transcript,
    )


async def run_set(
    question_sets: list[QuestionSet], config: RunConfig, store: RunSetStore, *, show_progress: bool = True
) -> list[RunRecord]:
    jobs = plan(question_sets, config)
    async with ArmEnvironment([qs.domain for qs in question_sets]) as env:
        store.create(manifest(question_sets, config, env))
        records = await run_jobs(jobs, config, store, env, show_progress)
    store.finish()
    return records


async def run_jobs(
    jobs: list[Job], config: RunConfig, store: RunSetStore, env: ArmEnvironment, show_progress: bool
) -> list[RunRecord]:
    semaphore = asyncio.Semaphore(config.concurrency)
    resources = resources_prompt(env.endpoints)
    prompt_digest = prompt_hash(config.budget, resources)
    records: list[RunRecord] = []

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[correct]} correct"),
        TimeElapsedColumn(),
        disable=not show_progress,
    ) as progress:
        task = progress.add_task(config.model, total=len(jobs), correct=0)

        async def run_one(job: Job) -> None:
            async with semaphore, env.open_arm(job.arm, job.question.domain) as arm:
                episode = await run_episode(
                    job.question,
                    arm,
                    config.model,
                    budget=config.budget,
                    resources=resources,
                    completion_kwargs=config.completion_kwargs,
                )
                transcript = store.write_transcript(job.run_id, episode.transcript)
                record = to_record(job, config, episode, arm, transcript, prompt_digest)
                store.append(record)
                records.append(record)
                progress.update(task, advance=1, correct=sum(bool(r.correct) for r in records))

        await asyncio.gather(*(run_one(job) for job in jobs))
    return records


def known_arms() -> list[str]:
    return list(ARM_NAMES)
