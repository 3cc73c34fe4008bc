"""The `bench` command line: parse, call, print. Logic lives in the modules it calls."""
from __future__ import annotations

import asyncio
import math
import os
import signal
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console
from rich.markup import escape

from armbench.analysis.planning import DEFAULT_DISCORDANCE
from armbench.errors import UserError, read_text
from armbench.types import (
    DEFAULT_BUDGET,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_RETRIES,
    DEFAULT_MAX_RUNS,
    DEFAULT_RETRY_BASE_DELAY,
    DEFAULT_SYNTHESIS_BUDGET,
    DEFAULT_TOOL_TIMEOUT,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help text is plain: "[default: 120]" must not read as Rich markup
    help="armbench: does a typed query tool help an LLM agent, compared with browsing?",
)
questions_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Question sets: list, verify, freeze.")
data_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Replica data: rebuild the Parquet tables.")
replicas_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Replica sites and APIs on loopback.")
mcp_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="MCP: serve a domain's typed tools to any MCP client.")
domain_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Table domains: scaffold one from a CSV, check it.")
app.add_typer(questions_app, name="questions")
app.add_typer(data_app, name="data")
app.add_typer(replicas_app, name="replicas")
app.add_typer(mcp_app, name="mcp")
app.add_typer(domain_app, name="domain")
export_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Write a run set in another tool's format.")
app.add_typer(export_app, name="export")
import_app = typer.Typer(no_args_is_help=True, rich_markup_mode=None, help="Read another tool's logs into a run set.")
app.add_typer(import_app, name="import")

# A terminal's own width, or $COLUMNS; piped without it, 120 (Rich alone would use 80). A table
# wider than that is stacked, never truncated (analysis/tables.py).
out = Console(width=None if sys.stdout.isatty() or os.environ.get("COLUMNS") else 120)
err = Console(stderr=True, soft_wrap=True)

ALL = "all"


def show_version(asked: bool) -> None:
    if asked:
        from armbench.provenance import git_commit, version

        commit = git_commit()
        out.print(f"armbench {version()}" + (f" (commit {commit[:12]})" if commit else ""), highlight=False)
        raise typer.Exit()


@app.callback()
def options(
    questions_dir: Annotated[Optional[Path], typer.Option(
        help="The question bank: a folder of <domain>/<set>.yaml and its questions.lock "
        "[default: $ARMBENCH_QUESTIONS_DIR, else the project's questions/].")] = None,
    version: Annotated[bool, typer.Option(
        "--version", callback=show_version, is_eager=True, help="Print armbench's version (and commit) and exit.")] = False,
) -> None:
    """armbench: does a typed query tool help an LLM agent, compared with browsing?"""
    from armbench.paths import QUESTIONS_DIR_ENV

    if questions_dir is not None:
        if not questions_dir.is_dir():
            raise UserError(f"--questions-dir {questions_dir} is not a folder")
        os.environ[QUESTIONS_DIR_ENV] = str(questions_dir.resolve())  # read when a bank is needed


def expand(value: str, choices: list[str], what: str) -> list[str]:
    names = choices if value == ALL else [v.strip() for v in value.split(",") if v.strip()]
    if not names:
        raise UserError(f"--{what} is empty; choose from: {', '.join(choices)}, all")
    unknown = [name for name in names if name not in choices]
    if unknown:
        raise UserError(f"unknown {what} {', '.join(map(repr, unknown))}; choose from: {', '.join(choices)}, all")
    return names


def domain_names(value: str) -> list[str]:
    """--domain's names; one whose folder did not load is an error saying why."""
    from armbench.domains import BROKEN, DOMAINS

    broken = [name for name in value.split(",") if name.strip() in BROKEN]
    if broken:
        raise UserError(BROKEN[broken[0].strip()])
    return expand(value, list(DOMAINS), "domain")


def comma_list(value: str | None) -> list[str]:
    return [v.strip() for v in (value or "").split(",") if v.strip()]


def parse_price(value: str | None) -> tuple[float, float] | None:
    if value is None:
        return None
    try:
        prices = tuple(float(part) for part in value.split(","))
    except ValueError:
        prices = ()
    if len(prices) != 2 or not all(math.isfinite(p) and p >= 0 for p in prices):
        raise UserError(f"--price takes IN,OUT: dollars per million input and output tokens, e.g. 0.15,0.60 (got {value!r})")
    return prices


def positive(value: float | None, flag: str) -> None:
    if value is not None and not (math.isfinite(value) and value > 0):
        raise UserError(f"{flag} must be a number more than 0 (got {value:g})")


# Options shared by `run` and `doctor`.
ProviderOrder = Annotated[Optional[str], typer.Option(
    help="OpenRouter only: providers to try first, comma list (sent as provider.order).")]
ProviderIgnore = Annotated[Optional[str], typer.Option(
    help="OpenRouter only: providers never to use, comma list (sent as provider.ignore).")]
RequestTimeout = Annotated[Optional[float], typer.Option(
    help="Seconds one model call may take before it counts as a (retried) timeout "
    "[default: 120; 60 for doctor; 1800 for a local model].")]
MaxRetries = Annotated[int, typer.Option(min=0, help="Retries of a transient provider error per call.")]
Temperature = Annotated[Optional[float], typer.Option(help="Sampling temperature, 0-2 [default: the provider's].")]
MaxTokens = Annotated[Optional[int], typer.Option(min=1, help="Most tokens per model reply [default: the provider's].")]
Seed = Annotated[Optional[int], typer.Option(help="Sampling seed, for providers that take one.")]
ReasoningEffort = Annotated[Optional[str], typer.Option(
    help="none, minimal, low, medium or high, for reasoning models [default: the provider's].")]
ApiBase = Annotated[Optional[str], typer.Option(help="The provider's base URL (a proxy, vLLM, Ollama).")]
ModelArgs = Annotated[Optional[list[str]], typer.Option(
    "--model-arg", "-M", metavar="KEY=VALUE",
    help="Any other LiteLLM completion argument, repeatable; VALUE is JSON when it parses (-M top_p=0.9).")]
EnvFile = Annotated[Optional[Path], typer.Option(
    help="Provider credentials as NAME=value lines; variables already set win [default: ./.env if present].")]


ToolFrom = Annotated[Optional[list[Path]], typer.Option(
    help="The synthesized arm's tool: a `bench synthesize --out` folder, one per domain, repeatable.")]
ToolTimeout = Annotated[float, typer.Option(help="Seconds one call of a synthesized tool may take.")]


def generation(temperature, max_tokens, seed, reasoning_effort, api_base, model_args, env_file) -> dict:
    """The generation flags as completion kwargs, after loading the env file (see models/generation.py)."""
    from armbench.models.generation import generation_kwargs, load_env_file

    settings = generation_kwargs(temperature=temperature, max_tokens=max_tokens, seed=seed,
                                 reasoning_effort=reasoning_effort, api_base=api_base, model_args=model_args)
    loaded = load_env_file(env_file)
    if loaded:
        err.print(f"[dim]set {', '.join(loaded)} from {env_file or '.env'}[/dim]", highlight=False)
    return settings


@app.command()
def run(
    model: Annotated[str, typer.Option(help="A LiteLLM model string (openai/gpt-4o-mini), or offline: scripted/<script>, local/<name>, replay/<run-set dir>.")],
    arm: Annotated[str, typer.Option(help="Arm name, comma list, or 'all'.")] = ALL,
    set_: Annotated[str, typer.Option("--set", help="design, heldout (or any set the question bank holds), comma list, or 'all'.")] = ALL,
    domain: Annotated[str, typer.Option(help="Domain name, comma list, or 'all'.")] = ALL,
    runs: Annotated[int, typer.Option(min=1, help="Repeats of each question per arm.")] = 1,
    max_runs: Annotated[int, typer.Option(
        min=1, help="Most runs the run set may plan (questions x arms x --runs); a larger plan is refused before "
        "anything runs.")] = DEFAULT_MAX_RUNS,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = DEFAULT_CONCURRENCY,
    budget: Annotated[int, typer.Option(min=1, help="Maximum tool calls per episode.")] = DEFAULT_BUDGET,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run set folder (default results/<time>).")] = None,
    resume: Annotated[Optional[Path], typer.Option(
        help="Continue a stopped run set in this folder: finished runs are kept, the rest are run.")] = None,
    allow_unlocked: Annotated[bool, typer.Option(help="Run question sets that differ from questions.lock.")] = False,
    rpm: Annotated[Optional[int], typer.Option(min=1, help="Model calls per minute to the provider.")] = None,
    max_retries: MaxRetries = DEFAULT_MAX_RETRIES,
    retry_base_delay: Annotated[float, typer.Option(
        min=0, help="Seconds before the first retry; doubles each retry, with jitter.")] = DEFAULT_RETRY_BASE_DELAY,
    request_timeout: RequestTimeout = None,
    run_timeout: Annotated[Optional[float], typer.Option(help="Seconds of wall time per run.")] = None,
    max_tokens_per_run: Annotated[Optional[int], typer.Option(min=1, help="Token cap per run.")] = None,
    max_cost_per_run: Annotated[Optional[float], typer.Option(help="Dollar cap per run.")] = None,
    max_cost: Annotated[Optional[float], typer.Option(help="Dollar cap for the run set.")] = None,
    max_infra_errors: Annotated[Optional[int], typer.Option(
        min=0, help="Fail the run set (exit 1) once more than this many runs are infra errors "
        "[default: fail it at the end when more than half the planned runs are].")] = None,
    provider_order: ProviderOrder = None,
    provider_ignore: ProviderIgnore = None,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    seed: Seed = None,
    reasoning_effort: ReasoningEffort = None,
    api_base: ApiBase = None,
    model_arg: ModelArgs = None,
    env_file: EnvFile = None,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    tools: Annotated[Optional[str], typer.Option(
        help="The tooled arm's typed tools from an MCP server: mcp:COMMAND (stdio) or mcp:URL (streamable HTTP).")] = None,
    question: Annotated[Optional[str], typer.Option(
        help="Only these question ids, comma list (default: every question of the sets).")] = None,
    record: Annotated[bool, typer.Option(
        help="Record every model request and response, so the run set can be replayed with --model replay/DIR.")] = False,
    price: Annotated[Optional[str], typer.Option(
        metavar="IN,OUT", help="Dollars per million input and output tokens, for a model LiteLLM does not price "
        "(a local model defaults to 0,0).")] = None,
    skip_preflight: Annotated[bool, typer.Option(
        help="Start a real model's run set without first checking the provider with `bench doctor`'s round trip.")] = False,
    tool_from: ToolFrom = None,
    tool_timeout: ToolTimeout = DEFAULT_TOOL_TIMEOUT,
    executor: Annotated[str, typer.Option(
        help="Where episodes run: local (this process) or ray (actors on a Ray cluster; pip install -e '.[ray]').")] = "local",
    ray_address: Annotated[Optional[str], typer.Option(
        help="--executor ray: the head node's HOST:PORT [default: $RAY_ADDRESS, a cluster running here, else a new one here].")] = None,
    ray_actors: Annotated[Optional[int], typer.Option(
        min=1, help="--executor ray: episode actors; --concurrency is split among them [default: one per node].")] = None,
    web: Annotated[str, typer.Option(
        help="The replicas' web conditions: kind (none), real, hostile, or a profile's YAML file (docs/web-conditions.md).")] = "kind",
    web_latency_scale: Annotated[Optional[float], typer.Option(
        help="Scale the --web profile's latencies by this factor (CI's shorter waits); every other friction stays.")] = None,
) -> None:
    """Run question sets through arms with a model, grade every run, and print the report.

    --model replay/DIR replays a recorded run set: the model's turns come from the recording, the
    tools run for real, and each run records where its requests first differ from the recording.

    A real model (not scripted/, local/ or replay/) is first checked with `bench doctor`'s round
    trip: an unreachable provider, or tool arguments dropped or mangled, stop it with exit 2. Exit 1
    when the set fails: more than half its planned runs (or --max-infra-errors) are infra errors."""
    # Every flag is checked before anything heavy (LiteLLM, Playwright, polars) loads: a typo costs < 1 s.
    from armbench.arms import ARMS
    from armbench.questions import set_names

    arms = expand(arm, list(ARMS), "arm")
    positive(tool_timeout, "--tool-timeout")
    if not set_names():
        from armbench.paths import questions_dir

        raise UserError(f"the question bank {questions_dir()} holds no question sets (<domain>/<set>.yaml)")
    sets = expand(set_, set_names(), "set")
    domains = domain_names(domain)
    if resume and out_dir and resume.resolve() != out_dir.resolve():
        raise UserError("--resume names the run set folder; leave out --out, or give the same folder")
    if resume:  # one writer per run set: a second is refused now, before LiteLLM or a replica starts
        from armbench.engine.store import RunSetStore

        RunSetStore(resume).check_no_writer()
    for value, flag in [(request_timeout, "--request-timeout"), (run_timeout, "--run-timeout"),
                        (max_cost_per_run, "--max-cost-per-run"), (max_cost, "--max-cost")]:
        positive(value, flag)
    if tools and len(domains) > 1:
        raise UserError("an MCP server serves one domain's tools; pass --domain with one domain")
    prices = parse_price(price)
    positive(web_latency_scale, "--web-latency-scale")
    from armbench.web_profile import load_profile

    web_profile = load_profile(web, web_latency_scale)
    settings = generation(temperature, max_tokens, seed, reasoning_effort, api_base, model_arg, env_file)

    from armbench.api import plan_run, run_config

    config = run_config(
        model, arms=arms if arm != ALL else None, questions=None if question is None else comma_list(question),
        tool_from=tool_from, price=prices, completion_kwargs=settings, runs=runs, budget=budget,
        concurrency=concurrency, rpm=rpm, max_retries=max_retries, retry_base_delay=retry_base_delay,
        request_timeout=request_timeout, run_timeout=run_timeout, max_tokens_per_run=max_tokens_per_run,
        max_cost_per_run=max_cost_per_run, max_cost=max_cost, max_infra_errors=max_infra_errors, tools=tools,
        record=record, tool_timeout=tool_timeout, skip_preflight=skip_preflight, executor=executor,
        ray_address=ray_address, ray_actors=ray_actors, web=web_profile,
    )
    planned = plan_run(
        config, domains=domains if domain != ALL else None, sets=sets if set_ != ALL else None, out=out_dir,
        resume=resume, allow_unlocked=allow_unlocked, provider_order=comma_list(provider_order),
        provider_ignore=comma_list(provider_ignore), max_runs=max_runs,
    )
    with planned.store.writing():  # from before the preflight to the end (the runner takes it again)
        result = start_run_set(planned, skip_preflight, quiet)
    print_report(planned.store.directory)
    print_run_summary(result)
    check_every_answer(planned.model, result)


def check_every_answer(model, result) -> None:
    """The oracle gets every run right, or its stored solutions or the harness are broken: exit 1
    naming the first runs and their causes (a summary of graded runs alone would hide them)."""
    if not model.answers_every_question:
        return
    missed = [record for record in result.records if record.correct is not True]
    if missed:
        err.print(f"[bold red]oracle:[/bold red] {len(missed)} of {len(result.records)} runs not correct; "
                  "each should be (a stored solution or the harness is broken):", highlight=False)
        for record in missed[:10]:
            err.print(f"  {record.run_id}: {record.error or record.miss_reason or record.outcome}", highlight=False)
        raise typer.Exit(1)
    err.print(f"oracle: all {len(result.records)} runs finished now are correct", highlight=False)


def start_run_set(planned, skip_preflight: bool, quiet: bool):
    """The preflight, then the run set; a failed or stopped set says why and exits (1, 130, 143)."""
    from armbench.api import run_planned
    from armbench.engine.runner import RunSetFailed

    target = planned.store.directory
    if planned.model.needs_preflight and not skip_preflight:
        check_provider(planned)
    try:
        return asyncio.run(until_terminated(run_planned(planned, show_progress=not quiet)))
    except RunSetFailed as failed:
        if failed.result.records or failed.result.already_done:  # else there is nothing to report
            print_report(target)
        err.print(f"[bold red]failed:[/bold red] {failed}", highlight=False)
        raise typer.Exit(1) from None
    except (KeyboardInterrupt, Terminated) as stopped:
        how = "terminated" if isinstance(stopped, Terminated) else "interrupted"
        err.print(f"{how}: finished runs are kept in {planned.store.runs_path}; "
                  f"continue with the same command and --resume {target}")
        raise typer.Exit(143 if isinstance(stopped, Terminated) else 130) from None


class Terminated(Exception):
    """The run set was stopped by SIGTERM (what `timeout`, `kill` and job schedulers send)."""


async def until_terminated(coroutine):
    """Await `coroutine`; SIGTERM cancels it as Ctrl-C does (runs in flight dropped, every finished
    record kept), then raises Terminated."""
    loop, task = asyncio.get_running_loop(), asyncio.current_task()
    terminated = False

    def terminate() -> None:
        nonlocal terminated
        terminated = True
        task.cancel()

    loop.add_signal_handler(signal.SIGTERM, terminate)
    try:
        return await coroutine
    except asyncio.CancelledError:
        loop.set_exception_handler(quiet_when_stopped)
        if terminated:
            raise Terminated from None
        raise
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


UNRETRIEVED = ("Future exception was never retrieved", "Task exception was never retrieved")


def quiet_when_stopped(loop: asyncio.AbstractEventLoop, context: dict) -> None:
    """After a stop, the errors nobody is left to read are not reported: a terminal's Ctrl-C also
    reaches bench's children (the browser's driver, replica servers), whose pipes then close under
    the cancelled runs ("Connection closed while reading from the driver"). Anything else is."""
    if context.get("message") not in UNRETRIEVED:
        loop.default_exception_handler(context)


def check_provider(planned) -> None:
    """The preflight: refuse a run set whose provider would fail it (UserError, exit 2)."""
    from armbench.api import check_provider as preflight

    preflight(planned)
    err.print("preflight: the provider carries tool calls and their results intact", highlight=False)


def print_run_summary(result) -> None:
    done = len(result.records)
    infra = sum(r.error_kind == "infra" for r in result.records)
    retried = sum(r.retries for r in result.records)
    earlier = f" ({result.already_done} were done before this resume)" if result.already_done else ""
    err.print(f"{done} runs finished now{earlier}, {result.planned} planned; {infra} infra errors, "
              f"{retried} retried provider calls", highlight=False)
    diverged = [r.run_id for r in result.records if r.replay_divergence]
    if diverged:
        err.print(f"[yellow]replay:[/yellow] {len(diverged)} run(s) diverged from the recording "
                  f"({', '.join(diverged[:5])}{' …' if len(diverged) > 5 else ''}); `bench regress` names each step",
                  highlight=False)
    flagged = [r.run_id for r in result.records if r.empty_tool_args]
    if flagged:
        err.print(f"[yellow]warning:[/yellow] {len(flagged)} runs got tool calls with empty arguments "
                  f"for tools that take some ({', '.join(flagged[:5])}{' …' if len(flagged) > 5 else ''}); "
                  "the provider may be dropping them: check with `bench doctor`", highlight=False)
    if result.halted:
        err.print(f"[yellow]stopped early:[/yellow] {result.halted}", highlight=False)


@app.command()
def synthesize(
    domain: Annotated[str, typer.Option(help="The domain whose tool the model builds.")],
    model: Annotated[str, typer.Option(help="A LiteLLM model string, or offline: scripted/synth-oracle, "
                                            "scripted/synth-broken, local/<name>.")],
    budget: Annotated[int, typer.Option(min=1, help="Maximum tool calls for the episode.")] = DEFAULT_SYNTHESIS_BUDGET,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="Synthesis folder (default results/synthesis-<domain>-<time>).")] = None,
    run_timeout: Annotated[Optional[float], typer.Option(help="Seconds of wall time for the episode.")] = None,
    max_tokens_per_run: Annotated[Optional[int], typer.Option(min=1, help="Token cap for the episode.")] = None,
    max_cost: Annotated[Optional[float], typer.Option(help="Dollar cap for the episode.")] = None,
    tool_timeout: ToolTimeout = DEFAULT_TOOL_TIMEOUT,
    rpm: Annotated[Optional[int], typer.Option(min=1, help="Model calls per minute to the provider.")] = None,
    max_retries: MaxRetries = DEFAULT_MAX_RETRIES,
    request_timeout: RequestTimeout = None,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    seed: Seed = None,
    reasoning_effort: ReasoningEffort = None,
    api_base: ApiBase = None,
    model_arg: ModelArgs = None,
    env_file: EnvFile = None,
    record: Annotated[bool, typer.Option(help="Record every model request and response.")] = False,
    price: Annotated[Optional[str], typer.Option(
        metavar="IN,OUT", help="Dollars per million input and output tokens, for a model LiteLLM does not price.")] = None,
    skip_preflight: Annotated[bool, typer.Option(
        help="Start with a real model without first checking the provider with `bench doctor`'s round trip.")] = False,
) -> None:
    """Let a model build a domain's typed tool from its replica and design questions, and freeze it.

    The model gets the browsing arm's tools plus write_tool, try_tool and submit_tool, and the
    domain's design questions with their answers (never the held-out ones). A submitted tool is
    frozen under OUT/tool/; score it with `bench run --arm synthesized --tool-from OUT`. Exit 1
    when no tool was submitted (OUT/synthesis.json says why)."""
    for value, flag in [(request_timeout, "--request-timeout"), (run_timeout, "--run-timeout"),
                        (max_cost, "--max-cost"), (tool_timeout, "--tool-timeout")]:
        positive(value, flag)
    prices = parse_price(price)
    settings = generation(temperature, max_tokens, seed, reasoning_effort, api_base, model_arg, env_file)

    from armbench.api import plan_synthesis
    from armbench.engine.synthesis import synthesize as run_synthesis

    planned = plan_synthesis(
        model, domain, out=out_dir, price=prices, completion_kwargs=settings, budget=budget, run_timeout=run_timeout,
        max_tokens_per_run=max_tokens_per_run, max_cost_per_run=max_cost, tool_timeout=tool_timeout, rpm=rpm,
        max_retries=max_retries, request_timeout=request_timeout, record=record, skip_preflight=skip_preflight,
    )
    if planned.model.needs_preflight and not skip_preflight:
        check_provider(planned)
    err.print(f"synthesis: {model} builds a tool for {domain} (budget {budget} tool calls) in {planned.folder}",
              highlight=False)
    try:
        synthesis = asyncio.run(until_terminated(
            run_synthesis(planned.domain, planned.config, planned.folder, planned.model)))
    except (KeyboardInterrupt, Terminated) as stopped:
        err.print(f"{'terminated' if isinstance(stopped, Terminated) else 'interrupted'}: no tool was frozen")
        raise typer.Exit(143 if isinstance(stopped, Terminated) else 130) from None
    r = synthesis.record
    cost = "unknown cost" if r.cost_usd is None else f"${r.cost_usd:.4f}"
    spent = (f"{r.actions} tool calls ({r.tool_errors} errors), {r.prompt_tokens + r.completion_tokens:,} tokens, "
             f"{cost}, {r.wall_seconds:.1f} s")
    if synthesis.tool is None:
        err.print(f"[bold red]no tool:[/bold red] {r.failure}; {spent}. Transcript: "
                  f"{planned.folder / r.transcript_path}", highlight=False)
        raise typer.Exit(1)
    out.print(f"tool {r.tool_name} frozen in {synthesis.tool.source_path.parent} (sha256 {r.tool_sha256[:12]}); "
              f"{spent}", highlight=False)
    out.print(f"score it: bench run --arm all --tool-from {planned.folder} --domain {domain} --model MODEL",
              highlight=False)


@app.command()
def doctor(
    model: Annotated[str, typer.Option(help="LiteLLM model string to check.")],
    provider_order: ProviderOrder = None,
    provider_ignore: ProviderIgnore = None,
    request_timeout: RequestTimeout = None,
    max_retries: MaxRetries = 2,
    temperature: Temperature = None,
    max_tokens: MaxTokens = None,
    seed: Seed = None,
    reasoning_effort: ReasoningEffort = None,
    api_base: ApiBase = None,
    model_arg: ModelArgs = None,
    env_file: EnvFile = None,
) -> None:
    """Probe a provider: does a tool call with a required argument survive the round trip?"""
    from armbench.api import probe_client
    from armbench.doctor import run_probe

    positive(request_timeout, "--request-timeout")
    settings = generation(temperature, max_tokens, seed, reasoning_effort, api_base, model_arg, env_file)
    client = probe_client(model, settings, comma_list(provider_order), comma_list(provider_ignore), max_retries,
                          request_timeout)
    checks = asyncio.run(run_probe(client))
    for check in checks:
        out.print(check.line(), highlight=False)
    if not all(check.ok for check in checks):
        raise typer.Exit(1)


@app.command()
def regress(
    run_set: Annotated[Path, typer.Argument(help="The run set to judge (e.g. tonight's replay or live run).")],
    baseline: Annotated[Path, typer.Option(help="The run set it must not fall behind (e.g. the committed recording).")],
    max_cost_rise: Annotated[float, typer.Option(min=0, help="Allowed rise of mean cost per run (0.25 = 25%).")] = 0.25,
    max_tokens_rise: Annotated[float, typer.Option(min=0, help="Allowed rise of mean tokens per run.")] = 0.25,
    max_actions_rise: Annotated[float, typer.Option(min=0, help="Allowed rise of mean actions per run.")] = 0.25,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Exit 1 when RUN_SET regresses against --baseline: accuracy below the baseline's noise, cost,
    tokens or actions up beyond a threshold, more infra errors, or a replay that diverged or flipped
    a grade. Exit 0 otherwise."""
    from armbench.analysis.compare import manifest_differences
    from armbench.analysis.publish import dumps, read_manifest
    from armbench.analysis.regress import Thresholds, flips_table, groups_table
    from armbench.analysis.regress import regress as judge
    from armbench.analysis.tables import to_rich
    from armbench.engine.store import open_run_set

    base_store, store = open_run_set(baseline), open_run_set(run_set)
    base_manifest, manifest = read_manifest(base_store), read_manifest(store)
    replayed = "replay_of" in manifest  # deterministic: any flip is a regression
    base_records, records = base_store.records_to_report(), store.records_to_report()
    verdict = judge(base_records, records, Thresholds(max_cost_rise, max_tokens_rise, max_actions_rise), exact=replayed)
    if as_json:
        print(dumps(verdict.to_json()))
    else:
        out.print(f"[bold]baseline[/bold] {baseline} (model {base_manifest.get('model', '?')}); "
                  f"[bold]candidate[/bold] {run_set} (model {manifest.get('model', '?')})",
                  highlight=False)
        for difference in manifest_differences(base_manifest, manifest, base_records, records):
            out.print(f"[yellow]note:[/yellow] {difference}", highlight=False)
        for note in verdict.notes:
            out.print(f"[yellow]note:[/yellow] {note}", highlight=False)
        out.print(to_rich(groups_table(verdict)))
        if verdict.flips:
            out.print(to_rich(flips_table(verdict)))
        for run_id, divergence in verdict.divergences[:MAX_LISTED]:
            out.print(f"[red]diverged[/red] {run_id}: {divergence}", highlight=False)
        if len(verdict.divergences) > MAX_LISTED:
            out.print(f"… and {len(verdict.divergences) - MAX_LISTED} more diverged runs", highlight=False)
        for problem in verdict.problems:
            out.print(f"[bold red]REGRESSION[/bold red] {problem}", highlight=False)
        if verdict.ok:
            out.print("[bold green]OK[/bold green]: no regression against the baseline", highlight=False)
    if not verdict.ok:
        raise typer.Exit(1)


MAX_LISTED = 10


@app.command()
def report(
    run_sets: Annotated[list[Path], typer.Argument(
        help="A run set folder; give two (A then B) to compare them, three or more for a leaderboard.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the figures as JSON (writes nothing).")] = False,
    screenshots: Annotated[bool, typer.Option(
        "--screenshots", help="Also write PNGs of report.html and one question's page to RUN_SET/screenshots (needs Chromium).")] = False,
    full: Annotated[bool, typer.Option(
        "--full", help="Print every table, not the one-screen summary (report.md and report.html have them all).")] = False,
    table_format: Annotated[Optional[str], typer.Option(
        "--format", help="Print the study table (one run set) or the leaderboard (three or more) as markdown, "
        "latex or csv, with CIs and run counts.")] = None,
    out_dir: Annotated[Optional[Path], typer.Option(
        "--out", help="With three or more run sets: the folder for leaderboard.png and leaderboard.html (default: the current one).")] = None,
) -> None:
    """Print a run set's summary (a headline per arm pair, a row per domain) and write report.md,
    report.html (every table, runs table with filters and sorting, a page per transcript and per question,
    arms side by side) and plots beside it; compare two run sets; or rank three or more in a leaderboard
    and write its accuracy-vs-spend plot."""
    if screenshots and (as_json or len(run_sets) > 1):
        raise UserError("--screenshots goes with one run set's report, without --json")
    if full and (as_json or len(run_sets) > 1):
        raise UserError("--full goes with one run set's report, without --json")
    if out_dir and len(run_sets) < 3:
        raise UserError("--out goes with three or more run sets (a leaderboard)")
    if table_format and (len(run_sets) == 2 or full or screenshots):
        raise UserError("--format prints one run set's study table or a leaderboard of three or more run sets, "
                        "without --full or --screenshots")
    if table_format and as_json:
        raise UserError("give --json or --format, not both")
    if table_format not in (None, *TABLE_FORMATS):
        raise UserError(f"--format is one of {', '.join(TABLE_FORMATS)}, not {table_format!r}")
    if len(run_sets) > 2:
        print_leaderboard(run_sets, as_json=as_json, table_format=table_format, out_dir=out_dir or Path.cwd())
    elif len(run_sets) == 2:
        compare_run_sets(*run_sets, as_json=as_json)
    elif table_format:
        print_study_table(run_sets[0], table_format)
    elif as_json:
        from armbench.analysis.publish import as_json as report_json
        from armbench.analysis.publish import dumps
        from armbench.engine.store import open_run_set

        print(dumps(report_json(open_run_set(run_sets[0]).records_to_report())))
    else:
        print_report(run_sets[0], full=full)
        if screenshots:
            write_screenshots(run_sets[0])


def write_screenshots(run_set: Path) -> None:
    """Chromium missing or not starting is one line on stderr; the report stands without them."""
    from rich.markup import escape

    from armbench.analysis.screenshots import take_screenshots
    from armbench.engine.store import open_run_set

    try:
        taken = asyncio.run(take_screenshots(run_set, open_run_set(run_set).records_to_report()))
    except UserError as error:  # e.g. Chromium's own "[pid=…]" lines: text, not markup
        err.print(f"[yellow]screenshots skipped:[/yellow] {escape(str(error))}", highlight=False)
        return
    err.print("screenshots written to " + ", ".join(map(str, taken)), highlight=False)


def print_report(run_set: Path, *, full: bool = False) -> None:
    """Write the report's files; print the one-screen summary, or with `full` every table."""
    from armbench.analysis.overview import exclusions, headlines, study_table, tool_drift_notices
    from armbench.analysis.publish import read_manifest, title_of, write_report
    from armbench.analysis.report import by_domain
    from armbench.analysis.summary import summarize
    from armbench.analysis.tables import prose, to_rich, to_rich_split
    from armbench.engine.store import open_run_set

    store = open_run_set(run_set)
    tables, written = write_report(store)
    out.print(prose(title_of(store), out.width, "bold"))
    if full:
        for table in tables:
            out.print(to_rich(table))
        out.print("report written to " + ", ".join(str(path) for path in written), highlight=False)
        return
    records = store.records_to_report()
    figures = by_domain(records)
    for line in headlines(figures):
        out.print(prose(line, out.width, "bold"))
    for warning in filter(None, [exclusions(summarize(records)), *tool_drift_notices(read_manifest(store))]):
        out.print(prose(warning, out.width, "yellow"))
    out.print(to_rich_split(study_table(figures)))
    markdown, html = written[:2]
    out.print(prose(f"CIs and every table: `bench report --full`, or {markdown.name} and {html.name} in "
                    f"{markdown.parent}", out.width))


def compare_run_sets(a: Path, b: Path, *, as_json: bool) -> None:
    from armbench.analysis.compare import compare_run_sets as compare
    from armbench.analysis.compare import manifest_differences, run_set_labels
    from armbench.analysis.publish import dumps, read_manifest
    from armbench.analysis.tables import to_rich
    from armbench.engine.store import open_run_set
    from armbench.web_profile import profile_name_in

    store_a, store_b = open_run_set(a), open_run_set(b)
    manifest_a, manifest_b = read_manifest(store_a), read_manifest(store_b)
    name_a, name_b = run_set_labels(a, b, profile_name_in(manifest_a), profile_name_in(manifest_b))
    records_a, records_b = store_a.records_to_report(), store_b.records_to_report()
    differences = manifest_differences(manifest_a, manifest_b, records_a, records_b)
    comparison = compare(records_a, records_b, name_a, name_b)
    if as_json:
        print(dumps({"run_set_a": str(a), "run_set_b": str(b), "differences": differences, **comparison.to_json()}))
        return
    out.print(f"[bold]A = {name_a}[/bold]: {a} (model {manifest_a.get('model', '?')})", highlight=False)
    out.print(f"[bold]B = {name_b}[/bold]: {b} (model {manifest_b.get('model', '?')})", highlight=False)
    for difference in differences:
        out.print(f"[yellow]note:[/yellow] {difference}", highlight=False)
    for table in comparison.tables():
        out.print(to_rich(table))


TABLE_FORMATS = ("markdown", "latex", "csv")  # analysis.tables.PAPER_FORMATS, named without loading it


def print_study_table(folder: Path, table_format: str) -> None:
    """The study's table of one run set (per domain and arm: correct, CI, cost, time) for a paper."""
    from armbench.analysis.report import by_domain, domain_table
    from armbench.analysis.tables import PAPER_FORMATS
    from armbench.engine.store import open_run_set

    print(PAPER_FORMATS[table_format](domain_table(by_domain(open_run_set(folder).records_to_report()))), end="")


def print_leaderboard(folders: list[Path], *, as_json: bool, table_format: str | None, out_dir: Path) -> None:
    """The leaderboard as JSON (writing nothing), as a table in `table_format`, or in the terminal;
    the last two also write leaderboard.png and leaderboard.html (its tables and the plot) to
    `out_dir` (said on stderr, so a table pipes clean)."""
    from armbench.analysis.html import render_leaderboard
    from armbench.analysis.leaderboard import RunSet, leaderboard
    from armbench.analysis.publish import dumps, read_manifest
    from armbench.analysis.tables import PAPER_FORMATS, to_rich
    from armbench.engine.store import open_run_set

    stores = [open_run_set(folder) for folder in folders]
    board = leaderboard([RunSet(folder, read_manifest(store), store.records_to_report())
                         for folder, store in zip(folders, stores)])
    if as_json:
        print(dumps(board.to_json()))
        return
    if table_format:
        print("\n".join(PAPER_FORMATS[table_format](table) for table in board.tables()), end="")
    else:
        for run_set in board.run_sets:
            out.print(f"[bold]{escape(run_set.label)}[/bold]: {escape(run_set.folder)}", highlight=False)
            for difference in run_set.differences:
                out.print(f"[yellow]note:[/yellow] {escape(difference)} (vs {escape(board.run_sets[0].label)})",
                          highlight=False)
        for table in board.tables():
            out.print(to_rich(table))
    plot = board.plot()
    out_dir.mkdir(parents=True, exist_ok=True)
    path, page = out_dir / f"{plot.name}.png", out_dir / "leaderboard.html"
    path.write_bytes(plot.png)
    page.write_text(render_leaderboard(board, plot), encoding="utf-8")
    err.print(f"leaderboard plot written to {path}" + (f" ({plot.note})" if plot.note else "")
              + f"; tables and plot in {page}", highlight=False)


@app.command()
def show(
    run_id: Annotated[str, typer.Argument(help="A run id, e.g. gpus-heldout-03.tooled.r1.")],
    run_set: Annotated[Optional[Path], typer.Option(help="The run set holding it (default: the newest under results/ that does).")] = None,
    full: Annotated[bool, typer.Option(help="Show system prompts and tool results in full.")] = False,
) -> None:
    """Show one run's transcript: messages, tool calls and results, the answer and its grade."""
    from armbench.analysis.show import render
    from armbench.analysis.transcript import locate, read_turns, reference_answer
    from armbench.paths import RESULTS_DIR

    store, record = locate(run_id, run_set, RESULTS_DIR)
    out.print(render(record, read_turns(store.directory, record), reference_answer(record), full=full))



@export_app.command("inspect")
def export_inspect(
    run_set: Annotated[Path, typer.Argument(help="The run set folder to export.")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Folder for the logs (default: RUN_SET/inspect).")] = None,
) -> None:
    """Write RUN_SET as inspect_ai eval logs (one per domain × set × arm) for `inspect view --log-dir`.
    Needs inspect-ai, the `inspect` extra: pip install -e '.[inspect]'."""
    from armbench.analysis.inspect_export import export_run_set

    written = export_run_set(run_set, out_dir)
    for note in written.notes:
        err.print(f"[yellow]note:[/yellow] {note}", highlight=False)
    folder = shown_path(written.logs[0].parent)
    logs = f"{len(written.logs)} inspect log" + ("s" if len(written.logs) > 1 else "")
    out.print(f"{logs} ({written.samples} runs) written to {folder}", highlight=False, soft_wrap=True)
    out.print(f"open them with: inspect view --log-dir {folder}", highlight=False, soft_wrap=True)


@import_app.command("inspect")
def import_inspect(
    logs: Annotated[list[Path], typer.Argument(metavar="LOG", help="inspect logs of `inspect eval armbench/questions` (one model).")],
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run set folder (default results/inspect-<time>).")] = None,
) -> None:
    """Read inspect_ai logs of armbench's task into a run set, for `bench report` (with `bench run`'s
    run sets too). Needs inspect-ai, the `inspect` extra: pip install -e '.[inspect]'."""
    import datetime as dt

    from armbench.analysis.inspect_import import import_logs
    from armbench.paths import RESULTS_DIR

    folder = out_dir or RESULTS_DIR / f"inspect-{dt.datetime.now():%Y%m%d-%H%M%S}"
    imported = import_logs(logs, folder)
    graded = [record for record in imported.records if record.correct is not None]
    runs = f"{len(imported.records)} run" + ("s" if len(imported.records) > 1 else "")
    logs_read = f"{imported.log_count} log" + ("s" if imported.log_count > 1 else "")
    out.print(f"{runs} from {logs_read} written to {shown_path(imported.directory)}: "
              f"{sum(bool(record.correct) for record in graded)}/{len(graded)} correct", highlight=False, soft_wrap=True)
    out.print(f"report them with: bench report {shown_path(imported.directory)}", highlight=False, soft_wrap=True)


@questions_app.command("verify")
def questions_verify() -> None:
    """Re-derive every reference answer from the replica data; name each mismatch, and each held-out
    set whose domain's tool changed since it was frozen."""
    from armbench.questions import load_sets, tool_drift, verify

    question_sets = load_sets()
    problems = verify(question_sets)
    for problem in problems:
        err.print(f"[red]MISMATCH[/red] {problem}", highlight=False)
    for key, why in tool_drift(question_sets).items():
        err.print(f"[yellow]FLAGGED[/yellow] {key}: {why}", highlight=False)
    count = sum(len(qs.questions) for qs in question_sets)
    if problems:
        err.print(f"{len(problems)} problem(s) in {count} questions")
        raise typer.Exit(1)
    out.print(f"all {count} references re-derived from the data and match")


@questions_app.command("freeze")
def questions_freeze() -> None:
    """Verify every set, then write each set's hash to questions/questions.lock."""
    from armbench.paths import lock_file
    from armbench.questions import freeze, load_sets, verify

    question_sets = load_sets()
    problems = verify(question_sets)
    if problems:
        raise UserError("refusing to freeze sets that do not verify:\n" + "\n".join(problems))
    freeze(question_sets)
    out.print(f"froze {', '.join(qs.key for qs in question_sets)} in {lock_file()}")


@questions_app.command("new")
def questions_new(
    domain: Annotated[str, typer.Argument(metavar="DOMAIN", help="The question's domain, e.g. crashes.")],
    set_: Annotated[str, typer.Argument(metavar="SET", help="Its set, e.g. heldout-2 (made when it is new).")],
    text: Annotated[str, typer.Option(help="The question as the model reads it.")],
    answer_format: Annotated[str, typer.Option(help='How to write the answer, e.g. "state names written out in full".')],
    sql: Annotated[str, typer.Option(help="SQL over the replica tables whose first column is the answer.")],
    tie_rule: Annotated[Optional[str], typer.Option(help="How ties count, when rows can tie.")] = None,
    number_format: Annotated[Optional[str], typer.Option("--format", help='How a number is written, e.g. "{:.1f}".')] = None,
    tooled: Annotated[Optional[str], typer.Option(help='The tooled solution as JSON: {"calls": [{"tool", "args"}], '
                                              '"answer": {"from": "rows", "field": ...}}.')] = None,
    shape: Annotated[Optional[str], typer.Option(help="What it asks, a comma list of: pick, count, average, list, "
                                                      "rank, tie, threshold, null, paginated.")] = None,
    browsing_code: Annotated[Optional[Path], typer.Option(
        help="A python script that reads the replica at {replica:<domain>} and prints the answer, one item a "
             "line (default: the derived solution, when the domain's site reader allows it).")] = None,
    premise: Annotated[Optional[str], typer.Option(
        help='What the question takes as given, shown after it as "Given: ...".')] = None,
) -> None:
    """Write a question from the data: compute its answer, refuse it when it has none, when ties decide
    it without a rule or a tool's example answers it, check its solutions, and add it to its set's file."""
    from armbench.authoring import new_question, parse_tooled

    written = new_question(domain, set_, text, answer_format, sql, tie_rule=tie_rule, number_format=number_format,
                           tooled=parse_tooled(tooled) if tooled else None,
                           shapes=[part.strip() for part in (shape or "").split(",") if part.strip()],
                           browsing_code=read_text(browsing_code, "browsing script") if browsing_code else None,
                           premise=premise)
    question = written.question
    out.print(f"wrote {question.id} to {shown_path(written.path)}: answer {question.join_answer(question.answer)}",
              highlight=False, soft_wrap=True)
    for note in written.notes:
        out.print(f"note: {note}", highlight=False, soft_wrap=True)
    out.print("then: bench questions verify, and bench questions freeze", highlight=False)


@questions_app.command("list")
def questions_list() -> None:
    """List every question set with its size, lock state and the shapes its questions take."""
    from collections import Counter

    from armbench.questions import load_sets, tool_drift, unlocked_sets

    question_sets = load_sets()
    unlocked, tool_changed = set(unlocked_sets(question_sets)), tool_drift(question_sets)
    for qs in question_sets:
        state = "UNLOCKED" if qs.key in unlocked else "locked"
        if qs.key in tool_changed:
            state += ", tool changed since frozen"
        count = len(qs.questions)
        shapes = Counter(shape for question in qs.questions for shape in question.shapes or ["untagged"])
        shown = " ".join(f"{shape}:{n}" for shape, n in sorted(shapes.items()))
        out.print(f"{qs.key:24} {count:3} question{'' if count == 1 else 's'}  {state}", highlight=False)
        out.print(f"    {shown}", highlight=False)


@data_app.command("build")
def data_build(
    source: Annotated[Optional[Path], typer.Option(help="The shared data folder.")] = None,
    domain: Annotated[str, typer.Option(help="Domains to build: a comma list, or all.")] = ALL,
) -> None:
    """Rebuild every domain's (or --domain's) Parquet tables: from the shared data folder, or a table
    domain's own source/ CSV and domain.yaml."""
    from armbench.domains import DOMAINS
    from armbench.paths import SHARED_DATA_DIR

    shared = source or SHARED_DATA_DIR
    chosen = [DOMAINS[name] for name in domain_names(domain)]
    missing = [entry.name for entry in chosen if entry.shared_data and not (shared / entry.name).is_dir()]
    if missing:
        raise UserError(f"shared data folder {shared} lacks {', '.join(missing)}; pass --source")
    for entry in chosen:
        for path in entry.build_tables(shared):
            out.print(f"wrote {path}")


@replicas_app.command("serve")
def replicas_serve(
    domain: Annotated[str, typer.Option(help="Domains to serve: a comma list, or all.")] = ALL,
) -> None:
    """Serve every replica (or --domain's) on 127.0.0.1 and its UNIX socket until Ctrl-C."""
    from armbench.domains import DOMAINS
    from armbench.replicas.serve import endpoint, serve_forever

    replicas = [DOMAINS[name].replica for name in domain_names(domain)]
    for target in map(endpoint, replicas):
        out.print(f"{target.domain}: {target.base_url}/  (socket {target.socket_path})")
    serve_forever(replicas, on_ready=lambda: out.print("ready: every replica serves its data; Ctrl-C stops them"))


@mcp_app.command("serve")
def mcp_serve(
    domain: Annotated[str, typer.Argument(help="The domain whose typed tools to serve, e.g. gpus.")],
    http: Annotated[Optional[int], typer.Option(
        min=0, max=65535, metavar="PORT", help="Serve streamable HTTP on 127.0.0.1:PORT (0: any free port).")] = None,
) -> None:
    """Serve DOMAIN's typed tools over MCP: stdio by default, streamable HTTP with --http."""
    from armbench.arms.mcp_server import serve

    try:
        serve(domain, http, announce=lambda url: err.print(f"serving {domain} tools at {url}", highlight=False))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


@domain_app.command("new")
def domain_new(
    name: Annotated[str, typer.Argument(help="The new domain's name: lower-case letters, digits and _, e.g. cities.")],
    csv: Annotated[Path, typer.Option("--csv", help="The CSV to build it from (a header line, then one row per entity).")],
    key: Annotated[Optional[str], typer.Option(help="The column naming each row (default: the first unique, non-empty one).")] = None,
    title: Annotated[Optional[str], typer.Option(help="How every arm's system prompt names the replica.")] = None,
) -> None:
    """Scaffold a table domain from a CSV: domain.yaml, the data, empty question sets."""
    import armbench.domains
    from armbench.domains import DOMAINS, domains_dir
    from armbench.paths import questions_dir
    from armbench.tablekit.check import Taken
    from armbench.tablekit.scaffold import new_domain

    taken = Taken.of(DOMAINS.values(), reserved=vars(armbench.domains))
    made = new_domain(name, csv, key=key, title=title, taken=taken, domains_dir=domains_dir(),
                      questions_dir=questions_dir())
    for path in made.written:
        out.print(f"wrote {shown_path(path)}", highlight=False, markup=False, soft_wrap=True)
    kinds = ", ".join(f"{field} {kind}" for field, kind in made.kinds.items())
    out.print(f"{name}: {made.rows:,} rows; fields {kinds}; key {made.key}; port offset {made.port_offset}",
              highlight=False, markup=False, soft_wrap=True)
    out.print("next:", highlight=False, soft_wrap=True)
    for number, step in enumerate(made.next_steps(shown_path), start=1):
        out.print(f"  {number}. {step}", highlight=False, markup=False, soft_wrap=True)


@domain_app.command("check")
def domain_check(
    name: Annotated[str, typer.Argument(help="The domain to check, e.g. crashes or cities.")],
    parity: Annotated[bool, typer.Option(help="Also read the whole replica site with the domain's site "
                                              "reader and compare it with the tool's rows.")] = True,
) -> None:
    """Check a domain, one line per problem, exit 2 if any: a table domain's domain.yaml against its CSV
    and data/, and any domain's site against its tool (site-tool parity, armbench/domains/parity.py)."""
    from armbench.domains import DOMAINS, domains_dir
    from armbench.tablekit.check import Taken, check, locate
    from armbench.tablekit.spec import SPEC_FILE

    entry = DOMAINS.get(name)
    problems, lines = [], []
    if entry is None or (entry.tables.directory.parent / SPEC_FILE).is_file():
        checked = check(locate(name, DOMAINS, domains_dir()), Taken.of(DOMAINS.values()))
        problems += checked.problems
        lines += [f"ok: {name}: {checked.summary}"] + [f"note: {note}" for note in checked.notes]
    if parity and not problems and name in DOMAINS:
        found = site_tool_parity(DOMAINS[name])
        if found is None:
            lines.append(f"note: {name} has no site reader (armbench/domains/{name}/site_reader.py): parity not checked")
        else:
            problems += found.problems
            lines.append(f"ok: {found.summary}")
    for problem in problems:
        err.print(problem, highlight=False, markup=False, soft_wrap=True)
    if problems:
        raise typer.Exit(2)
    for line in lines:
        out.print(line, highlight=False, markup=False, soft_wrap=True)


def site_tool_parity(domain):
    """The domain's site read whole against its tool (its replica started for it), or None without a reader."""
    from armbench.domains.parity import check_parity, site_reader
    from armbench.replicas.supervisor import replicas_running

    if site_reader(domain) is None:
        return None
    with replicas_running([domain.replica]) as endpoints:
        return check_parity(domain, endpoints[domain.name].base_url)


Opt = typer.Option


@app.command()
def plan(
    model: Annotated[str, Opt(help="A model string, as for `bench run`.")],
    arm: Annotated[str, Opt(help="As for `bench run`.")] = ALL,
    set_: Annotated[str, Opt("--set", help="As for `bench run`.")] = ALL,
    domain: Annotated[str, Opt(help="As for `bench run`.")] = ALL,
    runs: Annotated[int, Opt(min=1, help="Repeats per question and arm.")] = 1,
    question: Annotated[Optional[str], Opt(help="Only these ids.")] = None,
    budget: Annotated[int, Opt(min=1, help="Tool calls/run.")] = DEFAULT_BUDGET,
    price: Annotated[Optional[str], Opt(metavar="IN,OUT")] = None,
    tool_from: ToolFrom = None,
    max_runs: Annotated[int, Opt(min=1)] = DEFAULT_MAX_RUNS,
    from_: Annotated[Optional[Path], Opt("--from", help="Run set whose tokens "
                     "per question and arm to expect.")] = None,
    discordance: Annotated[float, Opt(help="Assumed share of pairs where "
                           "one arm only is right.")] = DEFAULT_DISCORDANCE,
    difference: Annotated[Optional[float], Opt(help="Accuracy difference "
                          "to detect: print the --runs it needs.")] = None,
    as_json: Annotated[bool, Opt("--json", help="Print JSON.")] = False,
) -> None:
    """What `bench run` would run, cost and can show; runs nothing."""
    from armbench.api import plan_spending
    from armbench.arms import ARMS
    from armbench.questions import set_names

    planned = plan_spending(
        model, domains=None if domain == ALL else domain_names(domain),
        sets=None if set_ == ALL else expand(set_, set_names(), "set"),
        arms=None if arm == ALL else expand(arm, list(ARMS), "arm"),
        questions=None if question is None else comma_list(question),
        tool_from=tool_from, runs=runs, budget=budget, max_runs=max_runs,
        price=parse_price(price), token_source=from_,
        discordance=discordance, difference=difference)
    if as_json:
        from armbench.analysis.publish import dumps

        print(dumps(planned.to_json()))
        return
    from armbench.analysis.planning import plan_lines

    out.print("\n".join(plan_lines(planned)), highlight=False, markup=False)

def shown_path(path: Path) -> str:
    """`path` relative to the working folder when it is inside it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def main(argv: list[str] | None = None) -> None:
    try:
        from armbench.domains import BROKEN, register_from_environment

        register_from_environment()
        for problem in BROKEN.values():  # left out; naming the domain is the error itself
            err.print(f"[yellow]warning:[/yellow] a domain is left out: {problem}", highlight=False)
        app(args=argv, standalone_mode=True)
    except UserError as error:
        err.print(f"[bold red]error:[/bold red] {escape(str(error))}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
