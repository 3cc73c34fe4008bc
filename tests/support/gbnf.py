"""A small GBNF recognizer for tests: does a whole string match a grammar's `root`?

It plays llama.cpp's part where llama-cpp-python is missing, for the syntax armbench's grammars use
(armbench/models/tool_grammar.py): one rule per line `name ::= ...`, "literals", [classes] and
[^negated classes] with ranges and escapes, rule names, ( groups ), `|`, and the postfixes
`*` `+` `?` `{m}` `{m,}` `{m,n}`. Matching computes the set of positions each piece can end at,
memoized per (rule, start): ambiguity costs a few more positions, never backtracking. A rule that
can end in at most one place from any start (a JSON string's `char`) is matched with one compiled
pattern instead, so a long string's characters are walked by the regex engine, not node by node.
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
        self.one_way = {name: re.compile(pattern) for name, node in self.rules.items()
                        if (pattern := _one_way(node, self.rules, {name})) is not None}

    def matches(self, text: str, rule: str = "root") -> bool:
        return len(text) in _Match(self.rules, self.one_way, text).ends(("ref", rule), 0)


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


def _one_way(node: Node, rules: dict[str, Node], seen: set[str]) -> str | None:
    """A regex for `node` when a match of it from any start can end in one place at most (so the
    regex engine's one match is every match), else None. `seen`: the rules being expanded."""
    kind = node[0]
    if kind == "lit":
        return re.escape(node[1])
    if kind == "cls":
        return node[1].pattern.removesuffix("*")
    if kind == "ref":
        if node[1] in seen:
            return None
        inner = _one_way(rules[node[1]], rules, seen | {node[1]})
        return None if inner is None else f"(?:{inner})"
    if kind == "rep":
        return _repeated(node, rules, seen) if node[2] == node[3] else None
    if kind == "seq":
        parts = []
        for item, after in zip(node[1], node[1][1:] + (None,)):
            part = _one_way(item, rules, seen)
            # A repetition that the next item cannot start where it could go on (a JSON string's
            # `char*` before its closing quote) stops in one place: where it can go no further.
            if part is None and item[0] == "rep" and after is not None and _apart(
                    _first(item[1], rules, seen), _first(after, rules, seen)):
                part = _repeated(item, rules, seen)
            if part is None:
                return None
            parts.append(part)
        return "".join(f"(?:{part})" for part in parts)
    parts = [_one_way(item, rules, seen) for item in node[1]]
    if None in parts:
        return None
    firsts = [_first(option, rules, seen) for option in node[1]]
    exclusive = all(_apart(a, b) for i, a in enumerate(firsts) for b in firsts[i + 1:])
    return "|".join(f"(?:{part})" for part in parts) if exclusive else None


def _repeated(node: Node, rules: dict[str, Node], seen: set[str]) -> str | None:
    """A greedy regex for a repetition of a one-way item, or None."""
    _, item, low, high = node
    inner = _one_way(item, rules, seen)
    return None if inner is None else f"(?:{inner}){{{low},{'' if high is None else high}}}"


def _first(node: Node, rules: dict[str, Node], seen: set[str]) -> tuple[Node, ...] | None:
    """The lit and cls nodes a match of `node` can start with (a lit: its first character), or
    None when a match may be empty (or a rule refers to itself first)."""
    kind = node[0]
    if kind == "lit":
        return (("lit", node[1][:1]),) if node[1] else None
    if kind == "cls":
        return (node,)
    if kind == "ref":
        return None if node[1] in seen else _first(rules[node[1]], rules, seen | {node[1]})
    if kind == "rep":
        return _first(node[1], rules, seen) if node[2] > 0 else None
    if kind == "seq":
        return _first(node[1][0], rules, seen) if node[1] else None
    options = [_first(option, rules, seen) for option in node[1]]
    return None if None in options else tuple(first for option in options for first in option)


def _apart(a: tuple[Node, ...] | None, b: tuple[Node, ...] | None) -> bool:
    """No character starts both: each pair of literals' first characters differ, and each class
    refuses each literal's. (Two classes are not compared: they count as overlapping.)"""
    if a is None or b is None:
        return False
    return all(_nodes_apart(x, y) for x in a for y in b)


def _nodes_apart(a: Node, b: Node) -> bool:
    if a[0] == "cls" and b[0] == "cls":
        return False
    if a[0] == "lit" and b[0] == "lit":
        return a[1] != b[1]
    literal, cls = (a, b) if a[0] == "lit" else (b, a)
    return cls[1].match(literal[1]).end() == 0


class _Match:
    def __init__(self, rules: dict[str, Node], one_way: dict[str, re.Pattern[str]], text: str):
        self.rules, self.one_way, self.text = rules, one_way, text
        self.memo: dict[tuple[str, int], frozenset[int]] = {}

    def ends(self, node: Node, pos: int) -> frozenset[int]:
        """Every position a match of `node` starting at `pos` can end at."""
        kind = node[0]
        if kind == "lit":
            return frozenset({pos + len(node[1])}) if self.text.startswith(node[1], pos) else frozenset()
        if kind == "cls":
            return frozenset({pos + 1}) if node[1].match(self.text, pos, pos + 1).end() > pos else frozenset()
        if kind == "ref":
            if node[1] in self.one_way:
                found = self.one_way[node[1]].match(self.text, pos)
                return frozenset({found.end()}) if found else frozenset()
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
        if item[0] == "ref" and item[1] in self.one_way:  # one step at a time, by the rule's pattern
            return self.steps(self.one_way[item[1]], pos, low, high)
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

    def steps(self, step: re.Pattern[str], pos: int, low: int, high: int | None) -> frozenset[int]:
        """Where `low` to `high` repetitions of a one-way pattern from `pos` end."""
        done = [pos] if low == 0 else []
        count = 0
        while high is None or count < high:
            found = step.match(self.text, pos)
            if found is None:
                break
            if found.end() == pos:  # an empty step: as many more as it takes reach `low`, in place
                return frozenset(done + [pos])
            pos, count = found.end(), count + 1
            if count >= low:
                done.append(pos)
        return frozenset(done)
