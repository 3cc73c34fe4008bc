"""armbench from Python: `armbench.run(...)` and `armbench.report(...)`, what `bench run` and
`bench report` do, returning typed results instead of printing. `bench run` is this module plus
flag parsing, the provider preflight's messages, progress and printing.

    >>> import armbench
    >>> result = armbench.run("scripted/oracle", domains=["gpus"], sets=["design"], arms=["tooled"],
    ...                       out=run_set_folder)
    >>> result.correct, result.graded, result.infra_errors
    (5, 5, 0)
    >>> summary = armbench.report(run_set_folder)
    >>> [(row.domain, row.set, row.arm, row.accuracy) for row in summary.rows]
    [('gpus', 'design', 'tooled', 1.0)]

Errors a user can fix (an unknown domain, an unlocked set, a run set folder in use) are
`armbench.UserError`, with the message `bench` prints.
"""
from __future__ import annotations

import asyncio
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from armbench.analysis.planning import DEFAULT_DISCORDANCE
from armbench.errors import UserError
from armbench.models.generation import check_completion_kwargs
from armbench.types import (
    DEFAULT_BUDGET,
    DEFAULT_MAX_RUNS,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SYNTHESIS_BUDGET,
    RunConfig,
    RunRecord,
)

if TYPE_CHECKING:
    from armbench.analysis.planning import SpendPlan
    from armbench.analysis.summary import GroupSummary
    from armbench.arms.frozen_tool import FrozenTool
    from armbench.engine.store import RunSetStore
    from armbench.engine.synthesis import Synthesis
    from armbench.models.client import ModelCaller
    from armbench.models.model import Model
    from armbench.questions import QuestionSet


# RunConfig's fields that mean nothing to one synthesis episode
RUN_ONLY_SETTINGS = {"arms", "runs", "questions", "tools", "tool_from", "concurrency", "max_cost", "max_infra_errors",
                     "executor", "ray_address", "ray_actors"}


@dataclass(frozen=True)
class PlannedRun:
    """A run set checked and ready to start: nothing has run and no folder was written."""

    model: Model
    question_sets: list[QuestionSet]
    config: RunConfig
    store: RunSetStore
    resume: bool


@dataclass(frozen=True)
class RunResult:
    """What one call ran: `records` are the runs it finished (a resume's earlier runs are in the
    folder's runs.jsonl too); `halted` says why planned runs were left undone, if any were."""

    directory: Path
    records: list[RunRecord]
    planned: int
    already_done: int
    halted: str | None

    @property
    def graded(self) -> int:
        return sum(record.correct is not None for record in self.records)

    @property
    def correct(self) -> int:
        return sum(bool(record.correct) for record in self.records)

    @property
    def infra_errors(self) -> int:
        return sum(record.correct is None for record in self.records)


@dataclass(frozen=True)
class Report:
    """A run set's records and its per domain x set x arm summary; `tables` are the report's."""

    directory: Path
    records: list[RunRecord]
    rows: list[GroupSummary]
    tables: list[Any]  # armbench.analysis.tables.Table


def run_config(
    model: str,
    *,
    arms: list[str] | None = None,
    questions: list[str] | None = None,
    tool_from: list[Path] | None = None,
    price: tuple[float, float] | None = None,
    **settings: Any,
) -> RunConfig:
    """A run set's configuration, built once where flags (`bench run`) or arguments (`armbench.run`)
    come in; every later layer takes it. `settings` are RunConfig's fields, each with its one default
    there, but for `request_timeout`: left out, it is the model's own, which `plan_run` fills in.
    None for arms: every arm that can run; for questions: every question of the sets."""
    from armbench.arms import default_arms

    for name, value in (("arms", arms), ("questions", questions), ("tool_from", tool_from)):
        if isinstance(value, str | Path):
            raise UserError(f"{name} takes a list, e.g. {name}=[{str(value)!r}] (got {str(value)!r} alone)")
    if questions is not None and not any(str(question).strip() for question in questions):
        raise UserError("--question names no question id; give some (e.g. gpus-design-01), "
                        "or leave it out to ask every question of the sets")
    settings.setdefault("request_timeout", None)
    if isinstance(settings.get("web"), str):  # armbench.run(..., web="real"), as --web takes it
        from armbench.web_profile import load_profile

        settings["web"] = load_profile(settings["web"])
    try:
        return RunConfig(model=model, arms=tuple(arms or default_arms(bool(tool_from))),
                         questions=tuple(questions or ()), price_per_million=price,
                         tool_from=tuple(str(Path(folder).resolve()) for folder in tool_from or ()), **settings)
    except ValidationError as error:
        raise UserError(f"bad run settings: {describe_settings(error)}") from None


def plan_run(
    config: RunConfig,
    *,
    domains: list[str] | None = None,
    sets: list[str] | None = None,
    out: Path | None = None,
    resume: Path | None = None,
    allow_unlocked: bool = False,
    provider_order: list[str] | None = None,
    provider_ignore: list[str] | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
) -> PlannedRun:
    """Check everything a run set needs before anything starts: the questions `config` asks of
    `domains` x `sets` (None: all), its model (resolved here, once), its size (more than `max_runs`
    runs is refused) and its folder. The config comes back completed with what only the model knows:
    its request timeout, and an OpenRouter model's `provider_order`/`provider_ignore` routing."""
    from armbench.engine.manifest import resumable
    from armbench.engine.store import RunSetStore
    from armbench.paths import RESULTS_DIR

    selection = select_questions(domains, sets, config, allow_unlocked)
    resolved = get_checked_model(config.model, config.price_per_million)
    completion_kwargs = with_routing(resolved, provider_order, provider_ignore, config.completion_kwargs)
    check_completion_kwargs(completion_kwargs)
    config = fitted(resolved, config).model_copy(update={"completion_kwargs": completion_kwargs})
    check_plan_size(selection.question_sets, config, max_runs)
    check_executor(config)
    folder = resume or out or RESULTS_DIR / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    store = RunSetStore(Path(folder))
    if resume:
        resumable(store, selection.question_sets, config)  # a refused resume costs no preflight
        store.check_resumable()
    else:
        store.check_new()  # nor does an --out that is a file, unwritable, or a run set already
    return PlannedRun(resolved, selection.question_sets, config, store, resume is not None)


@dataclass(frozen=True)
class Selection:
    """The question sets a run set would ask, checked against its config (its synthesized tools too)."""

    question_sets: list[QuestionSet]
    question_ids: list[str]  # of the questions asked


def select_questions(domains: list[str] | None, sets: list[str] | None, config: RunConfig,
                     allow_unlocked: bool) -> Selection:
    """Check what a run set would ask: its arms, question sets, question ids, synthesized tools, lock."""
    from armbench.arms import ARMS
    from armbench.questions import load_sets, unlocked_sets

    for name, value in (("domains", domains), ("sets", sets)):
        if isinstance(value, str | Path):
            raise UserError(f"{name} takes a list, e.g. {name}=[{str(value)!r}] (got {str(value)!r} alone)")
    unknown_arms = sorted(set(config.arms) - set(ARMS))
    if unknown_arms:
        raise UserError(f"unknown arm {', '.join(map(repr, unknown_arms))}; choose from: {', '.join(ARMS)}, all")
    synthesized = load_synthesized_tools(config.tool_from)
    question_sets = load_sets(domains, sets)
    if not question_sets:
        raise UserError("no question sets match --domain/--set")
    missing = sorted(set(config.questions) - {q.id for qs in question_sets for q in qs.questions})
    if missing:
        raise UserError(f"no question {', '.join(map(repr, missing))} in the chosen --domain/--set")
    check_synthesized_tools(synthesized, list(config.arms), {qs.domain for qs in question_sets})
    drift = unlocked_sets(question_sets)
    if drift and not allow_unlocked:
        raise UserError(
            f"question sets differ from questions/questions.lock: {', '.join(drift)}; run "
            "`bench questions verify` then `bench questions freeze`, or pass --allow-unlocked"
        )
    asked = [question.id for question_set in question_sets for question in question_set.questions
             if not config.questions or question.id in config.questions]
    return Selection(question_sets, asked)


def load_synthesized_tools(tool_from: tuple[str, ...]) -> dict[str, FrozenTool]:
    """--tool-from's tools by domain; their loader (and polars) is imported only when one is given."""
    if not tool_from:
        return {}
    from armbench.arms.frozen_tool import load_frozen_tools

    return load_frozen_tools(list(tool_from))


def plan_spending(
    model: str,
    *,
    domains: list[str] | None = None,
    sets: list[str] | None = None,
    arms: list[str] | None = None,
    questions: list[str] | None = None,
    tool_from: list[Path] | None = None,
    allow_unlocked: bool = False,
    runs: int = 1,
    budget: int = DEFAULT_BUDGET,
    max_runs: int = DEFAULT_MAX_RUNS,
    price: tuple[float, float] | None = None,
    token_source: Path | None = None,
    discordance: float = DEFAULT_DISCORDANCE,
    difference: float | None = None,
) -> SpendPlan:
    """What `plan_run` with these settings would run and spend, checked as it checks them, but
    without the model's credentials, a run set folder, or anything started. `token_source`: a run
    set whose per-question token figures to expect (default: DEFAULT_TOKENS_PER_RUN)."""
    from armbench.analysis import planning
    from armbench.models import price_of

    config = run_config(model, arms=arms, questions=questions, tool_from=tool_from, runs=runs, budget=budget)
    selection = select_questions(domains, sets, config, allow_unlocked)
    check_plan_size(selection.question_sets, config, max_runs)
    if not 0 < discordance <= 1 or difference is not None and not 0 < difference <= discordance:
        raise UserError(f"need 0 < --difference <= --discordance <= 1 (got {difference}, {discordance}): "
                        "only pairs where the arms disagree can differ")
    prices = price or price_of(model)
    records = None
    if token_source:
        from armbench.engine.store import RunSetStore

        records = RunSetStore(token_source).records_to_report()
    source = (f"mean per run, by question and arm, of {token_source}" if token_source
              else "default per run and arm (analysis/planning.py), from results/recordings")
    return planning.plan_spending(model, selection.question_ids, list(config.arms), runs,
                                  prices, records, source, discordance, difference)


def check_plan_size(question_sets: list[QuestionSet], config: RunConfig, max_runs: int) -> None:
    """Refuse a plan of more than `max_runs` runs before it is built: each run may cost money, and
    a slip in --runs would otherwise fill memory with the plan (or spend for days)."""
    from armbench.engine.plan import plan_size

    size = plan_size(question_sets, config)
    if size > max_runs:
        asked = size // (len(config.arms) * config.runs)
        raise UserError(f"the plan has {size:,} runs ({asked:,} questions x {len(config.arms)} arms x --runs "
                        f"{config.runs:,}), more than --max-runs {max_runs:,}; pass --max-runs {size} to run them all")


def get_checked_model(model: str, price: tuple[float, float] | None = None) -> Model:
    """The model a string names, refused (UserError) when it cannot run here (an unknown provider, a
    missing key): the one place outside models/ a model string is resolved, for every command."""
    from armbench.models import get_model

    resolved = get_model(model)
    resolved.check()
    if price:
        resolved.set_price(*price)
    return resolved


def fitted(model: Model, config: RunConfig) -> RunConfig:
    """The config, refused (UserError) when the model cannot serve it; with no request timeout, the model's."""
    if config.record and not model.recordable:
        raise UserError("--record records a model's replies; a replay has none of its own to record")
    if config.max_cost is not None or config.max_cost_per_run is not None:
        model.check_priced()
    if config.request_timeout is None:
        return config.model_copy(update={"request_timeout": model.default_request_timeout(DEFAULT_REQUEST_TIMEOUT)})
    return config


def with_routing(model: Model, order: list[str] | None, ignore: list[str] | None,
                 settings: dict[str, Any]) -> dict[str, Any]:
    """The completion kwargs: the model's provider routing, then the generation settings."""
    routing = model.provider_routing(order or [], ignore or [])
    clash = sorted(set(routing) & set(settings))
    if clash:
        raise UserError(f"-M {clash[0]} would replace the provider routing of --provider-order/--provider-ignore")
    return {**routing, **settings}


def probe_client(model: str, settings: dict[str, Any], order: list[str], ignore: list[str], max_retries: int,
                 request_timeout: float | None) -> ModelCaller:
    """`bench doctor`'s client: the model checked, with its routing and settings, one call at a time."""
    from armbench.models.retry import RetryPolicy

    resolved = get_checked_model(model)
    return resolved.client(with_routing(resolved, order, ignore, settings), RetryPolicy(max_retries=max_retries),
                           request_timeout or resolved.default_request_timeout(60.0))


def check_executor(config: RunConfig) -> None:
    """--ray-address and --ray-actors go with --executor ray, which joins its cluster now: Ray missing,
    a bad address or an unreachable cluster stop the run set before anything starts."""
    if config.executor != "ray":
        if config.ray_address or config.ray_actors:
            raise UserError("--ray-address and --ray-actors say where --executor ray runs; add --executor ray")
        return
    from armbench.engine.ray_executor import connect

    connect(config.ray_address)


def describe_settings(error: ValidationError) -> str:
    from armbench.engine.store import describe

    return describe(error.errors())


def check_synthesized_tools(synthesized: dict[str, FrozenTool], arms: list[str], domains: set[str]) -> None:
    """--tool-from and the synthesized arm come together, with one tool for each domain asked about."""
    from armbench.arms import ARMS

    wanted = [arm for arm in arms if ARMS[arm].needs_tool_from]
    if synthesized and not wanted:
        raise UserError("--tool-from gives the synthesized arm its tool; add --arm synthesized (or leave --arm all)")
    stray = sorted(set(synthesized) - domains)
    if stray:
        raise UserError(f"--tool-from {synthesized[stray[0]].folder} holds a tool for {stray[0]}, which this run "
                        "set does not ask about; add it to --domain or leave it out")
    missing = sorted(domains - set(synthesized)) if wanted else []
    if missing:
        raise UserError(f"the synthesized arm needs a tool for {', '.join(missing)}: make one with `bench synthesize "
                        f"--domain {missing[0]} --out DIR`, then pass --tool-from DIR")


async def run_planned(planned: PlannedRun, *, show_progress: bool = False) -> RunResult:
    from armbench.engine.runner import run_set

    result = await run_set(planned.question_sets, planned.config, planned.store, resume=planned.resume,
                           show_progress=show_progress, model=planned.model)
    return RunResult(planned.store.directory, result.records, result.planned, result.already_done, result.halted)


@dataclass(frozen=True)
class PlannedSynthesis:
    """A synthesis episode checked and ready to start: nothing has run and no folder was written."""

    model: Model
    domain: str
    config: RunConfig
    folder: Path


def plan_synthesis(
    model: str,
    domain: str,
    *,
    out: Path | None = None,
    price: tuple[float, float] | None = None,
    completion_kwargs: dict[str, Any] | None = None,
    **settings: Any,
) -> PlannedSynthesis:
    """Check a synthesis before it starts; `settings` are RunConfig's (budget, run_timeout,
    max_cost_per_run, tool_timeout, record, rpm, ...), which the episode uses as a run would."""
    from armbench.engine.synthesis import check_folder, design_questions
    from armbench.paths import RESULTS_DIR

    if not isinstance(domain, str):
        raise UserError(f"synthesis builds one domain's tool: give its name, not {domain!r}")
    run_only = sorted(set(settings) & RUN_ONLY_SETTINGS)
    if run_only:
        raise UserError(f"{', '.join(run_only)}: settings of a run set, not of a synthesis")
    settings.setdefault("budget", DEFAULT_SYNTHESIS_BUDGET)
    settings.setdefault("request_timeout", None)  # the model's own, filled in below
    try:
        config = RunConfig(model=model, arms=("browsing",), price_per_million=price,
                           completion_kwargs=completion_kwargs or {}, **settings)
    except ValidationError as error:
        raise UserError(f"bad synthesis settings: {describe_settings(error)}") from None
    resolved = get_checked_model(model, price)
    config = fitted(resolved, config)
    design_questions(domain)  # an unknown domain, or one without frozen design questions
    check_completion_kwargs(config.completion_kwargs)
    folder = Path(out or RESULTS_DIR / f"synthesis-{domain}-{dt.datetime.now():%Y%m%d-%H%M%S}")
    check_folder(folder)
    return PlannedSynthesis(resolved, domain, config, folder)


def synthesize(model: str, domain: str, *, skip_preflight: bool = False, **options: Any) -> Synthesis:
    """Let `model` build `domain`'s tool from its replica and design questions (see
    `plan_synthesis`); the tool, when submitted, is frozen under `<out>/tool/` for `run(...,
    arms=["synthesized"], tool_from=[out])`. A real model's provider is checked first."""
    from armbench.engine.synthesis import synthesize as run_synthesis

    planned = plan_synthesis(model, domain, **options)
    if planned.model.needs_preflight and not skip_preflight:
        check_provider(planned)
    return asyncio.run(run_synthesis(planned.domain, planned.config, planned.folder, planned.model))


def check_provider(planned: PlannedRun | PlannedSynthesis) -> None:
    """The preflight: a UserError when the provider would fail the run set (`bench doctor`'s round trip)."""
    from armbench.doctor import preflight

    failed = asyncio.run(preflight(planned.model, planned.config.completion_kwargs, planned.config.request_timeout))
    if failed:
        raise UserError(f"preflight: {failed.line()}; check with `bench doctor --model {planned.model.name}`, "
                        "or pass --skip-preflight (skip_preflight=True in Python)")


def run(
    model: str,
    *,
    domains: list[str] | None = None,
    sets: list[str] | None = None,
    out: Path | None = None,
    resume: Path | None = None,
    allow_unlocked: bool = False,
    provider_order: list[str] | None = None,
    provider_ignore: list[str] | None = None,
    max_runs: int = DEFAULT_MAX_RUNS,
    show_progress: bool = False,
    skip_preflight: bool = False,
    **settings: Any,
) -> RunResult:
    """Run question sets through arms with a model and grade every run: `settings` make its
    configuration (`run_config`: arms, questions, runs, budget, concurrency, ...), the rest say what
    to ask and where to write (`plan_run`). A real model's provider is checked first, as `bench run`
    does, unless skip_preflight."""
    planned = plan_run(run_config(model, skip_preflight=skip_preflight, **settings), domains=domains, sets=sets,
                       out=out, resume=resume, allow_unlocked=allow_unlocked, provider_order=provider_order,
                       provider_ignore=provider_ignore, max_runs=max_runs)
    if planned.model.needs_preflight and not skip_preflight:
        check_provider(planned)
    return asyncio.run(run_planned(planned, show_progress=show_progress))


def report(run_set: Path | str) -> Report:
    """A run set's summary and tables (`bench report` without writing files)."""
    from armbench.analysis.publish import all_tables, read_manifest
    from armbench.analysis.summary import summarize
    from armbench.engine.store import open_run_set

    store = open_run_set(Path(run_set))
    records = store.records_to_report()
    return Report(store.directory, records, summarize(records), all_tables(records, read_manifest(store)))
