"""What a run set shows while it runs, on stderr: runs done, correct, cost so far, infra errors,
retried provider calls, elapsed time and an estimate of the time left.

On a terminal it is a live bar. Piped (a CI log, `nohup`), it is one line each time another tenth
of the plan is done, so a log shows progress without a line per run. Each distinct infra error
is said once, when it first happens; `bench run` sums up the rest at the end (empty tool
arguments, replay divergences).
"""
from __future__ import annotations

import time
from datetime import timedelta

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

from armbench.types import ErrorKind, RunRecord

STEPS = 10  # piped: a line per tenth of the plan


class Totals:
    """Run-set totals, counting the runs a resume found done: what the progress shows and what the
    stop rules (--max-cost, --max-infra-errors) read."""

    def __init__(self, records: list[RunRecord], spent_aside_usd: float = 0.0):
        """`spent_aside_usd`: what runs a resume set aside to run again cost (their money is spent)."""
        self.done = self.correct = self.infra_errors = self.retries = self.unpriced = 0
        self.cost_usd = spent_aside_usd  # of the priced runs (with a cost cap, an unpriced call is an infra error)
        self.first_infra_error: str | None = None
        for record in records:
            self.add(record)

    def add(self, record: RunRecord) -> None:
        self.done += 1
        self.correct += bool(record.correct)
        self.retries += record.retries
        if record.error_kind is ErrorKind.infra:
            self.infra_errors += 1
            self.first_infra_error = self.first_infra_error or record.error
        if record.cost_usd is None:
            self.unpriced += 1
        else:
            self.cost_usd += record.cost_usd

    @property
    def cost(self) -> str:
        return "cost unknown" if self.unpriced else f"${self.cost_usd:.4f}"

    def line(self, total: int) -> str:
        return (f"{self.done}/{total} runs, {self.correct} correct, {self.cost}, "
                f"{self.infra_errors} infra errors, {self.retries} retries")


class RunProgress:
    """`with RunProgress(...) as progress: progress.add(record)`; `show=False` prints nothing but
    still counts."""

    def __init__(self, description: str, total: int, totals: Totals, *, show: bool = True,
                 console: Console | None = None):
        self.description, self.total, self.show = description, total, show
        self.console = console or Console(stderr=True, soft_wrap=True)
        self.totals = totals
        self.started_with = self.totals.done
        self.started_at = time.monotonic()
        self.live = show and self.console.is_terminal
        self.bar = Progress(
            TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[line]}"), TimeElapsedColumn(), TextColumn("left"), TimeRemainingColumn(),
            console=self.console, disable=not self.live,
        )
        self.task = self.bar.add_task(description, total=total, completed=self.totals.done, line=self.figures())
        self.next_step = self.step_after(self.totals.done)
        self.infra_messages: set[str] = set()

    def __enter__(self) -> RunProgress:
        self.bar.__enter__()
        return self

    def __exit__(self, *exc_info) -> None:
        self.bar.__exit__(*exc_info)

    def figures(self) -> str:
        return (f"{self.totals.correct} correct  {self.totals.cost}  {self.totals.infra_errors} infra errors  "
                f"{self.totals.retries} retries")

    def step_after(self, done: int) -> float:
        """The next run count at which a piped log gets a line: the next whole tenth of the plan."""
        return (done * STEPS // max(self.total, 1) + 1) * self.total / STEPS

    def add(self, record: RunRecord) -> None:
        """Count a finished run (into the shared totals) and show it."""
        self.totals.add(record)
        if record.error_kind is ErrorKind.infra and (record.error or "") not in self.infra_messages:
            self.infra_messages.add(record.error or "")
            if self.show:
                self.console.print(f"[red]infra error:[/red] {record.run_id}: {record.error}", highlight=False)
        self.bar.update(self.task, advance=1, line=self.figures())
        if self.show and not self.live and self.totals.done >= self.next_step:
            self.next_step = self.step_after(self.totals.done)
            self.console.print(f"{self.description}: {self.totals.line(self.total)}, {self.elapsed_and_left()}",
                               highlight=False)

    def elapsed_and_left(self) -> str:
        elapsed = time.monotonic() - self.started_at
        new = self.totals.done - self.started_with
        left = elapsed / new * (self.total - self.totals.done) if new else None
        shown = f"{timedelta(seconds=round(elapsed))} elapsed"
        return shown + (f", ~{timedelta(seconds=round(left))} left" if left is not None else "")
