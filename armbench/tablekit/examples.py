"""The example question each new question file carries (commented out): written from the data, so
its answer is right, with a tooled solution and a derived browsing one (the domain's site reader
and the question's SQL, questions.derived_solution) that `bench questions verify` accepts.

Design asks for the entity with the highest value of the first number the list shows, held-out
for the lowest (else both count the rows).
"""
from __future__ import annotations

import datetime as dt
import json
import textwrap
from collections.abc import Callable
from typing import Any

import polars as pl

from armbench.tablekit.draft import Draft
from armbench.tablekit.yamltext import flow
from armbench.types import render_value

SETS = ("design", "heldout")


def example_question(d: Draft, frame: pl.DataFrame, set_name: str) -> str:
    """The `set_name` file's example: the highest (design) or lowest (heldout) value of the first
    number column the list shows, else the number of rows; its answer derived from `frame`."""
    shown = [d.column(name) for name in d.list_fields[1:] if d.column(name).kind == "number"]
    qid = f"{d.name}-{set_name}-01"
    if not shown:
        return count_question(d, frame, qid)
    column = shown[0]
    highest = set_name == "design"
    word, fn, order = ("highest", "max", "desc") if highest else ("lowest", "min", "asc")
    sql, answer = derive(lambda q: f"SELECT {q(d.key)} FROM {q(d.name)} WHERE {q(column.name)} = "
                                   f"(SELECT {fn}({q(column.name)}) FROM {q(d.name)})", d.name, frame)
    return question_yaml(
        d.name, qid, f"Which {d.one} has the {word} {column.words}?", answer,
        f"the {d.one}'s {d.column(d.key).words} exactly as the table writes it",
        f"if several {d.many} tie for the {word} {column.words}, list all of them", sql,
        {"sort_by": column.name, "order": order, "limit": 5, "fields": [d.key, column.name]},
        {"from": "rows", "field": d.key, "ties_on": column.name})


def count_question(d: Draft, frame: pl.DataFrame, qid: str) -> str:
    sql, answer = derive(lambda q: f"SELECT count(*) FROM {q(d.name)}", d.name, frame)
    return question_yaml(
        d.name, qid, f"How many {d.many} does the table list?", answer,
        "a whole number, digits only (e.g. 12)", None, sql, {"aggregate": {"fn": "count"}},
        {"from": "aggregate"})


def derive(sql: Callable[[Callable[[str], str]], str], table: str, frame: pl.DataFrame) -> tuple[str, list[str]]:
    """The SQL `sql` writes with names as they are (or, when a name is an SQL word such as `order`,
    double-quoted), and what `bench questions verify` will derive with it: the first column, rendered."""
    context = pl.SQLContext({table: frame})
    for quote in (str, lambda name: f'"{name}"'):
        text = sql(quote)
        try:
            column = context.execute(text, eager=True).to_series(0)
        except pl.exceptions.PolarsError:
            continue
        return text, [render_value(value, None) for value in column.to_list()]
    raise AssertionError(f"the example question's SQL does not run: {text}")


def question_yaml(domain: str, qid: str, text: str, answer: list[str], answer_format: str, tie_rule: str | None, sql: str,
                  args: dict[str, Any], extraction: dict[str, Any]) -> str:
    lines = [
        "questions:",
        f"  - id: {qid}",
        f"    text: {json.dumps(text, ensure_ascii=False)}",
        f"    answer: {json.dumps(answer, ensure_ascii=False)}",
        f"    answer_format: {json.dumps(answer_format, ensure_ascii=False)}",
    ]
    if tie_rule:
        lines.append(f"    tie_rule: {json.dumps(tie_rule, ensure_ascii=False)}")
    lines += [
        "    derivation:",
        f"      sql: {json.dumps(sql)}",
        "    solutions:",
        "      tooled:",
        "        calls:",
        f"          - tool: {domain}_query",
        f"            args: {flow(args)}",
        f"        answer: {flow(extraction)}",
        "      browsing: derived",
    ]
    return "\n".join(lines) + "\n"


def question_file(d: Draft, set_name: str, created: dt.date, example: str) -> str:
    purpose = {
        "design": "the questions you look at while designing the tool",
        "heldout": "questions written before the tool and kept out of its design: the fair test",
    }[set_name]
    header = textwrap.dedent(f"""\
        # {d.name}, the {set_name} set: {purpose}.
        # Each question: id ({d.name}-{set_name}-NN), text, answer (a list: every item the reference holds),
        # answer_format, tie_rule when ties are possible, derivation (SQL over the table `{d.name}`, whose first
        # column is the answer; `bench questions verify` re-runs it) and solutions: `tooled` (a call of
        # {d.name}_query and which field of its rows is the answer) and `browsing`: `derived` (the site reader
        # reads the replica and the SQL runs over its rows) or a python call that reads the replica at
        # {{replica:{d.name}}} and prints the answer, one item a line. `bench questions new {d.name} {set_name}`
        # writes one from its text and SQL, with both solutions checked. Then `bench questions freeze`.
        domain: {d.name}
        set: {set_name}
        created: {created.isoformat()}
        questions: []

        # An example written from today's data. To use it, delete `questions: []` above and the "# " that
        # starts each line below, then run `bench questions verify`; write your own in its place.
        """)
    return header + "".join(f"# {line}".rstrip() + "\n" for line in example.splitlines())
