"""`bench questions new`: a question written from the data, checked before it is saved.

The author gives the question's text, its answer format and the SQL that answers it over the
replica tables (and a tie rule, an answer format for numbers, a tooled solution, when there are
some). Nothing is taken on trust: the reference answer is computed from the data; a question is
refused when it has no answer, when its answer depends on the order of tied rows (the same SQL over
the tables in reverse order gives another answer) and no tie rule says how ties count, or when a
typed tool's description example is its solution or already gives its answer; the tooled solution,
when given, is played through the tool and must give the answer; the derived browsing solution (the
domain's site reader and the SQL, questions.derived_solution) is played in the sandbox against the
replica and kept when it gives the answer, else the author is told to write one. Then the entry is
appended to questions/<domain>/<set>.yaml, and `bench questions freeze` locks it.
"""
from __future__ import annotations

import asyncio
import datetime as dt
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from armbench.domains import find_domain, tables
from armbench.errors import UserError
from armbench.questions import (
    derive_answer,
    derived_solution,
    implied_scope,
    load_set_file,
    set_path,
    with_replica_addresses,
)
from armbench.tools.sandbox import SandboxConfig
from armbench.types import (
    DERIVED,
    SET_NAME_PATTERN,
    AnswerExtraction,
    Derivation,
    Derived,
    Question,
    Shape,
    Solution,
    ToolCall,
)

DERIVED_SHARE = 0.5  # of the sandbox's wall limit a derived solution may take here: the rest is headroom
EXAMPLE = re.compile(r"Example: .*?:\n(?=\{)", re.S)  # a tool description's worked example: JSON follows


@dataclass
class Written:
    question: Question
    path: Path
    notes: list[str] = field(default_factory=list)


def new_question(domain: str, set_name: str, text: str, answer_format: str, sql: str, *, tie_rule: str | None = None,
                 number_format: str | None = None, tooled: dict[str, Any] | None = None,
                 shapes: list[str] | None = None, browsing_code: str | None = None, premise: str | None = None,
                 root: Path | None = None) -> Written:
    """Check the question as the module docstring says, append it to its set's file, say what was kept."""
    find_domain(domain)
    unknown = sorted(set(shapes or []) - {str(shape) for shape in Shape})
    if unknown:
        raise UserError(f"unknown shape {', '.join(unknown)}; shapes: {', '.join(Shape)}")
    if not re.fullmatch(SET_NAME_PATTERN, set_name):
        raise UserError(f"{set_name!r} is not a set name (lower-case letters, digits, - and _, from a letter)")
    derivation = Derivation(sql=sql, format=number_format)
    answer = answer_of(derivation)
    if not answer:
        raise UserError(f"the SQL derives no answer from the {domain} data: a question needs at least one item")
    if tie_rule is None and sorted(answer_of(derivation, reversed_rows=True)) != sorted(answer):
        raise UserError("the answer depends on the order of tied rows (the same SQL over the tables in reverse "
                        "order answers otherwise): break the tie in the SQL, or give --tie-rule saying how ties count")
    path = set_path(domain, set_name, root)
    question = Question.model_validate({
        "id": next_id(domain, set_name, path), "domain": domain, "set": set_name, "text": text, "premise": premise,
        "answer": answer, "answer_format": answer_format, "tie_rule": tie_rule, "derivation": derivation,
        "created": dt.date.today(), "solutions": {"tooled": tooled} if tooled else {}, "shapes": shapes or [],
    })
    notes = refuse_tool_examples(question)
    if tooled:
        check_tooled(question)
    else:
        notes.append("no tooled solution: the oracle plays the browsing one in the tooled arm too")
    browsing, note = browsing_solution(question, browsing_code)
    notes.append(note)
    if browsing is not None:
        question = question.model_copy(update={"solutions": {**question.solutions, "browsing": browsing}})
    append(path, question)
    return Written(question, path, notes)


def answer_of(derivation: Derivation, reversed_rows: bool = False) -> list[str]:
    try:
        frames = tables()
        return derive_answer(derivation, {name: frame.reverse() for name, frame in frames.items()}
                             if reversed_rows else frames)
    except Exception as error:  # the author's SQL: its error is the message
        raise UserError(f"the SQL does not run over the replica tables: {error}") from None


def next_id(domain: str, set_name: str, path: Path) -> str:
    taken = [question.id for question in load_set_file(path).questions] if path.exists() else []
    numbers = [int(found.group(1)) for qid in taken if (found := re.fullmatch(rf"{domain}-{set_name}-(\d+)", qid))]
    return f"{domain}-{set_name}-{max(numbers, default=0) + 1:02d}"


def refuse_tool_examples(question: Question) -> list[str]:
    """Refuse a question a typed tool's description example solves or answers; say what was checked."""
    answer = sorted(question.answer)
    for cls in find_domain(question.domain).tool_classes():
        example = EXAMPLE.search(cls.description)
        if example is None:
            continue
        args, _ = json.JSONDecoder().raw_decode(cls.description, example.end())  # what follows it is not JSON
        tooled = question.solutions.get("tooled")
        if isinstance(tooled, Solution) and any(call.args == args for call in tooled.calls):
            raise UserError(f"the tooled solution is {cls.name}'s description example: pick another question")
        outcome = asyncio.run(cls().invoke(args))
        rows = outcome.result.get("rows", []) if not outcome.is_error else []
        for name in rows[0] if rows else []:
            if sorted(str(row[name]) for row in rows) == answer:
                raise UserError(f"{cls.name}'s description example already answers it (its rows' {name}): "
                                "pick another question")
    return ["no typed tool's description example solves or answers it"]


def check_tooled(question: Question) -> None:
    """Play the tooled solution through the domain's tools; it must give the reference answer."""
    solution = question.solutions["tooled"]
    tools = {cls.name: cls() for cls in find_domain(question.domain).tool_classes()}

    async def play() -> list[dict[str, Any]]:
        results = []
        for call in solution.calls:
            if call.tool not in tools:
                raise UserError(f"the tooled solution calls {call.tool!r}, not a tool of {question.domain}: "
                                f"{', '.join(tools)}")
            outcome = await tools[call.tool].invoke(with_replica_addresses(call.args))
            if outcome.is_error:
                raise UserError(f"the tooled solution's call of {call.tool} fails: {outcome.to_message_content()[:500]}")
            results.append(outcome.result)
        return results

    try:
        items = solution.answer.items(asyncio.run(play()))
    except (KeyError, ValueError, TypeError) as error:  # the author's extraction names what the results lack
        raise UserError(f"the tooled solution's answer cannot be read from its results: {error!r}") from None
    if sorted(items) != sorted(question.answer):
        raise UserError(f"the tooled solution answers {items}, the data {question.answer}")


def browsing_solution(question: Question, code: str | None) -> tuple[Solution | Derived | str | None, str]:
    """The browsing solution to keep and what to say: the author's script (`code`, whose stdout lines
    are the answer), which must give the answer; else the derived one (reading only the rows its SQL
    requires, `implied_scope`) when it gives it in at most DERIVED_SHARE of the sandbox's wall limit;
    else none."""
    if code is not None:
        written = Solution(calls=[ToolCall(tool="python", args={"code": code})],
                           answer=AnswerExtraction.model_validate({"from": "stdout"}))
        items, took, failure = play_in_sandbox(question, written)
        if sorted(items) != sorted(question.answer):
            raise UserError(f"the browsing script answers {items}, the data {question.answer}{failure}")
        return written, f"browsing: your script gives the answer in the sandbox in {took:.0f} s of its own time"
    try:
        scope = implied_scope(question)
        derived = derived_solution(question, scope)
    except UserError as error:
        return None, f"no browsing solution: {error}; write one (--browsing-code FILE)"
    items, took, failure = play_in_sandbox(question, derived)
    if sorted(items) != sorted(question.answer):
        return None, f"the derived browsing solution does not give the answer{failure}; write one (--browsing-code FILE)"
    if took > SandboxConfig().wall_timeout_s * DERIVED_SHARE:
        return None, (f"the derived browsing solution gives the answer, but took {took:.0f} s of its own time, more "
                      f"than {DERIVED_SHARE:.0%} of the sandbox's wall limit (a slower machine could stop it); write one "
                      "that reads fewer pages (--browsing-code FILE)")
    reading = f", reading only the rows where {scope_words(scope)}" if scope else ""
    return (Derived(derived=scope) if scope else DERIVED,
            f"browsing: derived (the site reader and the SQL in the sandbox give the answer in "
            f"{took:.0f} s of their own time{reading})")


def scope_words(scope: dict[str, Any]) -> str:
    return " and ".join(f"{name} = {value!r}" for name, value in scope.items())


def play_in_sandbox(question: Question, solution: Solution) -> tuple[list[str], float, str]:
    """A one-call python solution played in the sandbox against the domain's replica: its answer
    items, its own seconds (what the sandbox's wall limit counts: not the time a busy machine or
    replica held it, so the verdict does not depend on the load), and what went wrong
    (", stderr: ..." or "")."""
    from armbench.replicas.supervisor import replicas_running
    from armbench.tools.base import ToolInfraError
    from armbench.tools.sandbox import ReplicaRoute
    from armbench.tools.web_tools import PythonTool

    domain = find_domain(question.domain)
    with replicas_running([domain.replica]) as endpoints:
        target = endpoints[domain.name]
        tool = PythonTool([ReplicaRoute(port=target.port, socket_path=str(target.socket_path))])
        address = {question.domain: target.base_url.rstrip("/")}
        code = with_replica_addresses(solution.calls[0].args, address.__getitem__)["code"]
        try:
            ran = asyncio.run(tool.execute(code))
        except ToolInfraError as error:
            raise UserError(f"the browsing solution could not be played here: {error}") from None
    items = solution.answer.items([{"stdout": ran.stdout, "stderr": ran.stderr, "exit_code": ran.exit_code}])
    said = ran.stderr or (f"killed: {ran.killed_reason}" if ran.killed_reason else "")
    return items, ran.duration_s - ran.held_seconds, f", stderr: {said[-300:]}" if said else ""


def append(path: Path, question: Question) -> None:
    """Add the question to its set's file (made, with the set's head, when it is the first)."""
    entry = question_entry(question)
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"domain: {question.domain}\nset: {question.set}\ncreated: {question.created.isoformat()}\n"
                        f"questions:\n{entry}", encoding="utf-8")
        return
    text = path.read_text(encoding="utf-8")
    if re.search(r"^questions: \[\]\s*$", text, re.M):
        text = re.sub(r"^questions: \[\]\s*$", "questions:", text, count=1, flags=re.M)
    path.write_text(text.rstrip("\n") + "\n\n" + entry, encoding="utf-8")
    load_set_file(path)  # what was written reads back as a set


def question_entry(question: Question) -> str:
    """One question as a block of its set's `questions:` list, in the bank's layout."""
    def quoted(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False)

    lines = [f"  - id: {question.id}", f"    text: {quoted(question.text)}"]
    if question.premise:
        lines.append(f"    premise: {quoted(question.premise)}")
    lines += [f"    answer: {quoted(question.answer)}", f"    answer_format: {quoted(question.answer_format)}"]
    if question.tie_rule:
        lines.append(f"    tie_rule: {quoted(question.tie_rule)}")
    lines += ["    derivation:", f"      sql: {quoted(question.derivation.sql)}"]
    if question.derivation.format:
        lines.append(f"      format: {quoted(question.derivation.format)}")
    lines.append(f"    created: {question.created.isoformat()}")
    if question.shapes:
        lines.append(f"    shapes: {quoted([str(shape) for shape in question.shapes])}")
    if question.solutions:
        lines.append("    solutions:")
    for arm, solution in question.solutions.items():
        if solution == DERIVED:
            lines.append(f"      {arm}: {DERIVED}")
            continue
        if isinstance(solution, Derived):
            lines.append(f"      {arm}: {{{DERIVED}: {quoted(solution.derived)}}}")
            continue
        lines += [f"      {arm}:", "        calls:"]
        for call in solution.calls:
            lines.append(f"          - tool: {call.tool}")
            if call.tool == "python":  # a script reads best as a block
                lines += ["            args:", "              code: |",
                          *(f"                {line}".rstrip() for line in call.args["code"].splitlines())]
            else:
                lines.append(f"            args: {quoted(call.args)}")
        lines.append(f"        answer: {quoted(solution.answer.model_dump(by_alias=True, exclude_defaults=True))}")
    return "\n".join(lines) + "\n"


def parse_tooled(text: str) -> dict[str, Any]:
    """--tooled: {"calls": [{"tool", "args"}...], "answer": {"from": ...}} as JSON; refused with the reason."""
    try:
        return Solution.model_validate(json.loads(text)).model_dump(by_alias=True, exclude_defaults=True)
    except (ValueError, TypeError) as error:
        raise UserError(f"--tooled must be a JSON solution, e.g. {EXAMPLE_TOOLED}: {str(error)[:300]}") from None


EXAMPLE_TOOLED = ('{"calls": [{"tool": "crash_query", "args": {"filters": [...]}}], '
                  '"answer": {"from": "rows", "field": "state"}}')
