"""A GBNF grammar that holds a local model to one offered tool call or a final `ANSWER:` reply.

llama.cpp samples only what the grammar allows, so a small model cannot invent a tool, send
arguments its schema forbids, or trail off without answering. Each turn's output is either
exactly one call in Qwen2.5's native form,

    <tool_call>
    {"name": "<an offered tool>", "arguments": {...valid against that tool's schema...}}
    </tool_call>

or up to MAX_TEXT_LINES short lines of text and a last line `ANSWER: <text>`. No text line may
start with "<" (a reply cannot open a tool call and then deviate), "{", "[" or "`": a call written
as bare JSON or in a code fence is how a small model leaves the tool unused, and it would pass as
text (the first constrained trial did exactly that, for 512 tokens).

The arguments' grammar is converted here from each tool's JSON schema, for the subset the arms'
tools use (pydantic's output). A keyword outside it raises ValueError: the grammar may be stricter
than a schema (no additional properties, bounded lists and numbers), never looser, except for the
numeric bounds `minimum`/`maximum` and oneOf's exclusivity, which the tool still checks itself.
Every repetition a model could loop on is bounded, except a string's characters where the schema
sets no maxLength (a python tool's code): those only the generation's max_tokens ends.

Pure Python: llama-cpp-python is needed only to use the grammar (`LlamaGrammar.from_string`).
"""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_ITEMS = 12  # a list without maxItems (a small model otherwise repeats a value until out of tokens)
MAX_WS = 20  # whitespace characters between two JSON tokens
MAX_DIGITS = 16  # digits of a number's integer part, and of its fraction
MAX_FREE_DEPTH = 3  # nesting of a free-form value (an object schema without declared properties)
MAX_TEXT_LINES = 4  # lines of text before the ANSWER line
MAX_TEXT_LINE_CHARS = 300
MAX_ANSWER_CHARS = 1_000

TOOL_CALL_OPEN = "<tool_call>\n"
TOOL_CALL_CLOSE = "\n</tool_call>"
ANSWER_PREFIX = "ANSWER: "

# Keywords that only describe a value. Numeric bounds are among them: a grammar for number ranges
# would be large, and the tool rejects an out-of-range value with a message the model can act on.
IGNORED = frozenset({"title", "description", "default", "examples",
                     "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"})
# Keywords that shape a value; a schema node may use only these (and IGNORED).
SHAPING = frozenset({"type", "properties", "required", "additionalProperties", "items", "minItems",
                     "maxItems", "minLength", "maxLength", "enum", "const", "anyOf", "oneOf", "$ref"})
COMBINATORS = ("anyOf", "oneOf", "$ref")
DEFS_PREFIX = "#/$defs/"

PRIMITIVES: dict[str, tuple[str, tuple[str, ...]]] = {  # name -> (body, the primitives it uses)
    "ws": (f"[ \\t\\n]{{0,{MAX_WS}}}", ()),
    "char": (r'[^"\\\x00-\x1F\x7F] | "\\" ( ["\\/bfnrt] | "u" [0-9a-fA-F]{4} )', ()),
    "string": (r'"\"" char* "\""', ("char",)),
    "integer": (f'"-"? ( "0" | [1-9] [0-9]{{0,{MAX_DIGITS - 1}}} )', ()),
    "number": (f'integer ( "." [0-9]{{1,{MAX_DIGITS}}} )? ( [eE] [-+]? [0-9]{{1,3}} )?', ("integer",)),
    "boolean": ('"true" | "false"', ()),
    "null": ('"null"', ()),
}
FREE = tuple(f"json-{kind}-{depth}" for kind in ("value", "object", "array") for depth in range(MAX_FREE_DEPTH + 1))
ANSWER = f'text-line{{0,{MAX_TEXT_LINES}}} "{ANSWER_PREFIX}" [^\\n]{{1,{MAX_ANSWER_CHARS}}}'
TEXT_LINE = f'[^<{{[`\\n] [^\\n]{{0,{MAX_TEXT_LINE_CHARS - 1}}} "\\n"'
RESERVED = frozenset({"root", "tool-call", "answer", "text-line", *PRIMITIVES, *FREE})
LITERAL_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def tool_call_grammar(tools: list[dict[str, Any]], *, answer: bool = True) -> str:
    """The GBNF grammar (root rule `root`) for one call of any of `tools` (OpenAI-style tool
    dicts, as offered to the model) or, with `answer`, a final ANSWER reply (without it, a call is
    required: tool_choice "required"). ValueError names the tool and the keyword when a schema
    uses anything this converter does not support."""
    names = [tool["function"]["name"] for tool in tools]
    if duplicated := sorted({name for name in names if names.count(name) > 1}):
        raise ValueError(f"tools offered twice: {', '.join(duplicated)}")
    builder = _Builder()
    calls = [builder.call(tool) for tool in tools]
    top = {"root": ("tool-call | answer" if answer else "tool-call") if calls else "answer"}
    if calls:
        top["tool-call"] = f"{literal(TOOL_CALL_OPEN)} ( {' | '.join(calls)} ) {literal(TOOL_CALL_CLOSE)}"
    rules = {**top, "answer": ANSWER, "text-line": TEXT_LINE, **builder.rules}
    return "".join(f"{name} ::= {body}\n" for name, body in rules.items())


def grammar_sha256(grammar: str) -> str:
    return hashlib.sha256(grammar.encode()).hexdigest()


def literal(text: str) -> str:
    """`text` as a GBNF string literal."""
    escaped = "".join(LITERAL_ESCAPES.get(c) or (f"\\x{ord(c):02X}" if ord(c) < 0x20 else c) for c in text)
    return f'"{escaped}"'


def json_literal(value: Any) -> str:
    """The GBNF literal of `value` written as JSON: an enum value, a const, a property key."""
    return literal(json.dumps(value, ensure_ascii=False))


def rule_name(hint: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", hint).strip("-") or "rule"


@dataclass
class _Tool:
    """Where a conversion is: the tool (for names and errors) and its own `$defs`."""

    name: str
    defs: dict[str, Any]
    done: dict[str, str] = field(default_factory=dict)  # def name -> its expression
    open: set[str] = field(default_factory=set)  # defs being converted (a recursive $ref is refused)
    by_body: dict[str, str] = field(default_factory=dict)  # the tool's rules, by body -> name

    def hint(self, path: str) -> str:
        """A rule name's stem: the tool, then where in its arguments ("" is the arguments object)."""
        return rule_name(f"{self.name}-{path or 'arguments'}")

    def error(self, path: str, problem: str) -> ValueError:
        return ValueError(f"tool {self.name!r}: {problem} at {path or '(arguments)'}")


class _Builder:
    """Collects the rules of every tool; a tool's identical rules are written once."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def call(self, tool: dict[str, Any]) -> str:
        """The rule for one call of `tool`: `{"name": ..., "arguments": ...}`."""
        function = tool["function"]
        name = function["name"]
        parameters = function.get("parameters", {"type": "object", "properties": {}})
        context = _Tool(name, parameters.get("$defs", {}))
        if parameters.get("type") != "object":
            raise context.error("", "the arguments' schema is not an object")
        self.primitive("ws")  # between any two JSON tokens, so every tool's rules use it
        arguments = self.value({k: v for k, v in parameters.items() if k != "$defs"}, context, "")
        return self.rule(context, "call", f'"{{" ws {json_literal("name")} ws ":" ws {json_literal(name)} ws "," ws '
                                          f'{json_literal("arguments")} ws ":" ws {arguments} ws "}}"')

    def rule(self, tool: _Tool, path: str, body: str) -> str:
        """A rule of `tool` for `body` (its existing one if it has one with that body); its name."""
        if body in tool.by_body:
            return tool.by_body[body]
        name = base = tool.hint(path)
        suffix = 1
        while name in self.rules or name in RESERVED:
            suffix += 1
            name = f"{base}-{suffix}"
        self.rules[name] = body
        tool.by_body[body] = name
        return name

    def primitive(self, name: str) -> str:
        body, uses = PRIMITIVES[name]
        for used in uses:
            self.primitive(used)
        self.rules.setdefault(name, body)
        return name

    def value(self, schema: dict[str, Any], tool: _Tool, path: str) -> str:
        """A GBNF expression (usually a rule's name) for the values `schema` allows."""
        unknown = sorted(set(schema) - SHAPING - IGNORED)
        if unknown:
            raise tool.error(path, f"unsupported JSON schema keyword {unknown[0]!r}")
        shaping = set(schema) & SHAPING
        combinator = [key for key in COMBINATORS if key in schema]
        if combinator and len(shaping) > 1:
            raise tool.error(path, f"{combinator[0]!r} beside {sorted(shaping - {combinator[0]})} (unsupported)")
        if "$ref" in schema:
            return self.ref(schema["$ref"], tool, path)
        if combinator:
            key = combinator[0]  # oneOf as anyOf: pydantic emits it for unions whose branches are disjoint
            options = [self.value(option, tool, f"{path}/{key}/{i}") for i, option in enumerate(schema[key])]
            return self.rule(tool, path, " | ".join(options))
        if "const" in schema:
            return json_literal(schema["const"])
        if "enum" in schema:
            return self.rule(tool, path, " | ".join(json_literal(value) for value in schema["enum"]))
        kind = schema.get("type")
        if isinstance(kind, list):
            options = [self.value({**schema, "type": one}, tool, f"{path}/{one}") for one in kind]
            return self.rule(tool, path, " | ".join(options))
        if kind is None:
            if shaping:
                raise tool.error(path, f"{sorted(shaping)[0]!r} without a 'type' (unsupported)")
            return self.free_value(MAX_FREE_DEPTH)
        if kind == "object":
            return self.object(schema, tool, path)
        if kind == "array":
            return self.array(schema, tool, path)
        if kind == "string":
            return self.string(schema, tool, path)
        if kind in ("number", "integer", "boolean", "null"):
            return self.primitive(kind)
        raise tool.error(path, f"unsupported type {kind!r}")

    def ref(self, ref: str, tool: _Tool, path: str) -> str:
        name = ref.removeprefix(DEFS_PREFIX)
        if not ref.startswith(DEFS_PREFIX) or name not in tool.defs:
            raise tool.error(path, f"$ref {ref!r} is not one of the tool's $defs")
        if name in tool.open:
            raise tool.error(path, f"recursive $ref {ref!r} (unsupported)")
        if name not in tool.done:
            tool.open.add(name)
            tool.done[name] = self.value(tool.defs[name], tool, f"/$defs/{name}")
            tool.open.discard(name)
        return tool.done[name]

    def object(self, schema: dict[str, Any], tool: _Tool, path: str) -> str:
        """Declared properties in schema order, each optional one omissible, and no others."""
        extra = schema.get("additionalProperties", True)
        if not isinstance(extra, bool):
            raise tool.error(path, "'additionalProperties' as a schema (unsupported)")
        if "properties" not in schema and extra:
            return self.free_object(MAX_FREE_DEPTH)  # free-form: any object
        properties = schema.get("properties", {})
        required = schema.get("required", [])
        if missing := sorted(set(required) - set(properties)):
            raise tool.error(path, f"required property {missing[0]!r} is not declared")
        members = [
            (self.rule(tool, f"{path}/{key}-kv",
                       f'{json_literal(key)} ws ":" ws {self.value(sub, tool, f"{path}/{key}")}'), key in required)
            for key, sub in properties.items()
        ]
        starts = []  # one alternative per property that can come first: all before it are omitted
        for first, (member, needed) in enumerate(members):
            rest = [f'( ws "," ws {later} ){"" if later_needed else "?"}' for later, later_needed in members[first + 1:]]
            starts.append(" ".join(["ws", member, *rest]))
            if needed:
                break
        if not starts:
            inside = []
        elif any(needed for _, needed in members):
            inside = [starts[0] if len(starts) == 1 else f"( {' | '.join(starts)} )"]
        else:
            inside = [f"( {' | '.join(starts)} )?"]
        return self.rule(tool, path, " ".join(['"{"', *inside, 'ws "}"']))

    def array(self, schema: dict[str, Any], tool: _Tool, path: str) -> str:
        low, high = schema.get("minItems", 0), schema.get("maxItems", MAX_ITEMS)
        if low > high:
            raise tool.error(path, f"minItems {low} > maxItems {high}")
        if high == 0:
            return self.rule(tool, path, '"[" ws "]"')
        item = self.value(schema.get("items", {}), tool, f"{path}/items")
        items = f'{item} ( ws "," ws {item} ){{{max(low - 1, 0)},{high - 1}}}' if high > 1 else item
        body = f'"[" ws {items} ws "]"' if low else f'"[" ( ws {items} )? ws "]"'
        return self.rule(tool, path, body)

    def string(self, schema: dict[str, Any], tool: _Tool, path: str) -> str:
        if "minLength" not in schema and "maxLength" not in schema:
            return self.primitive("string")
        self.primitive("char")
        low, high = schema.get("minLength", 0), schema.get("maxLength", "")
        return self.rule(tool, path, f'"\\"" char{{{low},{high}}} "\\""')

    def free_value(self, depth: int) -> str:
        """Any JSON value nested at most `depth` deep: what a schema without a shape allows."""
        name = f"json-value-{depth}"
        if name not in self.rules:
            scalars = [self.primitive(kind) for kind in ("string", "number", "boolean", "null")]
            nested = [self.free_object(depth), self.free_array(depth)] if depth else []
            self.rules[name] = " | ".join(scalars + nested)
        return name

    def free_object(self, depth: int) -> str:
        name = f"json-object-{depth}"
        if name not in self.rules:
            member = f'{self.primitive("string")} ws ":" ws {self.free_value(depth - 1)}'
            self.rules[name] = f'"{{" ( ws {member} ( ws "," ws {member} ){{0,{MAX_ITEMS - 1}}} )? ws "}}"'
        return name

    def free_array(self, depth: int) -> str:
        name = f"json-array-{depth}"
        if name not in self.rules:
            item = self.free_value(depth - 1)
            self.rules[name] = f'"[" ( ws {item} ( ws "," ws {item} ){{0,{MAX_ITEMS - 1}}} )? ws "]"'
        return name
