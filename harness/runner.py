"""Plan (question x arm x repeat), run every episode, grade it and record it as it finishes."""
from __future__ import annotations

import asyncio
import datetime as dt
import platform
import subprocess
from dataclasses import dataclass
from typing import Any

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from arms import ARMS, build_arm
from arms.base import Arm
from arms.tool_source import TypedTools, in_process_tools, open_typed_tools
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
    tools: str | None = None  # the tooled arm's typed tools: None = in-process, or mcp:COMMAND_OR_URL


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


class ArmCache:
    """One Arm per (arm, domain): tools are built once per run set, not once per run."""

    def __init__(self, typed_tools: TypedTools = in_process_tools) -> None:
        self._arms: dict[tuple[str, str], Arm] = {}
        self._typed_tools = typed_tools

    def get(self, arm: str, domain: str) -> Arm:
        key = (arm, domain)
        if key not in self._arms:
            self._arms[key] = build_arm(arm, domain, self._typed_tools)
        return self._arms[key]


def manifest(question_sets: list[QuestionSet], config: RunConfig, arms: ArmCache) -> dict[str, Any]:
    return {
        "created": dt.datetime.now(dt.UTC).isoformat(),
        "model": config.model,
        "config": {
            "arms": config.arms,
            "runs": config.runs,
            "budget": config.budget,
            "concurrency": config.concurrency,
            "tools": config.tools,
        },
        "git_commit": git_commit(),
        "question_sets": {qs.key: qs.content_hash() for qs in question_sets},
        "tool_manifests": {
            f"{arm}/{qs.domain}": arms.get(arm, qs.domain).manifest_hash()
            for qs in question_sets
            for arm in config.arms
        },
        "data_hash": data_hash(),
        "prompt_hash": prompt_hash(config.budget),
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


def to_record(job: Job, config: RunConfig, episode: Episode, arm: Arm, transcript: str) -> RunRecord:
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
        prompt_hash=prompt_hash(config.budget),
        transcript_path=transcript,
    )


async def run_set(
    question_sets: list[QuestionSet], config: RunConfig, store: RunSetStore, *, show_progress: bool = True
) -> list[RunRecord]:
    """The typed tools' source (an MCP server connection, say) is opened once, around every run."""
    async with open_typed_tools(config.tools) as typed_tools:
        return await _run_set(question_sets, config, store, ArmCache(typed_tools), show_progress)


async def _run_set(
    question_sets: list[QuestionSet], config: RunConfig, store: RunSetStore, arms: ArmCache, show_progress: bool
) -> list[RunRecord]:
    jobs = plan(question_sets, config)
    store.create(manifest(question_sets, config, arms))
    semaphore = asyncio.Semaphore(config.concurrency)
    records: list[RunRecord] = []

    with Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[correct]} correct"),
        TimeElapsedColumn(),
        disable=not show_progress,
        transient=False,
    ) as progress:
        task = progress.add_task(f"{config.model}", total=len(jobs), correct=0)

        async def run_one(job: Job) -> None:
            async with semaphore:
                arm = arms.get(job.arm, job.question.domain)
                episode = await run_episode(
                    job.question,
                    arm,
                    config.model,
                    budget=config.budget,
                    completion_kwargs=config.completion_kwargs,
                )
                transcript = store.write_transcript(job.run_id, episode.transcript)
                record = to_record(job, config, episode, arm, transcript)
                store.append(record)
                records.append(record)
                progress.update(
                    task, advance=1, correct=sum(bool(r.correct) for r in records)
                )

        await asyncio.gather(*(run_one(job) for job in jobs))
    store.finish()
    return records


def known_arms() -> list[str]:
    return list(ARMS)
