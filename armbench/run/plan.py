"""What one `bench run` asks for: the model, the plan (question x arm x repeat), the engine's limits."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from armbench.run.agent import DEFAULT_BUDGET
from armbench.models.client import DEFAULT_REQUEST_TIMEOUT
from armbench.run.limits import RunLimits
from armbench.questions import Question, QuestionSet
from armbench.models.retry import RetryPolicy


@dataclass(frozen=True)
class RunConfig:
    model: str
    arms: list[str]
    runs: int = 1
    budget: int = DEFAULT_BUDGET
    concurrency: int = 1
    rpm: int | None = None  # model calls per minute to the provider
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    request_timeout: float | None = DEFAULT_REQUEST_TIMEOUT  # seconds per model call
    run_timeout: float | None = None  # seconds of wall time per run
    max_tokens_per_run: int | None = None
    max_cost_per_run: float | None = None
    max_cost: float | None = None  # dollars for the whole run set
    max_infra_errors: int | None = None  # more than this many infra errors fails the run set
    completion_kwargs: dict[str, Any] = field(default_factory=dict)  # passed to LiteLLM as-is
    tools: str | None = None  # the tooled arm's typed tools: None = in-process, or mcp:COMMAND_OR_URL
    questions: tuple[str, ...] = ()  # only these question ids; empty = every question of the sets
    price_per_million: tuple[float, float] | None = None  # --price: registered with LiteLLM for this model
    record: bool = False  # write every model request and response to <run-set>/recording/

    @property
    def run_limits(self) -> RunLimits:
        return RunLimits(
            timeout=self.run_timeout,
            max_tokens=self.max_tokens_per_run,
            max_cost_usd=self.max_cost_per_run,
            cost_must_be_known=self.max_cost is not None or self.max_cost_per_run is not None,
        )

    def summary(self) -> dict[str, Any]:
        """The settings as the manifest records them (credentials left out)."""
        return {
            "arms": self.arms,
            "runs": self.runs,
            "budget": self.budget,
            "tools": self.tools,
            "questions": list(self.questions),
            "record": self.record,
            "price_per_million": self.price_per_million,
            "concurrency": self.concurrency,
            "rpm": self.rpm,
            "max_retries": self.retry.max_retries,
            "retry_base_delay": self.retry.base_delay,
            "request_timeout": self.request_timeout,
            "run_timeout": self.run_timeout,
            "max_tokens_per_run": self.max_tokens_per_run,
            "max_cost_per_run": self.max_cost_per_run,
            "max_cost": self.max_cost,
            "max_infra_errors": self.max_infra_errors,
            "completion_kwargs": {
                k: v for k, v in self.completion_kwargs.items() if "key" not in k.lower()
            },
        }


@dataclass(frozen=True)
class Job:
    question: Question
    question_set: QuestionSet
    arm: str
    repeat: int

    @property
    def run_id(self) -> str:
        return f"{self.question.id}.{self.arm}.r{self.repeat}"

    @property
    def tool_key(self) -> str:
        """The key of this job's arm in the manifest's tool manifests."""
        return f"{self.arm}/{self.question.domain}"


def plan(question_sets: list[QuestionSet], config: RunConfig) -> list[Job]:
    return [
        Job(question, question_set, arm, repeat)
        for question_set in question_sets
        for question in question_set.questions
        if not config.questions or question.id in config.questions
        for arm in config.arms
        for repeat in range(config.runs)
    ]
