"""The plan of one `bench run` (question x arm x repeat), and the per-run limits its config sets."""
from __future__ import annotations

from dataclasses import dataclass

from armbench.engine.limits import RunLimits
from armbench.questions import QuestionSet
from armbench.types import Question, RunConfig


def run_limits(config: RunConfig) -> RunLimits:
    return RunLimits(
        timeout=config.run_timeout,
        max_tokens=config.max_tokens_per_run,
        max_cost_usd=config.max_cost_per_run,
        cost_must_be_known=config.max_cost is not None or config.max_cost_per_run is not None,
    )


@dataclass(frozen=True)
class Job:
    question: Question
    question_set: QuestionSet
    arm: str
    repeat: int

    @property
    def run_id(self) -> str:
        return run_id(self.question.id, self.arm, self.repeat)

    @property
    def tool_key(self) -> str:
        return tool_key(self.arm, self.question.domain)


def run_id(question_id: str, arm: str, repeat: int) -> str:
    """A run's id: its question, arm and repeat (from 0), e.g. gpus-heldout-03.tooled.r1."""
    return f"{question_id}.{arm}.r{repeat}"


def tool_key(arm: str, domain: str) -> str:
    """The key of an arm's tools for a domain in the manifest's tool manifests."""
    return f"{arm}/{domain}"


def plan_size(question_sets: list[QuestionSet], config: RunConfig) -> int:
    """How many runs `plan` makes, counted without making them: `--runs 1000000000` is refused
    before a list of that length is built."""
    asked = sum(not config.questions or question.id in config.questions
                for question_set in question_sets for question in question_set.questions)
    return asked * len(config.arms) * config.runs


def plan(question_sets: list[QuestionSet], config: RunConfig) -> list[Job]:
    return [
        Job(question, question_set, arm, repeat)
        for question_set in question_sets
        for question in question_set.questions
        if not config.questions or question.id in config.questions
        for arm in config.arms
        for repeat in range(config.runs)
    ]
