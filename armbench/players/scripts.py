"""Built-in scripts: the oracle (a reference policy, not a language model), provider faults, and
the synthesis scripts (synthesis_scripts.py).

The scripted provider registers BUILT_IN_SCRIPTS when it is set up.
"""
from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import litellm

from armbench.paths import questions_dir
from armbench.players.probe import PROBE_TOOL, probe_word
from armbench.players.script_registry import Reply, Script, ScriptedToolCall, Turn
from armbench.players.synthesis_scripts import SYNTHESIS_SCRIPTS
from armbench.questions import careful, load_sets, solution, with_replica_addresses
from armbench.types import Question, Solution

ORACLE_PREFERENCE = ("tooled", "browsing")


def questions_by_prompt() -> dict[str, Question]:
    return questions_of_bank(questions_dir())


@cache
def questions_of_bank(bank: Path) -> dict[str, Question]:
    """By the bank's folder: one process (`armbench.run`, the tests) may use more than one bank."""
    return {q.prompt(): q for qs in load_sets(root=bank) for q in qs.questions}


def pick_solution(question: Question, tool_names: list[str]) -> Solution | None:
    """The first stored solution whose tools are all offered in this arm, as the oracle plays it."""
    for arm in ORACLE_PREFERENCE:
        found = solution(question, arm)
        if found and all(call.tool in tool_names for call in found.calls):
            return careful(found)
    return None


def play_solution(turn: Turn, *, drop_arguments: bool = False, separator: str | None = None) -> Reply:
    """Make the solution's next tool call; after the last, answer from the last tool result.

    A stored solution is known to work, so a call of it that fails (a tool error, a script that
    exits non-zero, e.g. because its replica is unreachable) is the oracle's failure, raised as a
    provider error: the run is an infra error naming the cause, never a graded miss. With
    `drop_arguments` the failures are the point (a provider that drops arguments), so they are played on."""
    if PROBE_TOOL in turn.tool_names:
        return play_probe(turn, drop_arguments=drop_arguments)
    question = questions_by_prompt().get(turn.user_prompt)
    solution = pick_solution(question, turn.tool_names) if question else None
    if question is None or solution is None:
        return Reply(text="I have no stored solution for this question with these tools.")
    results = turn.tool_results()
    if results and not drop_arguments:
        check_result(solution, len(results) - 1, results[-1])
    if len(results) < len(solution.calls):
        call = solution.calls[len(results)]
        return Reply(tool_calls=[ScriptedToolCall(call.tool, {} if drop_arguments else with_replica_addresses(call.args))])
    try:
        items = solution.answer.items([json.loads(result) for result in results])
    except (ValueError, KeyError, TypeError) as error:
        return Reply(text=f"The tool result did not have the expected shape: {error}")
    return Reply(text="ANSWER: " + question.join_answer(items, separator))


def check_result(solution: Solution, index: int, result: str) -> None:
    """Raise when call `index` of a stored solution failed: the oracle cannot answer honestly."""
    try:
        parsed = json.loads(result)
    except ValueError:
        parsed = {}
    problem = None
    if isinstance(parsed, dict) and parsed.get("error"):
        problem = json.dumps(parsed["error"])[:500]
    elif isinstance(parsed, dict) and (parsed.get("exit_code") not in (None, 0) or parsed.get("timed_out")):
        problem = f"exit code {parsed.get('exit_code')}: {str(parsed.get('stderr', '')).strip()[-500:]}"
    if problem:
        raise litellm.BadRequestError(
            message=f"the oracle's stored solution failed at call {index + 1} ({solution.calls[index].tool}): {problem}",
            model="oracle", llm_provider="scripted",
        )


def play_probe(turn: Turn, *, drop_arguments: bool = False) -> Reply:
    """`bench doctor`'s probe, played like a question: call the probe tool with the word the
    prompt gives, then answer with the code from the tool's result."""
    results = turn.tool_results()
    if not results:
        arguments = {} if drop_arguments else {"word": probe_word(turn.user_prompt)}
        return Reply(tool_calls=[ScriptedToolCall(PROBE_TOOL, arguments)])
    try:
        code = json.loads(results[-1])["code"]
    except (ValueError, KeyError, TypeError):
        return Reply(text="The probe tool's result has no code.")
    return Reply(text=f"ANSWER: {code}")


def oracle(turn: Turn) -> Reply:
    return play_solution(turn)


def drop_args(turn: Turn) -> Reply:
    """The oracle behind a provider that silently drops tool arguments (seen in the study)."""
    return play_solution(turn, drop_arguments=True)


def malformed_json(turn: Turn) -> Reply:
    """Always sends tool arguments that are not JSON; the harness must keep going until budget."""
    return Reply(tool_calls=[ScriptedToolCall(turn.tool_names[0], '{"filters": [')])


def rate_limit(turn: Turn) -> Reply:
    raise litellm.RateLimitError(message="scripted 429", llm_provider="scripted", model="rate-limit")


def server_error(turn: Turn) -> Reply:
    raise litellm.InternalServerError(
        message="scripted 500", llm_provider="scripted", model="server-error"
    )


def timeout(turn: Turn) -> Reply:
    raise litellm.Timeout(message="scripted timeout", model="timeout", llm_provider="scripted")


BUILT_IN_SCRIPTS: dict[str, Script] = {
    "oracle": oracle,
    "drop-args": drop_args,
    "malformed-json": malformed_json,
    "rate-limit": rate_limit,
    "server-error": server_error,
    "timeout": timeout,
    **SYNTHESIS_SCRIPTS,
}
