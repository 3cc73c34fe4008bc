"""A small GBNF recognizer for tests: does a whole string match a grammar's `root`?

It plays llama.cpp's part where llama-cpp-python is missing, for the syntax armbench's grammars use
(armbench/models/tool_grammar.py): one rule per line `name ::= ...`, "literals", [classes] and
[^negated classes] with ranges and escapes, rule names, ( groups ), `|`, and the postfixes
`*` `+` `?` `{m}` `{m,}` `{m,n}`. Matching computes the set of positions each piece can end at,
memoized per (rule, start): ambiguity costs a few more positions, never backtracking.
"""
from __future__ import annotations

import re

NAME = re.compile(r"[a-zA-Z0-9-]+")
ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]"}  # as llama.cpp reads them
HEX_DIGITS = {"x": 2, "u": 4, "U": 8}

# Nodes: ("lit", text) ("cls", a compiled pattern matching a run of the class's characters)
# ("ref", name) ("seq", items) ("alt", options) ("rep", node, min, max or None)
Node = tuple


class GrammarError(ValueError):
    pass


class Grammar:
    def __init__(self, text: str):
        self.rules: dict[str, Node] = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            name, separator, body = line.partition("::=")
            name = name.strip()
            if not separator or not NAME.fullmatch(name):
                raise GrammarError(f"line {number}: not a rule: {line!r}")
            if name in self.rules:
                raise GrammarError(f"line {number}: rule {name!r} defined twice")
            self.rules[name] = _Reader(body, number).rule()
        if undefined := sorted(_refs(self.rules.values()) - set(self.rules)):
            raise GrammarError(f"undefined rules: {', '.join(undefined)}")
        if "root" not in self.rules:
            raise GrammarError("no root rule")

    def matches(self, text: str, rule: str = "root") -> bool:
        return len(text) in _Match(self.rules, text).ends(("ref", rule), 0)


class _Reader:
    """Parses one rule's body."""

    def __init__(self, text: str, line: int):
        self.text, self.pos, self.line = text, 0, line

    def error(self, problem: str) -> GrammarError:
        return GrammarError(f"line {self.line}, column {self.pos}: {problem}: {self.text!r}")

    def peek(self) -> str:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def rule(self) -> Node:
        node = self.alternatives()
        if self.peek():
            raise self.error("unexpected text")
        return node

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.peek() == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else ("alt", tuple(options))

    def sequence(self) -> Node:
        items = []
        while self.peek() not in ("", "|", ")"):
            items.append(self.postfix(self.atom()))
        return ("seq", tuple(items))

    def atom(self) -> Node:
        first = self.text[self.pos]
        if first == '"':
            self.pos += 1
            chars = []
            while self.text[self.pos] != '"':
                chars.append(self.char())
            self.pos += 1
            return ("lit", "".join(chars))
        if first == "[":
            return self.char_class()
        if first == "(":
            self.pos += 1
            node = self.alternatives()
            if self.peek() != ")":
                raise self.error("missing )")
            self.pos += 1
            return node
        name = NAME.match(self.text, self.pos)
        if not name:
            raise self.error("expected a literal, a class, a group or a rule name")
        self.pos = name.end()
        return ("ref", name.group())

    def char_class(self) -> Node:
        self.pos += 1
        negated = self.text[self.pos] == "^"
        self.pos += negated
        ranges = []
        while self.text[self.pos] != "]":
            low = self.char()
            high = low
            if self.text[self.pos] == "-" and self.text[self.pos + 1] != "]":
                self.pos += 1
                high = self.char()
            ranges.append((low, high))
        self.pos += 1
        members = "".join(re.escape(low) if low == high else f"{re.escape(low)}-{re.escape(high)}" for low, high in ranges)
        return ("cls", re.compile(f"[{'^' if negated else ''}{members}]*"))

    def char(self) -> str:
        if self.pos >= len(self.text):
            raise self.error("unterminated literal or class")
        first = self.text[self.pos]
        self.pos += 1
        if first != "\\":
            return first
        escaped = self.text[self.pos]
        self.pos += 1
        if escaped in HEX_DIGITS:
            digits = self.text[self.pos:self.pos + HEX_DIGITS[escaped]]
            self.pos += len(digits)
            return chr(int(digits, 16))
        if escaped not in ESCAPES:
            raise self.error(f"unknown escape \\{escaped}")
        return ESCAPES[escaped]

    def postfix(self, node: Node) -> Node:
        while True:
            mark = self.peek()
            if mark in ("*", "+", "?"):
                self.pos += 1
                node = ("rep", node, 0 if mark != "+" else 1, 1 if mark == "?" else None)
            elif mark == "{":
                bounds = re.compile(r"\{(\d+)(,(\d*))?\}").match(self.text, self.pos)
                if not bounds:
                    raise self.error("bad {m,n}")
                self.pos = bounds.end()
                low = int(bounds.group(1))
                high = low if not bounds.group(2) else int(bounds.group(3)) if bounds.group(3) else None
                node = ("rep", node, low, high)
            else:
                return node


def _refs(nodes) -> set[str]:
    found = set()
    for node in nodes:
        if node[0] == "ref":
            found.add(node[1])
        elif node[0] in ("seq", "alt"):
            found |= _refs(node[1])
        elif node[0] == "rep":
            found |= _refs([node[1]])
    return found


class _Match:
    def __init__(self, rules: dict[str, Node], text: str):
        self.rules, self.text = rules, text
        self.memo: dict[tuple[str, int], frozenset[int]] = {}

    def ends(self, node: Node, pos: int) -> frozenset[int]:
        """Every position a match of `node` starting at `pos` can end at."""
        kind = node[0]
        if kind == "lit":
            return frozenset({pos + len(node[1])}) if self.text.startswith(node[1], pos) else frozenset()
        if kind == "cls":
            return frozenset({pos + 1}) if node[1].match(self.text, pos, pos + 1).end() > pos else frozenset()
        if kind == "ref":
            key = (node[1], pos)
            if key not in self.memo:
                self.memo[key] = self.ends(self.rules[node[1]], pos)
            return self.memo[key]
        if kind == "alt":
            return frozenset().union(*(self.ends(option, pos) for option in node[1]))
        if kind == "seq":
            positions = frozenset({pos})
            for item in node[1]:
                positions = frozenset().union(*(self.ends(item, p) for p in positions))
            return positions
        return self.repeat(node, pos)

    def repeat(self, node: Node, pos: int) -> frozenset[int]:
        _, item, low, high = node
        if item[0] == "cls":  # a run of characters: as far as the class (and `high`) allows, in one step
            end = len(self.text) if high is None else pos + high
            return frozenset(range(pos + low, item[1].match(self.text, pos, end).end() + 1))
        done = {pos} if low == 0 else set()
        frontier, count = {pos}, 0
        while frontier and (high is None or count < high):
            frontier = set().union(*(self.ends(item, p) for p in frontier))
            count += 1
            if count >= low:
                # A position already reached with enough repetitions can go as far from there as
                # from here (with more repetitions left), so it is not followed again.
                frontier -= done
                done |= frontier
        return frozenset(done)
