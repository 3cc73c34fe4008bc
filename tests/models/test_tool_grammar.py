"""The grammar that holds a local model to one offered tool call or a final ANSWER reply.

The grammar is the contract with llama.cpp, so a recognizer stands in for the model's sampler (a
fake llama, tests/support/gbnf.py): it must accept a valid call of every tool the gpus and
worldbank arms offer and the answer form, and reject what a schema or the reply form forbids.
Where llama-cpp-python and the weights are here, llama.cpp's own grammar engine must agree.
"""
from __future__ import annotations

import itertools
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from armbench.arms import ARMS
from armbench.arms.environment import ArmEnvironment
from armbench.arms.frozen_tool import FrozenTool
from armbench.domains import DOMAINS, find_domain
from armbench.models.local_models import local_model
from armbench.models.tool_grammar import (
    MAX_ANSWER_CHARS,
    MAX_ITEMS,
    MAX_TEXT_LINE_CHARS,
    MAX_TEXT_LINES,
    MAX_WS,
    grammar_sha256,
    tool_call_grammar,
)
from armbench.players.synthesis_scripts import BROKEN_TOOL, write_call
from armbench.questions import load_set_file, set_path, solution
from armbench.tools.base import ArmTools
from armbench.tools.synthesized import ToolSpec
from armbench.tools.web_tools import PythonTool
from armbench.tools.workshop import Workshop
from tests.support.gbnf import Grammar

CHECKED = [(domain, arm) for domain in ("gpus", "worldbank") for arm in ARMS]

# Valid arguments for the tools every arm offers; the typed tools' come from the stored solutions.
COMMON_CALLS = [
    ("browser_navigate", {"url": "http://127.0.0.1:8000/gpus?q=RTX%204090"}),
    ("browser_snapshot", {}),
    ("browser_snapshot", {"offset": 4000}),
    ("browser_click", {"ref": "e12"}),
    ("browser_type", {"ref": "e3", "text": 'RTX "4090" \\ Ti', "submit": True}),
    ("browser_select", {"ref": "e5", "value": "NVIDIA"}),
    ("browser_back", {}),
    ("python", {"code": "import json\nprint(json.dumps({'é': 1}))\n\tpass"}),
    ("http_get", {"url": "http://127.0.0.1:8000/api/v2/country?page=2"}),
    ("http_get", {"url": "http://127.0.0.1:8000/", "offset": 64000}),
    ("broken_query", {"mode": "hang"}),  # synth-broken's tool, the synthesized arm's outside gpus
]
ANSWERS = [
    "ANSWER: Alabama; Texas",
    "Two states match.\nBoth are in the South.\nANSWER: Alabama; Texas",
    "line\n" * MAX_TEXT_LINES + "ANSWER: x",
    "x" * MAX_TEXT_LINE_CHARS + "\nANSWER: " + "y" * MAX_ANSWER_CHARS,
]


def call(name: str, arguments: dict[str, Any], **dumps: Any) -> str:
    return f"<tool_call>\n{json.dumps({'name': name, 'arguments': arguments}, **dumps)}\n</tool_call>"


GPU_CALL = call("gpu_query", {"filters": [{"field": "name", "op": "starts_with", "value": "GeForce"}], "limit": 5})
RANK_CALL = call("rank_year", {"indicator": "SP.POP.TOTL", "year": 2022, "limit": 3})
FIELDS = ["name", "generation", "release_date", "memory_size_gb", "memory_type", "architecture", "manufacturer"]
REJECTED = {  # why -> (domain, arm, reply)
    "an unknown tool": ("gpus", "tooled", call("sql_query", {"sql": "select 1"})),
    "a tool only the tooled arm has": ("gpus", "browsing", GPU_CALL),
    "another domain's tool": ("gpus", "tooled", RANK_CALL),
    "an unknown property": ("gpus", "tooled", call("gpu_query", {"filters": [], "group_by": "name"})),
    "an op gpu_query does not have": (
        "gpus", "tooled", call("gpu_query", {"filters": [{"field": "name", "op": "regex", "value": "^GeForce"}]})),
    "a field gpu_query does not have": (
        "gpus", "tooled", call("gpu_query", {"filters": [{"field": "price_usd", "op": "gt", "value": 500}]})),
    "a year as text": ("worldbank", "tooled", call("rank_year", {"indicator": "SP.POP.TOTL", "year": "2022"})),
    "a fraction for an integer": ("worldbank", "tooled", call("rank_year", {"indicator": "SP.POP.TOTL", "year": 2022.5})),
    "a missing required property": ("worldbank", "tooled", call("rank_year", {"indicator": "SP.POP.TOTL"})),
    "properties out of schema order": ("gpus", "tooled", call("gpu_query", {"limit": 5, "filters": []})),
    "a list past the default bound": ("gpus", "tooled", call("gpu_query", {"fields": (FIELDS * 3)[:MAX_ITEMS + 1]})),
    "a list past maxItems": ("worldbank", "tooled", call("get_series", {
        "indicator": "SP.POP.TOTL", "economies": ["USA"] * 41, "start_year": 2000, "end_year": 2001})),
    "a list under minItems": ("worldbank", "tooled", call("get_series", {
        "indicator": "SP.POP.TOTL", "economies": [], "start_year": 2000, "end_year": 2001})),
    "a number for a text ref": ("gpus", "browsing", call("browser_click", {"ref": 12})),
    "arguments as a JSON string": ("gpus", "browsing", call("browser_click", json.dumps({"ref": "e1"}))),
    "two tool calls": ("gpus", "tooled", f"{GPU_CALL}\n{GPU_CALL}"),
    "two tool calls back to back": ("gpus", "tooled", GPU_CALL + GPU_CALL),
    "text before a tool call": ("gpus", "tooled", f"Let me query.\n{GPU_CALL}"),
    "text after a tool call": ("gpus", "tooled", f"{GPU_CALL}\nDone."),
    "an unclosed tool call": ("gpus", "tooled", GPU_CALL.removesuffix("\n</tool_call>")),
    "whitespace past the bound": ("gpus", "tooled", GPU_CALL.replace('"name": ', '"name":' + " " * (MAX_WS + 1))),
    "text after the ANSWER line": ("gpus", "tooled", "ANSWER: Alabama\nTexas"),
    "a newline after the ANSWER line": ("gpus", "tooled", "ANSWER: Alabama\n"),
    "a reply starting with < that is not a tool call": ("gpus", "tooled", "<answer>\nANSWER: Alabama"),
    "a tool call that turns into an answer": ("gpus", "tooled", "<tool_call>\nANSWER: Alabama"),
    "a call written as bare JSON text": ("gpus", "tooled", GPU_CALL.removeprefix("<tool_call>\n").removesuffix(
        "\n</tool_call>") + "\nANSWER: x"),
    "a call in a code fence": ("gpus", "tooled", "```json\n{}\n```\nANSWER: x"),
    "a line of text that starts a JSON list": ("gpus", "tooled", '["GeForce"]\nANSWER: x'),
    "no ANSWER line": ("worldbank", "browsing", "Alabama; Texas"),
    "an empty answer": ("worldbank", "browsing", "ANSWER: "),
    "too many lines of text": ("worldbank", "browsing", "line\n" * (MAX_TEXT_LINES + 1) + "ANSWER: x"),
    "an empty line of text": ("worldbank", "browsing", "Here it is.\n\nANSWER: x"),
    "an over-long line of text": ("worldbank", "browsing", "x" * (MAX_TEXT_LINE_CHARS + 1) + "\nANSWER: x"),
    "an over-long answer": ("worldbank", "browsing", "ANSWER: " + "x" * (MAX_ANSWER_CHARS + 1)),
}


def known_tool(folder: Path) -> ToolSpec:
    spec = json.loads((folder / "tool.json").read_text())
    return ToolSpec(spec["name"], spec["description"], spec["parameters"], (folder / "tool.py").read_text())


@cache
def environment() -> ArmEnvironment:
    """Every domain; the synthesized arm has synth-oracle's GPU tool for gpus, synth-broken's elsewhere."""
    synthesized = {domain: FrozenTool(known_tool(find_domain("gpus").known_tool if domain == "gpus" else BROKEN_TOOL), domain, Path("."))
                   for domain in DOMAINS}
    return ArmEnvironment(list(DOMAINS), synthesized=synthesized)


@cache
def arm(domain: str, name: str) -> ArmTools:
    return environment().template(name, domain)


@cache
def grammar_text(domain: str, name: str) -> str:
    return tool_call_grammar(arm(domain, name).schemas())


@cache
def grammar(domain: str, name: str) -> Grammar:
    return Grammar(grammar_text(domain, name))


def valid_calls(domain: str, name: str) -> list[str]:
    """A reply for every valid call we hold of the arm's tools, in three JSON layouts."""
    tools = arm(domain, name)
    stored = [(c.tool, c.args) for set_name in ("design", "heldout")
              for q in load_set_file(set_path(domain, set_name)).questions
              for arm_name in q.solutions for c in solution(q, arm_name).calls]
    calls = [(tool, args) for tool, args in COMMON_CALLS + stored if tools.tool(tool) is not None]
    offered = {tool.name for tool in tools.tools}
    assert offered == {tool for tool, _ in calls}, "every offered tool needs a valid call here"
    replies = []
    for tool, args in calls:
        # The grammar wants the schema's property order: the tool's own model writes it.
        ordered = schema_ordered(tools.tool(tool), args)
        replies += [call(tool, ordered), call(tool, ordered, separators=(",", ":"), ensure_ascii=False),
                    call(tool, ordered, indent=2)]
    return replies


def schema_ordered(tool: Any, args: dict[str, Any]) -> dict[str, Any]:
    """`args` in the order of the tool's schema: its own model's, or for a synthesized tool (a JSON
    schema, no model) the properties' order, one level down into lists of objects as well."""
    if hasattr(tool, "Args"):
        return tool.Args.model_validate(args).model_dump(mode="json", exclude_unset=True)
    return order_by(tool.schema()["function"]["parameters"], args)


def order_by(schema: dict[str, Any], value: Any) -> Any:
    wanted = "array" if isinstance(value, list) else "object" if isinstance(value, dict) else None
    schema = next((branch for branch in schema.get("anyOf", []) if branch.get("type") == wanted), schema)
    if isinstance(value, list):
        return [order_by(schema.get("items", {}), item) for item in value]
    if not isinstance(value, dict):
        return value
    properties = schema.get("properties", {})
    return {key: order_by(properties[key], value[key]) for key in properties if key in value}


def schema_tool(name: str, schema: dict[str, Any], defs: dict[str, Any] | None = None) -> dict[str, Any]:
    """A tool whose one required argument `v` has `schema`."""
    parameters = {"type": "object", "properties": {"v": schema}, "required": ["v"], "additionalProperties": False}
    if defs:
        parameters["$defs"] = defs
    return {"type": "function", "function": {"name": name, "description": "", "parameters": parameters}}


@pytest.mark.parametrize(("domain", "name"), CHECKED)
def test_accepts_a_valid_call_of_every_offered_tool_and_the_answer_form(domain, name):
    rejected = [reply for reply in valid_calls(domain, name) + ANSWERS if not grammar(domain, name).matches(reply)]
    assert not rejected, rejected[:3]


@pytest.mark.parametrize("rules", [
    r'root ::= "\"" char* "\""' + "\n" + r'char ::= [^"\\] | "\\" ["\\ab]',  # a JSON string's shape
    r'root ::= "\"" c{1,3} "\"" c?' + "\n" + r'c ::= [ab] | "\\" "a"',  # bounded, then an optional tail
    'root ::= x* "a"\nx ::= "a" | "b"',  # the repetition could go on where the next item starts
    'root ::= x* "b"\nx ::= [ab] | [a"]',  # two classes: not compared, so walked
    'root ::= x{2} y\nx ::= "a" | "ab"\ny ::= "a"? "b"*',  # alternatives that start alike
    'root ::= "a" x* "b" x{2,} y+\nx ::= ""\ny ::= "a"?',  # steps that can be empty
])
def test_the_recognizers_one_way_patterns_agree_with_its_walk(rules):
    """A rule matched by one pattern (tests/support/gbnf.py) accepts exactly what the node walk does."""
    shortcut = Grammar(rules)
    walked = Grammar(rules)
    walked.one_way = {}
    texts = ["".join(chars) for size in range(7) for chars in itertools.product('ab"\\', repeat=size)]
    assert [shortcut.matches(text) for text in texts] == [walked.matches(text) for text in texts]
    assert any(shortcut.matches(text) for text in texts)


def test_a_synthesis_can_write_try_and_submit_under_the_grammar():
    """A local model pointed at `bench synthesize` decodes under the browsing arm's and the workshop's tools."""
    env = environment()
    python = next(tool for tool in env.web("gpus") if isinstance(tool, PythonTool))
    workshop = Workshop(python, env.target("gpus").base_url, [])
    text = tool_call_grammar(arm("gpus", "browsing").schemas() + [tool.schema() for tool in workshop.tools()])
    written = write_call(find_domain("gpus").known_tool).arguments
    replies = [call("write_tool", written), call("try_tool", {"arguments": '{"limit": 3}'}), call("submit_tool", {})]
    assert all(Grammar(text).matches(reply) for reply in replies)
    assert not Grammar(text).matches(call("write_tool", {**written, "parameters": {"type": "object"}}))


@pytest.mark.parametrize("why", list(REJECTED))
def test_rejects(why):
    domain, name, reply = REJECTED[why]
    assert not grammar(domain, name).matches(reply)


def test_the_bounds_themselves_are_allowed():
    assert grammar("gpus", "tooled").matches(call("gpu_query", {"fields": (FIELDS * 3)[:MAX_ITEMS]}))
    assert grammar("gpus", "tooled").matches(GPU_CALL.replace('"name": ', '"name":' + " " * MAX_WS))
    economies = {"indicator": "SP.POP.TOTL", "economies": ["USA"] * 40, "start_year": 2000, "end_year": 2001}
    assert grammar("worldbank", "tooled").matches(call("get_series", economies))


@pytest.mark.parametrize(("domain", "name"), [(domain, name) for domain in DOMAINS for name in ARMS])
def test_every_registered_domain_and_arm_converts(domain, name):
    grammar(domain, name)  # the recognizer refuses undefined rules and bad names


@pytest.mark.parametrize(("schema", "accepted", "rejected"), [
    ({"type": "string", "maxLength": 3}, ["abc", 'a"b', "é", ""], ["abcd", 3]),
    ({"type": "string", "minLength": 2}, ["ab", "a\nb"], ["a", ""]),
    ({"type": ["string", "null"]}, ["x", None], [1, True]),
    ({"const": "fixed"}, ["fixed"], ["other"]),
    ({"enum": [1, "a", None]}, [1, "a", None], [2, "b"]),
    ({"oneOf": [{"type": "integer"}, {"type": "boolean"}]}, [1, True], ["1", None]),
    ({"type": "integer"}, [12, -3, 0], [1.5, "1", 1e20]),
    ({"type": "integer", "minimum": 1, "maximum": 3}, [7], []),  # numeric bounds are the tool's to check
    ({"type": "number"}, [1.5, -2, 1e-05, 10], ["x", "1", True]),
    ({"type": "boolean"}, [True, False], ["true", 0]),
    ({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3}, [[1, 2], [1, 2, 3]],
     [[1], [1, 2, 3, 4], ["a", "b"]]),
    ({"type": "array", "items": {"type": "integer"}, "maxItems": 1}, [[], [5]], [[5, 6]]),
    ({"type": "object"}, [{}, {"a": [1, {"b": None}], "c": "d"}], [[], {"a": [[[[1]]]]}]),
    ({}, [1, "x", [1, {"k": False}], None], [{"a": {"b": {"c": {"d": 1}}}}]),
    ({"type": "object", "properties": {}, "additionalProperties": False}, [{}], [{"a": 1}]),
    ({"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "string"}}, "required": ["b"]},
     [{"b": "x"}, {"a": 1, "b": "x"}], [{}, {"a": 1}, {"b": "x", "a": 1}, {"b": "x", "c": 1}]),
])
def test_schema_forms(schema, accepted, rejected):
    recognizer = Grammar(tool_call_grammar([schema_tool("t", schema)]))
    for value in accepted:
        for ascii_only in (True, False):
            assert recognizer.matches(call("t", {"v": value}, ensure_ascii=ascii_only)), value
    for value in rejected:
        assert not recognizer.matches(call("t", {"v": value})), value


def test_each_tools_defs_are_its_own():
    """Two tools may both define a `Filter`, differently; names that sanitize alike stay apart."""
    tools = [
        schema_tool("a_b", {"$ref": "#/$defs/Filter"}, {"Filter": {
            "type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}),
        schema_tool("a-b", {"$ref": "#/$defs/Filter"}, {"Filter": {
            "type": "object", "properties": {"y": {"type": "string"}}, "required": ["y"]}}),
    ]
    recognizer = Grammar(tool_call_grammar(tools))
    assert recognizer.matches(call("a_b", {"v": {"x": 1}}))
    assert recognizer.matches(call("a-b", {"v": {"y": "s"}}))
    assert not recognizer.matches(call("a_b", {"v": {"y": "s"}}))
    assert not recognizer.matches(call("a-b", {"v": {"x": 1}}))


def test_odd_tool_and_property_names_make_valid_rule_names():
    odd = schema_tool("fetch.page/v2 (beta)", {"type": "object", "properties": {"größe €": {"type": "integer"}}})
    recognizer = Grammar(tool_call_grammar([odd]))
    assert recognizer.matches(call("fetch.page/v2 (beta)", {"v": {"größe €": 1}}, ensure_ascii=False))


@pytest.mark.parametrize(("schema", "keyword"), [
    ({"type": "string", "pattern": "^a"}, "'pattern'"),
    ({"type": "string", "format": "uri"}, "'format'"),
    ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, "'uniqueItems'"),
    ({"type": "object", "additionalProperties": {"type": "integer"}}, "'additionalProperties'"),
    ({"allOf": [{"type": "string"}]}, "'allOf'"),
    ({"type": "integer", "anyOf": [{"type": "integer"}]}, "'anyOf'"),
    ({"properties": {"a": {"type": "integer"}}}, "'properties' without a 'type'"),
    ({"$ref": "#/$defs/Missing"}, "'#/$defs/Missing'"),
    ({"type": "object", "properties": {}, "required": ["a"]}, "'a' is not declared"),
    ({"type": "tuple"}, "'tuple'"),
])
def test_an_unsupported_schema_is_refused_by_name(schema, keyword):
    with pytest.raises(ValueError, match="tool 'lookup'") as raised:
        tool_call_grammar([schema_tool("lookup", schema)])
    assert keyword in str(raised.value)


def test_a_recursive_ref_is_refused():
    node = {"type": "object", "properties": {"child": {"$ref": "#/$defs/Node"}}}
    with pytest.raises(ValueError, match="recursive"):
        tool_call_grammar([schema_tool("tree", {"$ref": "#/$defs/Node"}, {"Node": node})])


def test_a_tool_offered_twice_is_refused():
    with pytest.raises(ValueError, match="offered twice: t"):
        tool_call_grammar([schema_tool("t", {"type": "integer"})] * 2)


def test_without_tools_only_an_answer():
    recognizer = Grammar(tool_call_grammar([]))
    assert recognizer.matches("ANSWER: 42")
    assert not recognizer.matches(call("python", {"code": "1"}))


def test_a_tool_without_parameters_takes_empty_arguments():
    recognizer = Grammar(tool_call_grammar([{"type": "function", "function": {"name": "now", "description": ""}}]))
    assert recognizer.matches(call("now", {}))
    assert not recognizer.matches(call("now", {"zone": "UTC"}))


def test_grammar_sha256_names_the_grammar():
    text = grammar_text("gpus", "tooled")
    assert grammar_sha256(text) == grammar_sha256(tool_call_grammar(arm("gpus", "tooled").schemas()))
    assert grammar_sha256(text) != grammar_sha256(grammar_text("gpus", "browsing"))
    assert len(grammar_sha256(text)) == 64


@pytest.mark.parametrize(("domain", "name"), [(domain, name) for domain in DOMAINS for name in ARMS])
def test_llama_cpp_takes_the_grammar(domain, name):
    llama_cpp = pytest.importorskip("llama_cpp")
    llama_cpp.LlamaGrammar.from_string(grammar_text(domain, name))


@pytest.fixture(scope="module")
def llama_recognizer():
    pytest.importorskip("llama_cpp")
    from tests.support.llama_grammar import LlamaRecognizer

    weights = local_model("qwen2.5-coder-0.5b").path
    if not weights.exists():
        pytest.skip(f"no weights at {weights} (its vocabulary drives llama.cpp's grammar engine)")
    recognizer = LlamaRecognizer(weights)
    yield recognizer
    recognizer.close()


def test_llama_cpp_parses_every_grammar(llama_recognizer):
    unparsed = [(domain, name) for domain in DOMAINS for name in ARMS
                if not llama_recognizer.parses(grammar_text(domain, name))]
    assert not unparsed


def test_llama_cpp_agrees_with_the_recognizer(llama_recognizer):
    """Token by token through llama.cpp's grammar sampler, `<tool_call>` as its one special token."""
    disagree = [reply for domain, name in CHECKED for reply in valid_calls(domain, name) + ANSWERS
                if not llama_recognizer.matches(grammar_text(domain, name), reply)]
    disagree += [why for why, (domain, name, reply) in REJECTED.items()
                 if llama_recognizer.matches(grammar_text(domain, name), reply)]
    assert not disagree, disagree[:3]
