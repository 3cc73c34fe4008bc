"""Every command the docs show is run here as written: each command line of the shell blocks
(```sh, ```bash, ```console) of README.md and docs/*.md, in order, page by page, in a scratch folder
of the page's own with replicas on ports of their own. A reader who copies a block gets what the
page says: exit 0, or the code a comment on the line names ("# exits 1").

`.venv/bin/` is the project's venv (the scratch folder links to it); the checkout's files a command
reads (`results/recordings/...`, `tests/fixtures/...`) are copied in, so nothing is written into the
checkout. Live providers (`openai/...`, `openrouter/...`) are a loopback OpenAI-style server behind
the base-URL variables LiteLLM reads, with a dummy key: it passes `bench doctor`'s round trip and
then answers every question "42". `make X` is run by CI: the target exists and `.ci/run` runs it.
"""
from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from armbench.paths import ROOT
from armbench.players.probe import PROBE_TOOL, probe_word
from tests.conftest import own_replica_settings
from tests.support.doc_commands import Command, page_commands
from tests.support.forked_bench import keyless_env
from tests.support.loopback import REPLY, openai_endpoint

pytestmark = pytest.mark.docs

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
# Checkout files the docs' commands read, copied into each page's scratch folder that names them.
CHECKOUT_INPUTS = ["results/recordings", "tests/fixtures"]
# Pages another test follows step by step, with the steps between the commands (editing a file):
# that test reads the page's commands itself, and the check below holds it to every one of them.
DELEGATED = {"own-table.md": "tests/tablekit/test_walkthrough.py::test_the_docs_walkthrough"}
COMMAND_TIMEOUT_S = 600


def ci_runs(target: str) -> bool:
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    return (re.search(rf"^{re.escape(target)}:", makefile, re.M) is not None
            and re.search(rf"^make {re.escape(target)}\s*$", ci, re.M) is not None)


def probe_then_answer(request: dict[str, Any]) -> dict[str, Any]:
    """A model that passes `bench doctor`'s round trip (call the probe tool with the word asked
    for, then quote the code its result holds) and answers everything else "ANSWER: 42"."""
    last = request["messages"][-1]
    word = probe_word(str(last.get("content"))) if last["role"] == "user" else None
    if word is not None:
        call = {"id": "call_probe", "type": "function",
                "function": {"name": PROBE_TOOL, "arguments": json.dumps({"word": word})}}
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return {**REPLY, "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}]}
    if last["role"] == "tool" and last.get("name") == PROBE_TOOL:
        code = json.loads(last["content"])["code"]
        message = {"role": "assistant", "content": f"ANSWER: {code}"}
        return {**REPLY, "choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
    return REPLY


@pytest.fixture(scope="module")
def providers():
    """The providers the docs name, on one loopback server, as each provider's own variables say."""
    with openai_endpoint(reply=probe_then_answer) as endpoint:
        yield {"OPENAI_API_KEY": "sk-docs-test", "OPENAI_BASE_URL": endpoint.url,
               "OPENROUTER_API_KEY": "sk-docs-test", "OPENROUTER_API_BASE": endpoint.url}


def scratch_folder(folder: Path, commands: list[Command]) -> Path:
    """The folder a reader runs the page's commands in: the project's venv, and copies of the
    checkout's files they read."""
    (folder / ".venv").symlink_to(ROOT / ".venv")
    for relative in CHECKOUT_INPUTS:
        if any(relative in command.text for command in commands):
            shutil.copytree(ROOT / relative, folder / relative, symlinks=True)
    return folder


def runs_in_process(command: Command) -> bool:
    """`bench ...` with no shell syntax runs in this process (no interpreter start and LiteLLM
    import per command); not on Ray, whose driver state would outlive the command here."""
    return (command.words[0] == ".venv/bin/bench" and not re.search(r"[|&;<>$`]", command.text)
            and "--executor" not in command.words)


def writes_only_where_told(command: Command) -> bool:
    """`bench run` and `bench synthesize` default to the checkout's results/: the docs name a folder."""
    words = command.words
    writes = words[0].endswith("bench") and len(words) > 1 and words[1] in ("run", "synthesize")
    return not writes or "--out" in words or "--resume" in words


PAGES_TO_RUN = [page for page in PAGES if page_commands(page) and page.name not in DELEGATED]


@pytest.mark.parametrize("page", PAGES_TO_RUN, ids=[page.name for page in PAGES_TO_RUN])
def test_the_commands_a_page_shows_run_as_written(page, tmp_path, monkeypatch, cli, providers):
    commands = page_commands(page)
    folder = scratch_folder(tmp_path, commands)
    monkeypatch.chdir(folder)
    with own_replica_settings() as sockets:
        for command in commands:
            assert writes_only_where_told(command), f"{page.name}: `{command.text}` would write into the checkout"
            if command.words[0] == "make":
                assert ci_runs(command.words[1]), f"{page.name}: `{command.text}`: no such target, or CI does not run it"
                continue
            if runs_in_process(command):
                code, out, err = cli(*command.words[1:], env=providers)
            else:
                done = subprocess.run(["bash", "-c", command.text], cwd=folder, env=keyless_env(**providers),
                                      capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S)
                code, out, err = done.returncode, done.stdout, done.stderr
            assert code == command.exit_code, f"{page.name}: `{command.text}` exited {code}:\n{out}\n{err}"
    shutil.rmtree(sockets, ignore_errors=True)


def test_a_delegated_page_is_run_command_by_command_by_its_test():
    """The own-table walkthrough is played by test_walkthrough (it edits a question file between two
    commands); that test must read every command this page shows, as written."""
    from tests.tablekit import test_walkthrough

    page = ROOT / "docs" / "own-table.md"
    assert test_walkthrough.PAGE == page and DELEGATED == {
        page.name: "tests/tablekit/test_walkthrough.py::test_the_docs_walkthrough"}
    assert callable(test_walkthrough.test_the_docs_walkthrough)
    shown = [command.words for command in page_commands(page)]
    assert shown and all(words[0] == ".venv/bin/bench" for words in shown)
    assert test_walkthrough.bench_commands() == [words[1:] for words in shown]


def test_every_page_is_in_the_site_nav():
    """mkdocs --strict fails on a page left out of the nav; this says which, without building."""
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert [page.name for page in PAGES[1:] if f" {page.name}" not in nav] == []


@pytest.mark.parametrize(("line", "expected"), [
    ('.venv/bin/bench run --tools "mcp:a # b" --out x   # exits 1: why', ('.venv/bin/bench run --tools "mcp:a # b" --out x', 1)),
    ("# a comment alone", ("", 0)),
    ("make demo", ("make demo", 0)),
])
def test_a_command_line_is_read_with_its_comment_and_exit_code(tmp_path, line, expected):
    page = tmp_path / "page.md"
    page.write_text(f"```sh\n{line}\n```\n\n```console\n$ bench --version\narmbench 0.1.0\n```\n")
    read = [(command.text, command.exit_code) for command in page_commands(page)]
    assert read == ([expected] if expected[0] else []) + [("bench --version", 0)]
