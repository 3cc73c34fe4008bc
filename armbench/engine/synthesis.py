"""`bench synthesize`: an agent builds a domain's typed tool itself, from the replica alone.

The episode is a run in all but its goal: the same model callers (retries, rate limit, --record),
the same agent loop and caps, and the browsing arm's tools (browser, python, http_get) plus the
workshop (write_tool, try_tool, submit_tool). The model is given the domain's DESIGN questions
with their reference answers, never the held-out ones: the synthesized arm is then scored on both,
and the gap between them is the study's question (does a fitted tool transfer?). Its tool reaches
the data only as the site shows it: over HTTP, from the sandbox.

    <DIR>/synthesis.json   the episode's record (SynthesisRecord): what it cost and made
    <DIR>/transcript.jsonl the messages exchanged
    <DIR>/recording/       with --record, every model call (replayable like a run's)
    <DIR>/tool/            the frozen tool, when one was submitted (arms/frozen_tool.py)
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from armbench.arms.environment import ArmEnvironment, python_tool, resources_prompt, symbolic
from armbench.arms.frozen_tool import SYNTHESIS_FILE, TOOL_DIR, FrozenTool, freeze
from armbench.domains import data_hash, find_domain
from armbench.engine.agent import Episode, converse, system_prompt
from armbench.engine.manifest import now
from armbench.engine.plan import run_limits
from armbench.engine.store import unwritable, write_transcript
from armbench.errors import UserError
from armbench.models.model import Model
from armbench.provenance import git_commit
from armbench.questions import DESIGN, QuestionSet, load_sets, unlocked_sets
from armbench.tools.workshop import Workshop
from armbench.types import RunConfig, StopReason, SynthesisRecord

SYNTHESIS_ID = "synthesis"  # its transcript's and recording's name, as a run id names a run's
TRANSCRIPT_FILE = "transcript.jsonl"

SYNTHESIS_PROMPT = """\
You are a careful software engineer. Build one tool: a typed query function over the data a site \
shows, which other agents will call to answer research questions about it. Use the tools you are \
given; each tool call counts against a budget of {budget} tool calls.

These sites are reachable (nothing else is):
{resources}

Work in this order: look at the site (browser, http_get, python) until you know its pages and \
fields; write the tool with write_tool; call it with try_tool on the questions below and fix it \
until its results give their answers; then call submit_tool, which freezes the tool and ends the \
session. A tool that was never submitted is lost."""

TASK = """\
Domain: {domain}
Build a query tool for {title}.

Agents will answer questions of the kind below by calling your tool: they filter the site's \
entities, then pick, count, average, rank or list them. The questions come with their reference \
answers so you can test your tool. Agents will be asked OTHER questions of the same kind, so build \
a general tool (filters on any field, sorting, a row limit, aggregates), not one fitted to these \
questions, and describe its arguments and fields precisely in its description.

{questions}"""


@dataclass(frozen=True)
class Synthesis:
    """What one episode left in its folder: its record, and its frozen tool if it submitted one."""

    folder: Path
    record: SynthesisRecord
    tool: FrozenTool | None


def design_questions(domain: str) -> QuestionSet:
    """The questions a synthesis sees: the domain's frozen design set (never held-out)."""
    find_domain(domain)
    found = load_sets([domain], [DESIGN])
    if not found:
        raise UserError(f"{domain} has no {DESIGN} question set to build a tool against")
    if unlocked_sets(found):
        raise UserError(f"{domain}'s {DESIGN} questions differ from questions/questions.lock; run "
                        "`bench questions verify` then `bench questions freeze`")
    return found[0]


def task_prompt(domain: str, questions: QuestionSet) -> str:
    listed = "\n\n".join(
        f"Question {number}: {question.prompt()}\nReference answer: "
        f"{question.join_answer(question.answer)}"
        for number, question in enumerate(questions.questions, start=1)
    )
    return TASK.format(domain=domain, title=find_domain(domain).title, questions=listed)


def check_folder(folder: Path) -> None:
    """Refuse, before anything starts, a folder that holds a synthesis already or takes no files."""
    if (folder / SYNTHESIS_FILE).exists() or (folder / TOOL_DIR).exists():
        raise UserError(f"{folder} holds a synthesis or a tool already; choose another --out")
    nearest = next(path for path in (folder, *folder.parents) if path.exists())
    problem = "it is a file" if not nearest.is_dir() else unwritable(nearest)
    if problem:
        raise UserError(f"cannot write a synthesis to {folder}: {nearest}: {problem}; choose another --out")


async def synthesize(domain: str, config: RunConfig, folder: Path, model: Model) -> Synthesis:
    """Run one synthesis episode for `domain` with `model`, config.model as the plan resolved it
    (budget, caps and generation settings from `config`), and leave its record, transcript and
    tool in `folder`."""
    questions = design_questions(domain)
    check_folder(folder)
    user = task_prompt(domain, questions)
    async with ArmEnvironment([domain], tool_timeout=config.tool_timeout) as env:
        base_url = env.target(domain).base_url
        prompt_digest = hashlib.sha256(
            (system_prompt(config.budget, resources_prompt({domain: symbolic(domain)}), SYNTHESIS_PROMPT) + user).encode()
        ).hexdigest()
        folder.mkdir(parents=True, exist_ok=True)
        caller = model.callers(config, [SYNTHESIS_ID], folder).for_run(SYNTHESIS_ID)
        async with env.open_arm("browsing", domain) as arm:
            python = python_tool(arm)
            workshop = Workshop(python, base_url, [tool.name for tool in arm.tools], config.tool_timeout)
            arm.tools.extend(workshop.tools())
            episode = await converse(
                system_prompt(config.budget, resources_prompt({domain: base_url}), SYNTHESIS_PROMPT), user, arm, caller,
                budget=config.budget, limits=run_limits(config), submitted=lambda: workshop.submitted is not None,
            )
        isolation = env.sandbox_isolation()
    write_transcript(folder / TRANSCRIPT_FILE, episode.transcript)
    tool = freeze(workshop.submitted, domain, folder) if workshop.submitted else None
    record = SynthesisRecord(
        domain=domain, model=config.model, created=now(), git_commit=git_commit(), config=config.manifest_config(),
        question_set_hash=questions.content_hash(), data_hash=data_hash([domain]), prompt_hash=prompt_digest,
        sandbox_isolation=isolation, tool_name=tool and tool.spec.name, tool_sha256=tool and tool.spec.sha256,
        failure=None if tool else failure(episode, config.budget), stop_reason=episode.stop_reason,
        error=episode.error, error_kind=episode.error_kind, cost_usd=episode.usage.cost_usd,
        prompt_tokens=episode.usage.prompt_tokens, completion_tokens=episode.usage.completion_tokens,
        actions=episode.actions, actions_by_tool=dict(episode.actions_by_tool), tool_errors=episode.tool_errors,
        retries=episode.retries, wall_seconds=episode.wall_seconds, model_seconds=episode.model_seconds,
        tool_seconds=episode.tool_seconds, transcript_path=TRANSCRIPT_FILE,
    )
    (folder / SYNTHESIS_FILE).write_text(record.model_dump_json(indent=2) + "\n", encoding="utf-8")
    return Synthesis(folder, record, tool)


def failure(episode: Episode, budget: int) -> str:
    """Why an episode froze no tool, in words."""
    if episode.stop_reason == StopReason.budget:
        return f"the budget of {budget} tool calls ran out before submit_tool"
    if episode.error:
        return episode.error
    return "the model stopped without calling submit_tool"
