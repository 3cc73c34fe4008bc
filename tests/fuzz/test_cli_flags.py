"""Fuzz: `bench run` with generated flags exits 0 or 2 with a message, never with a traceback.

`bench run` has no dry run, so every argument list ends with one flag that must refuse the run (the
last value of a flag wins): an early one that its own check refuses before a model is loaded (a
run count of 0, an unknown domain, a cost cap of nan, ...), or a late one, `--question` naming no
question, refused after the model is checked and the question sets are loaded. Before it, any of
`run`'s flags (read from the command itself, so a new flag is fuzzed too) with hostile values: bad
numbers, nan, inf, negatives, empty strings, unknown and odd-unicode names, comma lists, paths.
As a second guard, starting a run set, its preflight, or making its folder fails the test, and the
working directory is a scratch folder.
"""
from __future__ import annotations

import contextlib
import io
import os
import tempfile
import typing
from pathlib import Path

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st

from armbench.arms import ARMS
from armbench.cli import app, main, run
from armbench.domains import DOMAINS
from armbench.questions import set_names
from tests.fuzz.hostile import FUZZ, examples, floats, hostile_value

EXAMPLES = examples(250)
RUN = typer.main.get_command(app).commands["run"]
OPTIONS = [param for param in RUN.params if param.opts[0].startswith("--")]  # typer has its own click: no isinstance
VALUED = [option for option in OPTIONS if not option.is_flag and option.opts[0] != "--model"]
SWITCHES = [name for option in OPTIONS if option.is_flag for name in (*option.opts, *option.secondary_opts)]
EARLY_REFUSALS = [("--max-cost", "nan"), ("--runs", "0"), ("--concurrency", "-1"), ("--budget", "nan"),
                  ("--domain", "nosuch"), ("--domain", ""), ("--set", " , "), ("--arm", "browsing,nosuch"),
                  ("--max-cost-per-run", "-inf"), ("--request-timeout", "0"), ("--run-timeout", "inf"),
                  ("--price", "0.1"), ("--rpm", "²"), ("--max-retries", "-1")]  # the first: Hypothesis's favourite
LATE_REFUSAL = ("--question", "no-such-question-fuzz")
NAMES = [*ARMS, *set_names(), *DOMAINS, "all", "ALL", "gpus,", ",gpus", ",", " gpus ", "gpus,gpus", "gpus,all",
         "design,heldout,design", "tooled,browsing", "gpüs", "ｇｐｕｓ", "gpus\u200b", "caf\udce9", "\udcff"]
MODELS = ["scripted/oracle", "scripted/oracle+faults=0.5", "scripted/oracle+faults=nan", "scripted/oracle+seed=²",
          "scripted/oracle+latency=-1", "scripted/oracle+", "scripted/", "scripted/nosuch", "replay/", "replay/nowhere",
          "replay/\udcff", "local/nosuch", "local/", "nosuch", "", "/", "openai/", "openai/gpt-4o-mini", "ｏｐｅｎａｉ/x"]

# Values a flag of each type takes, so that many argument lists get past parsing to `run`'s own checks.
PLAUSIBLE = {
    int: st.integers(1, 8).map(str),
    float: st.sampled_from(["0.5", "1", "30", "120", "1e3"]),
    Path: st.sampled_from(["out", "results/x", ".", "/", "/proc/self", "/dev/null", "no/such/dir", "~"]),
    str: st.sampled_from(NAMES),
}
HINTS = typing.get_type_hints(run)  # Optional[int] -> int: the flag's own type


def kind_of(option) -> type:
    hint = HINTS.get(option.name, str)
    return next((t for t in typing.get_args(hint) if t is not type(None)), hint)


def values_for(option) -> st.SearchStrategy[str]:
    """Two in three values plausible for the flag's type, the rest hostile; never a NUL byte (argv
    cannot hold one), while a byte that is not UTF-8 arrives as a lone surrogate (as in NAMES)."""
    hostile = st.one_of(hostile_value, floats, st.sampled_from(NAMES)).map(lambda text: text.replace("\x00", ""))
    plausible = PLAUSIBLE.get(kind_of(option), PLAUSIBLE[str])
    return st.one_of(plausible, plausible, hostile)


flag = st.one_of(
    st.sampled_from(VALUED).flatmap(lambda option: values_for(option).map(lambda v: [option.opts[0], v])),
    st.sampled_from(VALUED).flatmap(lambda option: values_for(option).map(lambda v: [f"{option.opts[0]}={v}"])),
    st.sampled_from(SWITCHES).map(lambda name: [name]),
)
refusal = st.one_of(st.sampled_from(EARLY_REFUSALS), st.just(LATE_REFUSAL))
argv = st.tuples(st.sampled_from(MODELS), st.lists(flag, max_size=4), refusal).map(
    lambda parts: ["run", "--model", parts[0], *(word for pair in parts[1] for word in pair), *parts[2]])


def no_run(*_args, **_kwargs):
    raise AssertionError("the fuzz would have started a run set")


@pytest.fixture
def guarded(monkeypatch, tmp_path):
    """Nothing a run set does can start: its runner, preflight and folder fail the test; a --price is
    not registered (LiteLLM's price table is the whole process's)."""
    import armbench.engine.runner
    import armbench.engine.store
    from armbench.models.model import Model

    monkeypatch.setattr(armbench.engine.runner, "run_set", no_run)
    monkeypatch.setattr("armbench.cli.check_provider", no_run)
    monkeypatch.setattr(armbench.engine.store.RunSetStore, "create", no_run)
    monkeypatch.setattr(Model, "set_price", lambda *_args: None)
    monkeypatch.chdir(tmp_path)


def invoke(args: list[str]) -> tuple[int, str]:
    """`bench` in this process, its output on streams that encode as a UTF-8 terminal's do:
    (exit code, stdout + stderr)."""
    raw_out, raw_err = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(raw_out, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(raw_err, encoding="utf-8", errors="backslashreplace", write_through=True)
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(args)
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else 1
    return code, (raw_out.getvalue() + raw_err.getvalue()).decode("utf-8", "replace")


@pytest.mark.slow
def test_bench_run_refuses_bad_flags_with_exit_2_never_a_traceback(guarded):
    """Property: for 250 generated `bench run` argument lists (hostile values for any of its flags,
    then one refused flag so nothing runs), `main(argv)` exits with 0 (--help) or 2 and a message,
    and raises no other exception."""
    assert os.getcwd().startswith(tempfile.gettempdir())

    @settings(FUZZ, max_examples=EXAMPLES)
    @given(argv)
    def check(args: list[str]) -> None:
        code, shown = invoke(args)
        assert "Traceback" not in shown, shown
        assert code in (0, 2), f"exit {code}: {shown[-500:]}"
        assert code == 0 or shown.strip(), "refused without a word"

    check()
