"""The run vocabulary in one place: the questions a run set asks, how each run ended and graded,
and what a run set records (its config, its manifest, one record per run).

Every stored value of an enum is declared with its meaning for people, so a report can always
say what a value means and a new value cannot be added without one. This module imports nothing
from armbench: every layer reads these names and none defines its own.
"""
from __future__ import annotations

import datetime as dt
import math
from enum import StrEnum
from pathlib import PurePosixPath
from statistics import NormalDist
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator


class Term(StrEnum):
    """A stored value with its meaning: members are declared as `name = "value", "meaning"`."""

    meaning: str

    def __new__(cls, value: str, meaning: str) -> Term:
        member = str.__new__(cls, value)
        member._value_ = value
        member.meaning = meaning
        return member

    @property
    def label(self) -> str:
        return self.value.replace("_", " ")


# --- how a run ended ---------------------------------------------------------------------------

class StopReason(Term):
    answered = "answered", "the model replied with an ANSWER line"
    stopped = "stopped", "the model replied with neither a tool call nor an ANSWER line"
    budget = "budget", "the tool-call budget was spent"
    infra_error = "infra_error", ("the model never answered: the provider failed, a tool's backend was gone, "
                                  "or a call could not be priced under a cost cap")
    timeout = "timeout", "the run's wall time ran out"
    cost_cap = "cost_cap", "the run reached its cost cap"
    token_cap = "token_cap", "the run reached its token cap"
    context_window = "context_window", "the conversation outgrew the model's context window"
    submitted = "submitted", "the model submitted the tool it built (a synthesis episode, not a run)"

    @property
    def is_limit(self) -> bool:
        """A harness limit or a full context window ended the run (a miss is `no_answer_limit`)."""
        return self in (StopReason.timeout, StopReason.cost_cap, StopReason.token_cap, StopReason.context_window)


class ErrorKind(Term):
    infra = "infra", "the provider failed, or the run timed out waiting on it: excluded from accuracy"
    injected = "injected", ("a fault injected into a scripted model (`+faults=`) corrupted the run's tool "
                            "calls: excluded from accuracy")
    agent = "agent", ("the agent's own failure, a cap, a full context window, or a timeout in a tool or the "
                      "loop: graded as no answer")

    @property
    def is_excluded(self) -> bool:
        """The run is not graded: what went wrong was not the agent's doing."""
        return self in (ErrorKind.infra, ErrorKind.injected)


# --- how its answer graded ---------------------------------------------------------------------

class Outcome(Term):
    """DeepSearchQA's outcome categories; only fully correct counts as correct."""

    fully_correct = "fully_correct", "exactly the reference items"
    correct_with_extraneous = "correct_with_extraneous", "every reference item, plus others"
    partially_correct = "partially_correct", "some of the reference items, not all"
    fully_incorrect = "fully_incorrect", "none of the reference items"
    no_answer = "no_answer", "no answer items"


class MissReason(Term):
    no_answer_budget = "no_answer_budget", "no answer, out of budget"
    no_answer_stopped = "no_answer_stopped", "no answer, the model stopped"
    no_answer_limit = "no_answer_limit", ("no answer, ended by a timeout, a cost or token cap, "
                                          "or a full context window")
    wrong_separator = "wrong_separator", "the right items joined with another separator"
    extra_text = "extra_text", "the right items with extra words"
    missing_items = "missing_items", "some items missing"
    extra_items = "extra_items", "all items plus extra ones"
    wrong = "wrong", "anything else"


# --- questions ---------------------------------------------------------------------------------

# A set is any `questions/<domain>/<set>.yaml`; design (looked at while building the tool) and
# heldout (written before it) are the study's two.
SET_NAME_PATTERN = r"^[a-z][a-z0-9_-]{0,39}$"  # not "all", --set's word for every set (questions.py)
SetName = Annotated[str, StringConstraints(pattern=SET_NAME_PATTERN)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Derivation(Strict):
    """How the reference answer is computed: one SQL query over the replica tables.

    Each result row gives one answer item: the first column, rendered with `format` when set
    (e.g. "{:.1f}"), else with `str()`.
    """

    sql: str
    format: str | None = None


class ToolCall(Strict):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class AnswerExtraction(Strict):
    """Which part of the last tool result forms the answer.

    `rows`: the `field` of every returned row (only rows tied with the first on `ties_on`, when set);
    `aggregate`: the aggregate's value; `stdout`: each non-empty line a script printed (the
    python tool). `format` renders numbers (e.g. "{:.0f}"). `across`: "last" reads the last
    call's result; "every" keeps the last call's items (each once) that every call's result gives
    (one call per year for "in every year from ... to ...").
    """

    source: Literal["rows", "aggregate", "stdout"] = Field(alias="from")
    field: str | None = None
    ties_on: str | None = None
    format: str | None = None
    # Left out of dumps when "last", so question-set hashes from before the field stay the same.
    across: Literal["last", "every"] = Field("last", exclude_if=lambda value: value == "last")

    @model_validator(mode="after")
    def _rows_need_field(self) -> AnswerExtraction:
        if self.source == "rows" and not self.field:
            raise ValueError("answer.from = rows needs `field`")
        return self

    def apply(self, result: dict[str, Any]) -> list[str]:
        if self.source == "stdout":
            return [line.strip() for line in result["stdout"].splitlines() if line.strip()]
        if self.source == "aggregate":
            return [render_value(result["aggregate"]["value"], self.format)]
        rows = result["rows"]
        if self.ties_on and rows:
            rows = [row for row in rows if row[self.ties_on] == rows[0][self.ties_on]]
        return [render_value(row[self.field], self.format) for row in rows]

    def items(self, results: list[dict[str, Any]]) -> list[str]:
        """The answer from every call's result, in call order (see `across`)."""
        last = self.apply(results[-1])
        if self.across == "last":
            return last
        earlier = [set(self.apply(result)) for result in results[:-1]]
        return [item for item in dict.fromkeys(last) if all(item in found for found in earlier)]


def render_value(value: Any, fmt: str | None) -> str:
    """One answer item as text: with `fmt` when given, dates as ISO, else `str()`."""
    if fmt is not None and value is not None:
        return fmt.format(value)
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


class Solution(Strict):
    calls: list[ToolCall] = Field(min_length=1)
    answer: AnswerExtraction


# A browsing solution written as this word is derived: the domain's site reader and the question's
# derivation, one python call (questions.derived_solution).
DERIVED = "derived"


class Derived(Strict):
    """A derived browsing solution that reads only the rows where each field has the value given
    (`browsing: {derived: {manufacturer: Intel}}`): the site reader narrows its reading with the
    site's own filters, and the derivation runs over those rows only, so a question about one
    maker's GPUs does not read every GPU's page. The oracle's run proves the narrowing keeps the
    answer."""

    derived: dict[str, str | int | float | bool] = Field(min_length=1)


class Shape(Term):
    """What a question asks of the rows it filters (the study's shapes); `bench questions list` counts them."""

    pick = "pick", "the entity with the largest or smallest value"
    count = "count", "how many rows pass the filter"
    average = "average", "an average (or sum) over the rows that pass"
    list = "list", "every entity meeting two or more conditions"
    rank = "rank", "the top (or bottom) N by a value"
    tie = "tie", "an extreme shared by several entities, all of which must be listed"
    threshold = "threshold", "a condition whose boundary value some rows sit exactly on"
    null = "null", "a field some rows lack, which must not win or count"
    paginated = "paginated", "an answer that needs every page of a paginated list"


class Question(Strict):
    id: str
    domain: str
    set: SetName
    text: str
    premise: str | None = None
    answer: list[str] = Field(min_length=1)
    separator: str = ";"
    answer_format: str
    tie_rule: str | None = None
    derivation: Derivation
    source_rows: list[str] = Field(default_factory=list)
    solutions: dict[str, Solution | Derived | Literal["derived"]] = Field(default_factory=dict)
    created: dt.date
    # Left out of dumps when empty, so the hashes of sets written before the field stay the same.
    shapes: list[Shape] = Field(default_factory=list, exclude_if=lambda value: not value)

    def prompt(self) -> str:
        """The user message: the question, its premise and how to format the answer."""
        parts = [self.text]
        if self.premise:
            parts.append(f"Given: {self.premise}")
        if self.tie_rule:
            parts.append(f"Ties: {self.tie_rule}")
        parts.append(f"Answer format: {self.answer_format}")
        parts.append(
            f"If there is more than one item, separate them with {self.separator!r}."
        )
        return "\n\n".join(parts)

    def join_answer(self, items: list[str], separator: str | None = None) -> str:
        """Items as an ANSWER line expects them: joined by the separator, plus a space if inline."""
        glue = separator if separator is not None else self.separator
        return glue.join(items) if glue.strip() == "" else f"{glue.strip()} ".join(items)


# --- what a run set records --------------------------------------------------------------------

# A replica request's server cost, asked for by the gate between a sandbox and a replica
# (tools/replica_gate.py) and answered by the replicas' server (replicas/cost_meter.py).
REPLICA_WANT_COST_HEADER = b"x-armbench-want-cost"
REPLICA_COST_HEADER = b"x-armbench-cost"  # seconds, as a decimal

DEFAULT_BUDGET = 24  # tool calls per episode
DEFAULT_CONCURRENCY = 4  # episodes in flight at once
DEFAULT_REQUEST_TIMEOUT = 120.0  # seconds per model call (a local model's own default is longer)
DEFAULT_MAX_RETRIES = 4  # retries of a transient provider error per model call
DEFAULT_RETRY_BASE_DELAY = 1.0  # seconds before the first retry; doubles each retry
DEFAULT_TOOL_TIMEOUT = 60.0  # seconds per call of a synthesized tool (its sandbox is killed after)
DEFAULT_SYNTHESIS_BUDGET = 40  # tool calls for a synthesis: exploring, writing, trying, fixing
DEFAULT_MAX_RUNS = 10_000  # runs one run set may plan (`bench run --max-runs`): a slip in --runs spends nothing


# --- web profiles: the frictions the replicas put in a run's way (armbench/web_profile.py) --------

class Friction(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False)


class Latency(Friction):
    p50_ms: float = Field(gt=0, le=600_000)  # up to 10 minutes
    p95_ms: float = Field(gt=0, le=600_000)

    @model_validator(mode="after")
    def _ordered(self) -> Latency:
        if self.p95_ms < self.p50_ms:
            raise ValueError(f"p95_ms ({self.p95_ms:g}) is below p50_ms ({self.p50_ms:g})")
        return self

    def seconds(self, draw: float, scale: float) -> float:
        """The log-normal delay at quantile `draw` (0 < draw < 1), times `scale`."""
        sigma = (math.log(self.p95_ms) - math.log(self.p50_ms)) / NormalDist().inv_cdf(0.95)
        return scale * math.exp(math.log(self.p50_ms) + sigma * NormalDist().inv_cdf(draw)) / 1000


class RateLimit(Friction):
    requests: int = Field(ge=1, le=1_000_000)
    window_s: float = Field(gt=0, le=86_400)
    retry_after_s: int = Field(ge=1, le=86_400)


class TransientErrors(Friction):
    probability: float = Field(gt=0, lt=1)


class WebProfile(Friction):
    """A set of frictions; none (`kind`) is the replicas as they are."""

    name: str = Field(min_length=1)
    seed: int = Field(0, ge=0, le=2**63)
    latency_scale: float = Field(1.0, gt=0, le=100)  # CI scales latencies down; every other friction stays
    latency: Latency | None = None
    rate_limit: RateLimit | None = None
    transient_errors: TransientErrors | None = None
    consent: bool = False
    page_cap: int | None = Field(None, ge=1, le=1_000_000)  # list pages shown; past them, "refine your search"
    chrome_bytes: int | None = Field(None, ge=1, le=1_000_000)  # navigation and boilerplate around each page
    markup_drift: bool = False  # non-content class names, ids and order vary per run

    @property
    def is_kind(self) -> bool:
        """No friction at all, whatever it is called."""
        return (self.latency, self.rate_limit, self.transient_errors, self.consent, self.page_cap,
                self.chrome_bytes, self.markup_drift) == (None, None, None, False, None, None, False)


KIND_WEB = WebProfile(name="kind")


class RunConfig(BaseModel):
    """What one `bench run` asks for: the model, the plan, the engine's settings and limits.

    The manifest records every field but the model (which it holds at its top) as it is declared
    here, so a new setting is added in this one place.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str
    arms: tuple[str, ...]
    runs: int = Field(1, ge=1)
    budget: int = Field(DEFAULT_BUDGET, ge=1)
    tools: str | None = None  # the tooled arm's typed tools: None = in-process, or mcp:COMMAND_OR_URL
    tool_from: tuple[str, ...] = ()  # the synthesized arm's tools: `bench synthesize` folders, one per domain
    tool_timeout: float = Field(DEFAULT_TOOL_TIMEOUT, gt=0)  # seconds per synthesized-tool call
    questions: tuple[str, ...] = ()  # only these question ids; empty = every question of the sets
    record: bool = False  # write every model request and response to <run-set>/recording/
    skip_preflight: bool = False  # a real model ran without `bench doctor`'s round trip first
    price_per_million: tuple[float, float] | None = None  # --price: registered with LiteLLM for this model
    concurrency: int = Field(DEFAULT_CONCURRENCY, ge=1)
    # where episodes run: in this process, or on Ray actors (--executor ray); not part of what a run
    # set measures, so a resume may change it
    executor: Literal["local", "ray"] = "local"
    ray_address: str | None = None  # the Ray cluster to join; None: RAY_ADDRESS, one running here, or a new one
    ray_actors: int | None = Field(None, ge=1)  # episode actors on the cluster; None: one per node
    rpm: int | None = Field(None, ge=1)  # model calls per minute to the provider
    max_retries: int = Field(DEFAULT_MAX_RETRIES, ge=0)
    retry_base_delay: float = Field(DEFAULT_RETRY_BASE_DELAY, ge=0)
    request_timeout: float | None = Field(DEFAULT_REQUEST_TIMEOUT, gt=0)
    run_timeout: float | None = Field(None, gt=0)  # seconds of wall time per run
    max_tokens_per_run: int | None = Field(None, ge=1)
    max_cost_per_run: float | None = Field(None, gt=0)
    max_cost: float | None = Field(None, gt=0)  # dollars for the whole run set
    max_infra_errors: int | None = Field(None, ge=0)  # more than this many infra errors fails the run set
    completion_kwargs: dict[str, Any] = Field(default_factory=dict)  # passed to LiteLLM as-is
    # the frictions the replicas put in the runs' way (--web); the kind web is left out of the manifest
    web: WebProfile = Field(default=KIND_WEB, exclude_if=lambda profile: profile.is_kind)

    def manifest_config(self) -> dict[str, Any]:
        """The settings as the manifest records them: credentials (a `...key...` kwarg) left out."""
        settings = self.model_dump(mode="json", exclude={"model"})
        settings["completion_kwargs"] = {
            key: value for key, value in settings["completion_kwargs"].items() if "key" not in key.lower()
        }
        return settings


def _absent(value: Any) -> bool:
    return not value


# A run's figures as its record stores them: a negative, NaN, infinite or absurd one (a hand edit) is
# refused; the cap is beyond any real run and keeps sums over a run set finite and within 64 bits.
MOST_PER_RUN = 10**12
Count = Annotated[int, Field(ge=0, le=MOST_PER_RUN)]
Amount = Annotated[float, Field(ge=0, le=MOST_PER_RUN, allow_inf_nan=False)]  # seconds or dollars


class RunRecord(BaseModel):
    """One finished run: a line of runs.jsonl (read back in strict mode: store.py)."""

    run_id: str
    question_id: str
    domain: str
    set: str
    arm: str
    repeat: Count
    model: str
    provider: str | None
    answer: str | None
    correct: bool | None  # None: an infra error or an injected fault, excluded from accuracy
    outcome: Outcome | None
    miss_reason: MissReason | None
    stop_reason: StopReason
    error: str | None
    error_kind: ErrorKind | None
    # an infra error the harness caused (a replica or tool backend died, a starved tool call), or a
    # provider failure that stopped the set (provider_errors.py): not a finished run, so `--resume`
    # runs it again; written only when true
    retryable: bool = Field(False, exclude_if=_absent)
    cost_usd: Amount | None  # None: the model has no known price (never recorded as 0)
    prompt_tokens: Count
    completion_tokens: Count
    actions: Count
    actions_by_tool: dict[str, Count]
    tool_errors: Count
    empty_tool_args: Count = 0  # calls with no arguments to a tool that takes some
    retries: Count = 0  # transient provider errors retried during the run
    # every fault a scripted model injected (faults.py's names), retried ones included; written only when any
    injected_faults: list[str] = Field(default_factory=list, exclude_if=_absent)
    call_providers: list[str | None] = Field(default_factory=list)  # who served each model call
    wall_seconds: Amount
    model_seconds: Amount
    tool_seconds: Amount
    # what the tool calls measured: CPU seconds (sandbox calls), seconds waiting for a free core, and
    # "<tool>:<limit>" for each limit a call hit ("python:cpu_limit", "python:starved", ...); written
    # only when not zero or empty, so records of runs without such calls read and write back unchanged
    tool_cpu_seconds: Amount = Field(0.0, exclude_if=_absent)
    tool_queue_seconds: Amount = Field(0.0, exclude_if=_absent)
    tool_limits_hit: list[str] = Field(default_factory=list, exclude_if=_absent)
    question_set_hash: str
    tool_manifest_hash: str
    data_hash: str
    prompt_hash: str
    transcript_path: str
    replay_divergence: str | None = None  # a replayed run: the first step whose request differs
    # a replayed run: model_seconds (and wall_seconds, built on it) are the recorded run's, as a replay
    # answers at once; written only when true
    replayed_times: bool = Field(False, exclude_if=_absent)
    # the synthesized arm: the sha256 of the frozen tool the run had (ToolSpec.sha256)
    synthesized_tool_hash: str | None = Field(default=None, exclude_if=_absent)
    # the web profile whose frictions the run met (--web); written only when it is not the kind web
    web: str | None = Field(default=None, exclude_if=_absent)
    finished_at: str = Field(default_factory=lambda: dt.datetime.now(dt.UTC).isoformat())

    @field_validator("transcript_path")
    @classmethod
    def _inside_the_run_set(cls, path: str) -> str:
        """Relative, and never out of the run set folder: `bench show` and the report open it."""
        parts = PurePosixPath(path).parts
        if not parts or PurePosixPath(path).is_absolute() or ".." in parts:
            raise ValueError(f"must be a path inside the run set folder, not {path!r}")
        return path


class ReplayOf(BaseModel):
    """The recording a replayed run set played back."""

    directory: str
    model: str | None
    git_commit: str | None


class Resume(BaseModel):
    """One `--resume` of a run set: when, with which code and settings."""

    at: str
    git_commit: str | None
    config: dict[str, Any]  # RunConfig.manifest_config()


class Manifest(BaseModel):
    """manifest.json: what a run set ran, with which code, questions, tools, data and prompt.

    `sandbox_isolation`, `decoding`, `replay_of`, `resumes` and `imported` are written only when
    known (older run sets lack the first; only a local model has the second, a replay the third, a
    resumed set the fourth, a set read from inspect logs the fifth). Keys written by another
    version are kept.
    """

    model_config = ConfigDict(extra="allow")

    created: str
    model: str
    config: dict[str, Any]  # RunConfig.manifest_config()
    git_commit: str | None
    question_sets: dict[str, str]  # "<domain>/<set>" -> the set's content hash
    tool_manifests: dict[str, str]  # "<arm>/<domain>" -> that arm's tool manifest hash
    replicas: dict[str, str]  # domain -> the replica's base URL
    data_hash: str
    prompt_hash: str
    versions: dict[str, str]
    sandbox_isolation: str | None = Field(default=None, exclude_if=_absent)
    # A local model's constrained decoding: {"constrained_decoding", "grammar_sha256": {"<arm>/<domain>":
    # {"until_a_tool_result", "after"}: a hash each}, "first_reply", "tool_descriptions": the rules};
    # absent for API models.
    decoding: dict[str, Any] | None = Field(default=None, exclude_if=_absent)
    replay_of: ReplayOf | None = Field(default=None, exclude_if=_absent)
    # the synthesized arm's tool per domain: {"name", "sha256", "source", "synthesis"} (absolute paths)
    synthesized_tools: dict[str, dict[str, str]] = Field(default_factory=dict, exclude_if=_absent)
    resumes: list[Resume] = Field(default_factory=list, exclude_if=_absent)
    # a run set `bench import inspect` made: {"from": "inspect_ai", "at", "by" (commit), "logs": paths}
    imported: dict[str, Any] | None = Field(default=None, exclude_if=_absent)
    # "<domain>/<set>" -> why: a held-out set whose domain's typed tools changed since it was frozen
    # (questions.tool_drift), so its figures no longer measure a tool that was not tuned on it
    heldout_tool_changed: dict[str, str] = Field(default_factory=dict, exclude_if=_absent)


class SynthesisRecord(BaseModel):
    """<DIR>/synthesis.json: one `bench synthesize` episode, what it was given, spent and made.

    The model saw the domain's design questions with their answers (`question_set_hash`), never
    the held-out ones. `tool_sha256` is set when it submitted a tool (frozen under <DIR>/tool/);
    otherwise `failure` says why there is none.
    """

    domain: str
    model: str
    created: str
    git_commit: str | None
    config: dict[str, Any]  # RunConfig.manifest_config(): budget, caps, generation settings
    question_set_hash: str
    data_hash: str
    prompt_hash: str  # of the synthesis prompt, with the replica named, not addressed
    sandbox_isolation: str
    tool_name: str | None
    tool_sha256: str | None
    failure: str | None
    stop_reason: StopReason
    error: str | None
    error_kind: ErrorKind | None
    cost_usd: float | None  # None: the model has no known price
    prompt_tokens: int
    completion_tokens: int
    actions: int
    actions_by_tool: dict[str, int]
    tool_errors: int
    retries: int
    wall_seconds: float
    model_seconds: float
    tool_seconds: float
    transcript_path: str  # relative to <DIR>
