"""Site-tool parity: a domain's replica site and its typed tool hold the same rows.

The study compares browsing a site with querying a tool over the same rows, so the comparison is
fair only where both hold the same things. A field the tool filters on that no page shows makes
browsing impossible, not harder; a row the site shows that the tool lacks (say, national totals)
makes a question answerable by browsing and silently wrong through the tool.

A domain's **site reader**, `armbench/domains/<name>/site_reader.py`, reads its replica into rows.
It imports the standard library and the reading kit (reading.py) only, so it also runs inside the
python sandbox (where a question's browsing solution can be derived from it). It defines:

    TOOL = "crash_query"            # the typed tool whose rows the site shows
    KEY = ("state", "year")         # the tool fields that name one row
    OUT_OF_TOOL = {"national": "No national totals"}
        # what the site shows on purpose that the tool does not hold: a reason -> a phrase of the
        # tool's description that tells the model so (checked here)
    TOOL_ONLY = {"relevance": "the website never shows it"}   # optional
        # tool fields no page shows on purpose -> a phrase of the tool's description that says so
    def read_site(base: str) -> list[dict]: ...
        # every row the site shows, by the tool's field names; a row the tool does not hold on
        # purpose has "out_of_tool": <a reason of OUT_OF_TOOL>. Values as the site shows them:
        # text (numbers as displayed, "1,234.5"; dates as ISO text, "2020-03-17", or the part the
        # site shows, "2020-03"), True/False for a yes/no, None for a value shown as missing.
        # Rows of one key from several pages (a year page, a state page) are merged here.
    TABLE = "crashes"               # optional: the replica table the rows are, which derived
        # browsing solutions (questions.derived_solution) name in their SQL
    def read_site(base: str, scope: dict | None = None) -> list[dict]: ...
        # optional `scope` (field -> value, a derived solution's): read only what the site's own
        # filters give for it (the rows in it, and any others the filters let through)

`check_parity(domain, base)` reads the site and compares it with the tool's rows (a tool that
answers from rows has `table`, its TableFields, and `frame()`, its rows): every tool row is on the
site, every site row is a tool row or declared out of the tool, and every tool field of every row
is on the site with the same value, to the precision the site shows.
"""
from __future__ import annotations

import importlib.util
import math
import re
import sys
import time
import unicodedata
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from armbench.domains import reading
from armbench.domains.spec import Domain
from armbench.errors import UserError

STANDALONE_DROPS = re.compile(r"^from (armbench\.domains\.reading|__future__) import .*\n", re.M)
READER_FILE = "site_reader.py"
EXAMPLES = 3  # rows named per kind of problem; the rest are counted
NUMBER_NOISE = re.compile(r"[,$%\s]|&nbsp;")
MISSING_ON_SITE = object()


@dataclass
class Parity:
    domain: str
    tool: str
    site_rows: int = 0
    tool_rows: int = 0
    seconds: float = 0.0
    found: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))  # kind of problem -> examples

    def add(self, kind: str, example: str) -> None:
        self.found[kind].append(example)

    @property
    def problems(self) -> list[str]:
        lines = []
        for kind, examples in self.found.items():
            more = f" (and {len(examples) - EXAMPLES} more)" if len(examples) > EXAMPLES else ""
            lines.append(f"{self.domain}: {kind}: {len(examples)} row(s), e.g. {'; '.join(examples[:EXAMPLES])}{more}")
        return lines

    @property
    def summary(self) -> str:
        return (f"{self.domain}: the site ({self.site_rows:,} rows read in {self.seconds:.1f} s) and {self.tool} "
                f"({self.tool_rows:,} rows) hold the same rows and values")


def site_reader(domain: Domain) -> Any | None:
    """The domain's site reader module (its folder's site_reader.py), or None when it has none."""
    path = reader_path(domain)
    if not path.is_file():
        return None
    name = f"armbench_site_reader_{domain.name}"
    if name not in sys.modules:  # loaded by path: a domain may live outside armbench (ARMBENCH_DOMAINS_DIR)
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules[name] = module
    return sys.modules[name]


def reader_path(domain: Domain) -> Path:
    return domain.tables.directory.parent / READER_FILE


def reader_source(domain: Domain) -> str:
    """The reader as one standalone script, for the python sandbox (no armbench there): the reading
    kit's text, then the reader's without its imports of the kit and of __future__ (which only
    the first line of a script may have)."""
    reader = site_reader(domain)
    if reader is None:
        raise UserError(f"domain {domain.name!r} has no site reader (armbench/domains/{domain.name}/site_reader.py)")
    return standalone_source(reader_path(domain))


def standalone_source(path: Path) -> str:
    """The reader at `path` as one script: the reading kit's text, then the reader's own."""
    own = STANDALONE_DROPS.sub("", path.read_text(encoding="utf-8"))
    return Path(reading.__file__).read_text(encoding="utf-8") + "\n\n" + own


def tool_of(domain: Domain) -> Any:
    """The tool the domain's site reader reads the rows of (TOOL): one that answers from rows."""
    reader = site_reader(domain)
    tool = next((cls for cls in domain.tool_classes() if cls.name == reader.TOOL), None) if reader else None
    if tool is None or not hasattr(tool, "table"):
        raise UserError(f"{domain.name}'s site reader names no tool of its that answers from rows "
                        "(a `table` and a `frame()`)")
    return tool


def check_parity(domain: Domain, base: str) -> Parity:
    """Read the site at `base` with the domain's reader and compare it with its tool's rows."""
    reader = site_reader(domain)
    if reader is None:
        raise UserError(f"domain {domain.name!r} has no site reader (armbench/domains/{domain.name}/site_reader.py)")
    tool = tool_of(domain)
    parity = Parity(domain.name, reader.TOOL)
    started = time.monotonic()
    site = read_rows(reader, base, parity)
    parity.seconds = time.monotonic() - started
    kinds = tool.table.kinds
    rows = {key_of(row, reader.KEY): row for row in tool.frame().select(list(kinds)).to_dicts()}
    parity.tool_rows = len(rows)
    tool_only = getattr(reader, "TOOL_ONLY", {})
    for phrase in [*reader.OUT_OF_TOOL.values(), *tool_only.values()]:
        if phrase not in tool.description:
            parity.add("declared out of the site or the tool, but the tool's description does not say so",
                       f"{phrase!r} is not in {reader.TOOL}'s description")
    for name in tool_only.keys() - kinds.keys():
        parity.add("declared as a tool field no page shows, but the tool has no such field", name)
    for key in site:
        if key not in rows:
            parity.add("on the site, not in the tool", describe(reader.KEY, key))
    for key, row in rows.items():
        shown = site.get(key)
        if shown is None:
            parity.add("in the tool, on no page", describe(reader.KEY, key))
            continue
        for name, kind in kinds.items():
            if name in tool_only:
                continue
            value = shown.get(name, MISSING_ON_SITE)
            if value is MISSING_ON_SITE:
                parity.add(f"tool field {name} is on no page", describe(reader.KEY, key))
            elif not same_value(kind, value, row[name]):
                parity.add(f"{name} differs", f"{describe(reader.KEY, key)}: site {value!r}, tool {row[name]!r}")
    return parity


def read_rows(reader: Any, base: str, parity: Parity) -> dict[tuple[str, ...], dict[str, Any]]:
    """The site's rows by key, merged across pages; out-of-tool rows checked against the declaration."""
    merged: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in reader.read_site(base.rstrip("/")):
        parity.site_rows += 1
        reason = row.get("out_of_tool")
        if reason is not None:
            if reason not in reader.OUT_OF_TOOL:
                parity.add("marked out of the tool for an undeclared reason", f"{reason!r}")
            continue
        key = key_of(row, reader.KEY)
        into = merged.setdefault(key, {})
        for name, value in row.items():
            if name in into and not same_shown(into[name], value):
                parity.add(f"the site shows two values of {name}", f"{describe(reader.KEY, key)}: "
                                                                   f"{into[name]!r} and {value!r}")
            into.setdefault(name, value)
    return merged


def key_of(row: dict[str, Any], key: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(key_text(row.get(name)) for name in key)


def key_text(value: Any) -> str:
    """One spelling of a key value on both sides: 2013, 2013.0 and "2,013" are "2013"."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = normal_text(str(value))
    number = as_decimal(text)
    return format(number.normalize(), "f") if number is not None and re.fullmatch(r"[\d,]+", text) else text


def describe(key: tuple[str, ...], values: tuple[str, ...]) -> str:
    return ", ".join(f"{name}={value}" for name, value in zip(key, values))


def normal_text(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).split())


def as_decimal(text: str) -> Decimal | None:
    try:
        return Decimal(NUMBER_NOISE.sub("", text).replace("\u2212", "-"))
    except InvalidOperation:
        return None


def missing(value: Any) -> bool:
    return value is None or isinstance(value, float) and math.isnan(value)


def same_value(kind: str, shown: Any, value: Any) -> bool:
    """Whether the site's `shown` value is the tool's `value`, to the precision the site shows."""
    if missing(value) or shown is None:
        return missing(value) and shown is None
    if kind == "boolean":
        return shown is bool(value)
    if kind == "number":
        number = as_decimal(str(shown))
        if number is None:
            return False
        exponent = number.as_tuple().exponent
        decimals = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return abs(float(number) - float(value)) <= 0.5 * 10 ** -decimals + 1e-9 * abs(float(value))
    if kind == "date":
        return str(value).startswith(normal_text(str(shown)))
    return normal_text(str(shown)) == normal_text(str(value))


def same_shown(a: Any, b: Any) -> bool:
    return normal_text(str(a)) == normal_text(str(b)) if a is not None and b is not None else a is b
