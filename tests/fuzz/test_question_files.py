"""Fuzz: question-set files of any shape load or fail with a UserError, never another exception.

Each example is a file: a real set (two of its questions) with some of its values replaced by values
of the wrong type, null, huge strings or numbers, keys removed or added, dumped as YAML, then
perhaps with bytes spliced in (not UTF-8, NUL, a BOM, YAML syntax); or a file of YAML snippets and
junk alone. It lies at <domain>/<set>.yaml, as `load_set_file` expects, under a temporary folder.
"""
from __future__ import annotations

import copy
import datetime as dt
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from armbench.errors import UserError
from armbench.paths import QUESTIONS_DIR
from armbench.questions import QuestionSet, load_set_file
from tests.fuzz.hostile import FUZZ, examples, hostile_value

EXAMPLES = examples(300)
DUMPER = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's when PyYAML has it: 5 times faster
BASE = yaml.safe_load((QUESTIONS_DIR / "gpus" / "design.yaml").read_text(encoding="utf-8"))
BASE["questions"] = BASE["questions"][:2]

scalar = st.one_of(
    st.none(), st.booleans(), st.integers(), st.just(10**300), st.floats(), hostile_value,
    st.dates(), st.sampled_from([dt.datetime(2020, 1, 1, 12, 30), b"\x00\xff", "x" * 50_000]),
)
junk_tree = st.recursive(scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.one_of(st.text(max_size=8), st.integers()), inner, max_size=3)),
    max_leaves=6)
# Spliced into the YAML text as it is: bytes that are not UTF-8, control bytes, and YAML that
# PyYAML's constructors turn into exceptions of their own (impossible dates, 5,000-digit ints).
SPLICES = [b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00", b"\xef\xbb\xbf", b"\xff\xfe", b"\t", b"\r", b"\x1b",
           b"\n  - ", b": ", b"{", b"[", b"]", b"- ", b"&a ", b"*a", b"*b", b"!!python/object:os.system ", b"!!binary ",
           b"!!float x", b"!!int x", b"!!timestamp 2020-99-99", b"2020-13-45", b"2021-02-30 10:00:00",
           b"9" * 5000, b"? [a, b]\n: c\n", b"---\n", b"...\n", b"%YAML 1.1\n", b"<<: *a\n", b"'", b'"', b"#"]
SNIPPETS = [b"", b"null", b"[]", b"questions:", b"questions: null", b"questions: 5", b"questions: abc",
            b"questions: {a: 1}", b"questions: [1, null, [], {}]", b"domain: gpus\nset: design\nquestions: []",
            b"domain: gpus\nset: design\ncreated: 2020-13-45\nquestions: []", b"questions: [{id: " + b"9" * 5000 + b"}]",
            b"a: &a [*a]", b"[" * 600, b"{a: " * 600, b"- " * 600 + b"x", b"a: b: c", b"\xff\xfe\x00q",
            b"x: !!float nan\nquestions: []", b"questions: !!set {a}"]


def nodes(tree: Any, path: tuple = ()) -> list[tuple]:
    """The path of every node of the tree (keys and indices from the root), the root first."""
    found = [path]
    children = tree.items() if isinstance(tree, dict) else enumerate(tree) if isinstance(tree, list) else ()
    for key, child in children:
        found += nodes(child, (*path, key))
    return found


def mutated(tree: Any, edits: list[tuple[int, str, Any]]) -> Any:
    """The tree after each edit: at the node its number picks, replace the value, drop it from its
    parent, or add a key beside it."""
    tree = copy.deepcopy(tree)
    for pick, action, value in edits:
        paths = nodes(tree)
        path = paths[pick % len(paths)]
        if not path:
            tree = value if action == "replace" else tree
            continue
        parent = tree
        for key in path[:-1]:
            parent = parent[key]
        if action == "replace":
            parent[path[-1]] = value
        elif action == "drop":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[f"extra_{pick % 7}"] = value
        else:
            parent.append(value)
    return tree


def as_yaml(tree: Any) -> bytes:
    try:
        return yaml.dump(tree, Dumper=DUMPER, allow_unicode=True, sort_keys=False).encode("utf-8", "surrogatepass")
    except yaml.YAMLError:  # a value PyYAML cannot write
        return yaml.safe_dump(repr(tree)).encode()


edited = st.builds(mutated, st.just(BASE),
                   st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(["replace", "drop", "add"]), junk_tree),
                            min_size=1, max_size=4)).map(as_yaml)
spliced = st.tuples(edited, st.lists(st.tuples(st.integers(0, 10**6), st.sampled_from(SPLICES)), max_size=3)).map(
    lambda file: splice(*file))
raw = st.one_of(st.sampled_from(SNIPPETS), st.binary(max_size=200),
                st.lists(st.sampled_from(SPLICES + SNIPPETS), max_size=6).map(b"".join))
# Where the file lies: the set it declares, or another place (its domain/set then disagree).
place = st.sampled_from([("gpus", "design"), ("gpus", "heldout"), ("funds", "design"), ("x", "design"), ("gpus", "ø")])


def splice(text: bytes, splices: list[tuple[int, bytes]]) -> bytes:
    for at, piece in splices:
        at %= len(text) + 1
        text = text[:at] + piece + text[at:]
    return text


@pytest.mark.slow
def test_any_question_file_loads_or_is_a_user_error():
    """Property: for 300 generated question files (a real set mutated: wrong types, null, missing
    and unknown keys, huge strings and numbers, bytes that are not UTF-8 or are YAML syntax spliced
    in; or YAML snippets and junk alone), `load_set_file` returns a QuestionSet or raises UserError,
    never any other exception."""
    with tempfile.TemporaryDirectory(prefix="fuzz-questions-") as scratch:

        @settings(FUZZ, max_examples=EXAMPLES)
        @given(st.one_of(edited, edited, spliced, spliced, raw), place)
        def check(content: bytes, where: tuple[str, str]) -> None:
            path = Path(scratch) / where[0] / f"{where[1]}.yaml"
            path.parent.mkdir(exist_ok=True)
            path.write_bytes(content)
            try:
                loaded = load_set_file(path)
            except UserError:
                return
            assert isinstance(loaded, QuestionSet)

        check()
