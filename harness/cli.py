"""The `bench` command line: parse, call, print. Logic lives in the modules it calls."""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from harness.errors import UserError

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="armbench: does a typed query tool help an LLM agent, compared with browsing?",
)
questions_app = typer.Typer(no_args_is_help=True, help="Question sets: list, verify, freeze.")
data_app = typer.Typer(no_args_is_help=True, help="Replica data: rebuild the Parquet tables.")
mcp_app = typer.Typer(no_args_is_help=True, help="MCP: serve a domain's typed tools to any MCP client.")
app.add_typer(questions_app, name="questions")
app.add_typer(data_app, name="data")
app.add_typer(mcp_app, name="mcp")

# Rich falls back to 80 columns when piped; the report table needs more to stay readable.
out = Console(width=None if sys.stdout.isatty() else 160)
err = Console(stderr=True, soft_wrap=True)

ALL = "all"


def expand(value: str, choices: list[str], what: str) -> list[str]:
    names = choices if value == ALL else [v.strip() for v in value.split(",") if v.strip()]
    unknown = [name for name in names if name not in choices]
    if unknown:
        raise UserError(f"unknown {what} {', '.join(map(repr, unknown))}; choose from: {', '.join(choices)}, all")
    return names


@app.command()
def run(
    model: Annotated[str, typer.Option(help="LiteLLM model string, e.g. openai/gpt-4o-mini or scripted/oracle.")],
    arm: Annotated[str, typer.Option(help="Arm name, comma list, or 'all'.")] = ALL,
    set_: Annotated[str, typer.Option("--set", help="design, heldout, comma list, or 'all'.")] = ALL,
    domain: Annotated[str, typer.Option(help="Domain name, comma list, or 'all'.")] = ALL,
    runs: Annotated[int, typer.Option(min=1, help="Repeats of each question per arm.")] = 1,
    concurrency: Annotated[int, typer.Option(min=1, help="Episodes in flight at once.")] = 4,
    budget: Annotated[int, typer.Option(min=1, help="Maximum tool calls per episode.")] = 24,
    out_dir: Annotated[Optional[Path], typer.Option("--out", help="Run set folder (default results/<time>).")] = None,
    allow_unlocked: Annotated[bool, typer.Option(help="Run question sets that differ from questions.lock.")] = False,
    quiet: Annotated[bool, typer.Option(help="No progress bar.")] = False,
    tools: Annotated[Optional[str], typer.Option(
        help="The tooled arm's typed tools from an MCP server: mcp:COMMAND (stdio) or mcp:URL (streamable HTTP).")] = None,
) -> None:
    """Run question sets through arms with a model, grade every run, and print the report."""
    from harness.models.preflight import check_model
    from harness.paths import RESULTS_DIR
    from harness.questions import SET_NAMES, available_domains, load_sets, unlocked_sets
    from harness.report import summarize
    from harness.runner import RunConfig, known_arms, run_set
    from harness.store import RunSetStore

    arms = expand(arm, known_arms(), "arm")
    sets = expand(set_, list(SET_NAMES), "set")
    domains = expand(domain, available_domains(), "domain")
    if tools and len(domains) > 1:
        raise UserError("an MCP server serves one domain's tools; pass --domain with one domain")
    check_model(model)
    question_sets = load_sets(domains, sets if set_ != ALL else None)
    if not question_sets:
        raise UserError("no question sets match --domain/--set")
    drift = unlocked_sets(question_sets)
    if drift and not allow_unlocked:
        raise UserError(
            f"question sets differ from questions/questions.lock: {', '.join(drift)}; run "
            "`bench questions verify` then `bench questions freeze`, or pass --allow-unlocked"
        )
    target = out_dir or RESULTS_DIR / dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    store = RunSetStore(target)
    config = RunConfig(model=model, arms=arms, runs=runs, budget=budget, concurrency=concurrency, tools=tools)
    try:
        asyncio.run(run_set(question_sets, config, store, show_progress=not quiet))
    except KeyboardInterrupt:
        err.print(f"interrupted: finished runs are kept in {store.runs_path}")
        raise typer.Exit(130) from None
    print_report(target, summarize(store.records()))


@app.command()
def report(
    run_set: Annotated[Path, typer.Argument(help="A run set folder (holds runs.jsonl).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the rows as JSON.")] = False,
) -> None:
    """Print the study-style table for a run set and write report.md beside it."""
    from harness.report import summarize
    from harness.store import open_run_set

    rows = summarize(open_run_set(run_set).records())
    if as_json:
        print(json.dumps([row.to_json() for row in rows], indent=2))
        return
    print_report(run_set, rows)


def print_report(run_set: Path, rows) -> None:
    from harness.report import markdown_table, rich_table
    from harness.store import open_run_set

    model = open_run_set(run_set).manifest().get("model", "?")
    title = f"armbench — {model} — {run_set}"
    out.print(rich_table(rows, title))
    (run_set / "report.md").write_text(markdown_table(rows, title), encoding="utf-8")
    out.print(f"report written to {run_set / 'report.md'}")


@questions_app.command("verify")
def questions_verify() -> None:
    """Re-derive every reference answer from the replica data; name each mismatch."""
    from harness.questions import load_sets, verify

    question_sets = load_sets()
    problems = verify(question_sets)
    for problem in problems:
        err.print(f"[red]MISMATCH[/red] {problem}", highlight=False)
    count = sum(len(qs.questions) for qs in question_sets)
    if problems:
        err.print(f"{len(problems)} problem(s) in {count} questions")
        raise typer.Exit(1)
    out.print(f"all {count} references re-derived from the data and match")


@questions_app.command("freeze")
def questions_freeze() -> None:
    """Verify every set, then write each set's hash to questions/questions.lock."""
    from harness.paths import LOCK_FILE
    from harness.questions import freeze, load_sets, verify

    question_sets = load_sets()
    problems = verify(question_sets)
    if problems:
        raise UserError("refusing to freeze sets that do not verify:\n" + "\n".join(problems))
    freeze(question_sets)
    out.print(f"froze {', '.join(qs.key for qs in question_sets)} in {LOCK_FILE}")


@questions_app.command("list")
def questions_list() -> None:
    """List every question set with its size and lock state."""
    from harness.questions import load_sets, unlocked_sets

    question_sets = load_sets()
    drift = set(unlocked_sets(question_sets))
    for qs in question_sets:
        state = "UNLOCKED" if qs.key in drift else "locked"
        out.print(f"{qs.key:24} {len(qs.questions):3} questions  {state}")


@data_app.command("build")
def data_build(
    source: Annotated[Optional[Path], typer.Option(help="The shared data folder.")] = None,
) -> None:
    """Rebuild replicas/data/*.parquet from the shared CSV files."""
    from harness.paths import SHARED_DATA_DIR
    from replicas.data.build import build_all

    try:
        built = build_all(source or SHARED_DATA_DIR)
    except FileNotFoundError as error:
        raise UserError(str(error)) from None
    for path in built:
        out.print(f"wrote {path}")


@mcp_app.command("serve")
def mcp_serve(
    domain: Annotated[str, typer.Argument(help="The domain whose typed tools to serve, e.g. gpus.")],
    http: Annotated[Optional[int], typer.Option(
        min=0, max=65535, metavar="PORT", help="Serve streamable HTTP on 127.0.0.1:PORT (0: any free port).")] = None,
) -> None:
    """Serve DOMAIN's typed tools over MCP: stdio by default, streamable HTTP with --http."""
    from arms.mcp_server import serve

    try:
        serve(domain, http, announce=lambda url: err.print(f"serving {domain} tools at {url}", highlight=False))
    except KeyboardInterrupt:
        raise typer.Exit(130) from None


def main() -> None:
    try:
        app(standalone_mode=True)
    except UserError as error:
        err.print(f"[bold red]error:[/bold red] {error}", highlight=False)
        sys.exit(2)


if __name__ == "__main__":
    main()
